"""Coscheduling: all-or-nothing scheduling of pod groups, as kubernetes-sigs/scheduler-plugins does it.

A group's pods sort together (priority, then the group's creation time, or its last failure). PreFilter
turns a pod away while its group has fewer than minMember pods (or a gated one), or while the
cluster's free room cannot hold the group's minResources. Permit holds each assumed member until
minMember of them are assumed, then lets them all go; when the wait times out, or one member cannot
be placed (PostFilter), or a member is unreserved, every waiting member of the group is rejected,
so a gang that cannot fit never holds resources for longer than its timeout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.objects import Pod
from kubesched.api.podgroup import KIND, PodGroup, pod_group_full_name
from kubesched.framework.cycle_state import PODS_TO_ACTIVATE_KEY, CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import ActionType, ClusterEvent, PostFilterResult, PreFilterResult
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.plugins.coscheduling.manager import PodGroupManager, check_cluster_resource
from kubesched.queue.queued_pod_info import QueuedPodInfo

NAME = "Coscheduling"
#: scheduler-plugins' defaults for CoschedulingArgs.
DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
DEFAULT_POD_GROUP_REJECT_PERCENTAGE = 10
_ACTIVATE_SIBLINGS = "Coscheduling/activate-siblings"


class Coscheduling:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        args = dict(args or {})
        permit_wait = _int_arg(args, "permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_TIME_SECONDS)
        backoff = _int_arg(args, "podGroupBackoffSeconds", DEFAULT_POD_GROUP_BACKOFF_SECONDS)
        reject = _int_arg(args, "podGroupRejectPercentage", DEFAULT_POD_GROUP_REJECT_PERCENTAGE)
        if reject > 100:
            raise ValueError(f"pluginConfig[{NAME}].args.podGroupRejectPercentage: must be in [0, 100], got {reject}")
        unknown = sorted(
            set(args)
            - {"permitWaitingTimeSeconds", "podGroupBackoffSeconds", "podGroupRejectPercentage", "apiVersion", "kind"}
        )
        if unknown:
            raise ValueError(f"pluginConfig[{NAME}].args: unknown field {unknown[0]!r}")
        self.handle = handle
        self._groups: dict[tuple[str, str], tuple[Any, PodGroup | None]] = {}
        self.schedule_timeout = float(permit_wait)
        self.backoff = float(backoff)
        self.reject_threshold = reject / 100.0
        self.manager = PodGroupManager(
            handle.clock, timedelta(seconds=permit_wait), self._get_group, self._list_members
        )

    def _get_group(self, namespace: str, name: str) -> PodGroup | None:
        raw = self.handle.listers.get(KIND, namespace, name)
        if raw is None:
            return None
        # Parsed once per version: QueueSort asks for the group at every comparison.
        version = (raw.get("metadata") or {}).get("resourceVersion")
        cached = self._groups.get((namespace, name))
        if cached is not None and cached[0] == version and version is not None:
            return cached[1]
        try:
            group: PodGroup | None = PodGroup.from_dict(raw)
        except ObjectError:
            group = None  # a malformed group is as good as none: its pods wait with a reason
        self._groups[(namespace, name)] = (version, group)
        return group

    def _list_members(self, namespace: str, name: str) -> list[Pod]:
        return self.handle.list_pods(namespace, {"scheduling.x-k8s.io/pod-group": name}) if name else []

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return [ClusterEvent("Pod", ActionType.ADD), ClusterEvent(KIND, ActionType.ADD | ActionType.UPDATE)]

    # -- QueueSort -----------------------------------------------------------------------------------
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Higher priority first; then the earlier group (creation, or last failure); then by group and
        name, so that members of groups created at the same moment still sort together."""
        pa, pb = a.pod.priority, b.pod.priority
        if pa != pb:
            return pa > pb
        ta = self.manager.creation_time(a.pod, a.initial_attempt_timestamp or a.timestamp)
        tb = self.manager.creation_time(b.pod, b.initial_attempt_timestamp or b.timestamp)
        if ta != tb:
            return ta < tb
        return (pod_group_full_name(a.pod), a.pod.key) < (pod_group_full_name(b.pod), b.pod.key)

    # -- PreFilter -----------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        message = self._pre_filter(pod)
        if message:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))
        return None, None

    def _pre_filter(self, pod: Pod) -> str:
        full, group = self.manager.get_pod_group(pod)
        if group is None:
            return ""
        if full in self.manager.backed_off:
            return f"podGroup {full} failed recently"
        members = self.manager.members(pod)
        if len(members) < group.min_member:
            return (
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods number: "
                f"{len(members)}, minMember of group: {group.min_member}"
            )
        gap = group.min_member - len(members)
        for member in members:
            if member.scheduling_gates:
                gap += 1
            if gap > 0:
                return f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup"
        if not group.min_resources or full in self.manager.permitted:
            return ""
        wanted = dict(group.min_resources)
        wanted["pods"] = group.min_member
        gap_message = check_cluster_resource(self.handle.snapshot.node_infos, wanted, full)
        if gap_message:
            return gap_message
        self.manager.permitted.add(full, self.manager.schedule_timeout)
        return ""

    def pre_filter_extensions(self) -> None:
        return None

    # -- PostFilter ----------------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: dict[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        full, group = self.manager.get_pod_group(pod)
        if group is None:
            return PostFilterResult("", mode="noop"), Status(Code.UNSCHEDULABLE, ("can not find pod group",))
        assigned = self.manager.assigned_count(pod)
        if assigned >= group.min_member:
            return PostFilterResult("", mode="noop"), Status(Code.UNSCHEDULABLE)
        not_assigned = (group.min_member - assigned) / group.min_member
        if not_assigned <= self.reject_threshold:
            return PostFilterResult("", mode="noop"), Status(Code.UNSCHEDULABLE)
        self._reject_waiting(full, "optimistic rejection in PostFilter")
        if self.backoff > 0 and len(self.manager.members(pod)) >= group.min_member:
            self.manager.backed_off.add(full, timedelta(seconds=self.backoff))
        self.manager.permitted.discard(full)
        self.manager.mark_failure(full)
        return PostFilterResult("", mode="noop"), Status(
            Code.UNSCHEDULABLE,
            (f"PodGroup {full} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter",),
        )

    # -- Reserve / Permit ----------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        full, group = self.manager.get_pod_group(pod)
        if group is None:
            return
        self.manager.unreserve(pod)
        self._reject_waiting(full, "rejection in Unreserve")
        self.manager.permitted.discard(full)
        self.manager.mark_failure(full)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        full, group = self.manager.get_pod_group(pod)
        if not full:
            return None, 0
        if group is None:
            return Status(Code.UNSCHEDULABLE, ("PodGroup not found",)), 0
        complete, first = self.manager.permit(pod, group)
        if complete:
            self.manager.clear_failure(full)
            self.handle.iterate_over_waiting_pods(
                lambda w: w.allow(NAME) if pod_group_full_name(w.get_pod()) == full else None
            )
            return None, 0
        if first:
            state.write(_ACTIVATE_SIBLINGS, True)
        self._activate_siblings(state, pod)
        timeout = self.schedule_timeout
        if group.schedule_timeout_seconds is not None:
            timeout = float(group.schedule_timeout_seconds)
        return Status(Code.WAIT), timeout

    def _activate_siblings(self, state: CycleState, pod: Pod) -> None:
        """The first member to wait pulls its siblings out of backoff, so the gang forms quickly."""
        if not state.get(_ACTIVATE_SIBLINGS):
            return
        to_activate = state.get(PODS_TO_ACTIVATE_KEY)
        if to_activate is None:
            return
        for member in self.manager.members(pod):
            if member.uid != pod.uid:
                to_activate.add(member)

    def _reject_waiting(self, full: str, message: str) -> None:
        def reject(waiting: WaitingPod) -> None:
            if pod_group_full_name(waiting.get_pod()) == full:
                waiting.reject(NAME, message)

        self.handle.iterate_over_waiting_pods(reject)


def _int_arg(args: Mapping[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"pluginConfig[{NAME}].args.{key}: expected a non-negative integer, got {value!r}")
    return value


def new(args: Any, handle: Handle) -> Coscheduling:
    return Coscheduling(args, handle)
