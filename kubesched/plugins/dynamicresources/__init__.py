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
from kubesched.framework.interfaces import ClusterEvent, PostFilterResult, PreFilterResult
from kubesched.framework.status import Code, Status, unresolvable
from kubesched.plugins import names

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

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return ()


def new(args: Any, handle: Handle) -> DynamicResources:
    return DynamicResources()
