"""DynamicResources: devices a pod asks for through ResourceClaims (resource.k8s.io), allocated by the scheduler.

kube-scheduler v1.34 runs it in the default profile (DynamicResourceAllocation is GA and on). For a pod
without claims it does nothing but say so, and what it says shows in every failure message: its
PostFilter runs before DefaultPreemption and answers "no new claims to deallocate", which joins the
preemption text; when an earlier PreFilter stopped the cycle before this plugin's PreFilter ran, its
PostFilter finds no state and fails with "not found", and preemption never runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    PostFilterResult,
    PreFilterResult,
    QueueingHint,
    queueing_hints_enabled,
)
from kubesched.framework.status import Code, Status, unresolvable
from kubesched.plugins import names
from kubesched.queue import events as qevents
from kubesched.queue.hints import object_meta

NAME = names.DYNAMIC_RESOURCES
STATE_KEY = "PreFilter" + NAME


@dataclass(slots=True)
class _State:
    """What PreFilter learnt of the pod's claims (none, for now: pods with claims are refused there)."""

    claims: tuple[str, ...] = ()

    def clone(self) -> _State:
        return self


def claim_names(pod: Pod) -> tuple[str, ...]:
    """The names of the pod's ``spec.resourceClaims`` entries."""
    claims = (pod.raw.get("spec") or {}).get("resourceClaims") or ()
    return tuple(str(c.get("name") or "") for c in claims if isinstance(c, dict))


class DynamicResources:
    name = NAME

    def __init__(self, queueing_hints: bool = True) -> None:
        self.queueing_hints = queueing_hints

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        claims = claim_names(pod)
        state.write(STATE_KEY, _State(claims))
        if not claims:
            return None, Status(Code.SKIP)
        return None, unresolvable("resource claims are not allocated by kubesched yet")

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status | None:
        return None

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status: dict[str, Status]) -> tuple[PostFilterResult | None, Status | None]:
        data: _State | None = state.get(STATE_KEY)
        if data is None:
            return None, Status(Code.ERROR, ("not found",))
        return None, Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",))

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        """v1.34's registrations: nodes (topology, capacity), the pod's claims and its generated
        claims, device classes and slices. (v1.30 profiles do not run this plugin.)"""
        if not self.queueing_hints:
            return ()
        add_update = ActionType.ADD | ActionType.UPDATE
        return (
            ClusterEvent(qevents.NODE,
                         ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE),
            ClusterEventWithHint(ClusterEvent(qevents.RESOURCE_CLAIM, add_update), is_schedulable_after_claim_change),
            ClusterEventWithHint(ClusterEvent(qevents.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                                 is_schedulable_after_pod_change),
            ClusterEvent(qevents.DEVICE_CLASS, add_update),
            ClusterEvent(qevents.RESOURCE_SLICE, add_update),
        )


def pod_claim_names(pod: Pod) -> frozenset[str] | None:
    """The names of the claims the pod uses: named ones, and generated ones recorded in its status;
    None while a template's claim is not generated yet (the pod cannot be scheduled then)."""
    generated = {str(s.get("name")): s.get("resourceClaimName")
                 for s in (pod.raw.get("status") or {}).get("resourceClaimStatuses") or () if isinstance(s, dict)}
    names_: set[str] = set()
    for claim in (pod.raw.get("spec") or {}).get("resourceClaims") or ():
        if not isinstance(claim, dict):
            continue
        name = claim.get("resourceClaimName") or generated.get(str(claim.get("name")))
        if not name:
            return None
        names_.add(str(name))
    return frozenset(names_)


def is_schedulable_after_claim_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A claim deallocated (its devices are free again), or one of the pod's claims created or with a
    changed status."""
    claims = pod_claim_names(pod)
    if claims is None:
        return QueueingHint.QUEUE_SKIP
    if old_obj is not None and (old_obj.get("status") or {}).get("allocation") is not None \
            and (new_obj.get("status") or {}).get("allocation") is None:
        return QueueingHint.QUEUE
    namespace, name = object_meta(new_obj)
    if namespace != pod.namespace or name not in claims:
        return QueueingHint.QUEUE_SKIP
    if old_obj is None:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP if old_obj.get("status") == new_obj.get("status") else QueueingHint.QUEUE


def is_schedulable_after_pod_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """The pod itself, now that all its claims are named."""
    if new_obj.uid != pod.uid:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if pod_claim_names(new_obj) is not None else QueueingHint.QUEUE_SKIP


def new(args: Any, handle: Handle) -> DynamicResources:
    return DynamicResources(queueing_hints_enabled(handle))
