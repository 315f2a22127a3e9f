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
        ref.get("controller") is True and ref.get("uid") == pod.uid for ref in claim.meta.owner_references)


def pod_claims(pod: Pod, tracker: ClaimTracker) -> list[ResourceClaim]:
    """foreachPodResourceClaim: the claims of ``spec.resourceClaims`` in order (a template's claim that
    the pod does not need is left out); ClaimsUnavailable when one cannot be used yet."""
    try:
        entries = pod_resource_claims(pod.raw)
    except ObjectError as err:
        raise ClaimsUnavailable(str(err)) from None
    claims: list[ResourceClaim] = []
    for entry in entries:
        try:
            name, must_own = claim_name(pod.raw, entry)
            if name is None:
                continue
            claim = tracker.get(pod.namespace, name)
        except (ClaimNotCreated, ClaimNotFound, ObjectError) as err:
            raise ClaimsUnavailable(str(err)) from None
        if claim.meta.deletion_timestamp is not None:
            raise ClaimsUnavailable(f'resourceclaim "{claim.name}" is being deleted')
        if must_own and not is_for_pod(pod, claim):
            raise ClaimsUnavailable(f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                                    f"{pod.namespace}/{pod.name} (pod is not owner)")
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
