"""A pod's ResourceClaims, and what one scheduling cycle learns about them (the plugin's CycleState).

A pod names its claims in ``spec.resourceClaims``: directly (``resourceClaimName``) or through a
template, whose claim the resourceclaim controller makes for the pod and records in the pod's
``status.resourceClaimStatuses``. Until every such claim exists, belongs to the pod (when made from a
template) and is not being deleted, the pod cannot be scheduled; :func:`pod_claims` says why, in
kube-scheduler's words.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.api.dra import AllocationResult, ClaimNotCreated, ResourceClaim, claim_name, pod_resource_claims
from kubesched.api.errors import ObjectError
from kubesched.api.labels import NodeSelector
from kubesched.api.objects import Pod
from kubesched.plugins.dynamicresources.allocator import Allocator
from kubesched.plugins.dynamicresources.device_counts import NodeCounts
from kubesched.plugins.dynamicresources.dra_manager import ClaimNotFound, ClaimTracker


class ClaimsUnavailable(Exception):
    """The pod's claims cannot all be used now; the message is the status text."""


def has_claims(pod: Pod) -> bool:
    """Cheap: whether the pod names any claim at all (most pods do not)."""
    spec = pod.raw.get("spec")
    return isinstance(spec, dict) and bool(spec.get("resourceClaims"))


def is_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """resourceclaim.IsForPod: same namespace, and the pod is the claim's controller."""
    return claim.namespace == pod.namespace and any(
        ref.get("controller") is True and ref.get("uid") == pod.uid for ref in claim.meta.owner_references
    )


#: What a pod's ``spec.resourceClaims`` and ``status.resourceClaimStatuses`` name, per entry: the claim's
#: name and whether the pod must own it, or why it cannot be known (the ClaimsUnavailable text); or,
#: alone, the text of a ``spec.resourceClaims`` that cannot be read.
ClaimNames = tuple[tuple[str | None, bool] | str, ...] | str

#: By pod uid: the pod object read, and its claim names (read once per version of the pod, since the
#: queue's hints, PreEnqueue and PreFilter all ask).
_NAMES: dict[str, tuple[object, ClaimNames]] = {}
_NAMES_MAX = 1 << 15


def claim_names(pod: Pod) -> ClaimNames:
    """The names behind the pod's claims (resourceclaim.Name for each entry), from the pod alone."""
    found = _NAMES.get(pod.uid)
    if found is not None and found[0] is pod.raw:
        return found[1]
    names: ClaimNames
    try:
        entries = pod_resource_claims(pod.raw)
    except ObjectError as err:
        names = str(err)
    else:
        out: list[tuple[str | None, bool] | str] = []
        for entry in entries:
            try:
                out.append(claim_name(pod.raw, entry))
            except (ClaimNotCreated, ObjectError) as err:
                out.append(str(err))
        names = tuple(out)
    if len(_NAMES) >= _NAMES_MAX:
        _NAMES.clear()
    _NAMES[pod.uid] = (pod.raw, names)
    return names


def waits_for_pod(pod: Pod) -> bool:
    """Whether the pod alone keeps its claims from being usable (a template's claim not recorded in its
    status yet, an entry that cannot be read): until the pod changes, :func:`pod_claims` fails whatever
    the claims are."""
    names = claim_names(pod)
    return isinstance(names, str) or any(isinstance(entry, str) for entry in names)


def pod_claims(pod: Pod, tracker: ClaimTracker) -> list[ResourceClaim]:
    """foreachPodResourceClaim: the claims of ``spec.resourceClaims`` in order (a template's claim that
    the pod does not need is left out); ClaimsUnavailable when one cannot be used yet."""
    names = claim_names(pod)
    if isinstance(names, str):
        raise ClaimsUnavailable(names)
    claims: list[ResourceClaim] = []
    for entry in names:
        if isinstance(entry, str):
            raise ClaimsUnavailable(entry)
        name, must_own = entry
        if name is None:
            continue
        try:
            claim = tracker.get(pod.namespace, name)
        except ClaimNotFound as err:
            raise ClaimsUnavailable(str(err)) from None
        if claim.meta.deletion_timestamp is not None:
            raise ClaimsUnavailable(f'resourceclaim "{claim.name}" is being deleted')
        if must_own and not is_for_pod(pod, claim):
            raise ClaimsUnavailable(
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)"
            )
        claims.append(claim)
    return claims


@dataclass(slots=True)
class ClaimInfo:
    """informationForClaim: where an allocated claim's devices are, and what Reserve chose for it."""

    available_on_nodes: NodeSelector | None = None
    allocation: AllocationResult | None = None


class NodeAllocations(dict[str, list[AllocationResult]]):
    """Filter's allocation per node, in the order of the claims to allocate. On the nodes the free-device
    counts alone passed (``counted``), an allocation is worked out when first asked for (Reserve) by the
    cycle's allocator: the search Filter would have run, on the same inputs, so the same devices."""

    __slots__ = ("allocator", "claims", "counted")

    def __init__(self) -> None:
        super().__init__()
        self.allocator: Allocator | None = None
        self.claims: Sequence[ResourceClaim] = ()
        #: Filled by Filter without a lock: set.add is atomic.
        self.counted: set[str] = set()

    def __missing__(self, node_name: str) -> list[AllocationResult]:
        found = None
        if self.allocator is not None and node_name in self.counted:
            found = self.allocator.allocate(node_name, {}, self.claims)
        if found is None:
            raise KeyError(node_name)
        self[node_name] = found
        return found


@dataclass(slots=True)
class StateData:
    """What PreFilter learnt, shared by every clone of the cycle state (Filter writes into it).

    ``claims`` stays empty when the plugin has nothing to do for the pod (no claims, or PreFilter
    stopped before the end), which is what PostFilter's "no new claims to deallocate" rests on.
    """

    claims: list[ResourceClaim] = field(default_factory=list)
    infos: list[ClaimInfo] = field(default_factory=list)
    allocator: Allocator | None = None
    #: Filter's verdict by free-device counts, when the claims to allocate allow it.
    counts: NodeCounts | None = None
    #: Allocated claims some node could not reach (Filter); PostFilter may deallocate one of them.
    unavailable: set[int] = field(default_factory=set)
    #: Filter's allocation per node, in the order of the claims to allocate.
    node_allocations: NodeAllocations = field(default_factory=NodeAllocations)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clone(self) -> StateData:
        return self

    def to_allocate(self) -> list[tuple[int, ResourceClaim]]:
        """The claims without an allocation, with their index."""
        return [(i, c) for i, c in enumerate(self.claims) if c.allocation is None]
