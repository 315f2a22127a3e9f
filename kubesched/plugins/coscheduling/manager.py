"""PodGroupManager: what Coscheduling remembers about groups between scheduling cycles.

As in scheduler-plugins' ``core`` package: which pods of a group are assigned (passed Permit or are
bound), which groups recently passed the minResources check (kept for the permit timeout) or were
backed off, and when each group last failed (it then sorts after groups that did not).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta

from kubesched.api.objects import Pod
from kubesched.api.podgroup import POD_GROUP_LABEL, PodGroup, pod_group_full_name
from kubesched.cache.node_info import NodeInfo


class _ExpiringSet:
    """Names that expire after a time to live (go-cache's Add/Get/Delete as Coscheduling uses it)."""

    def __init__(self, now: Callable[[], datetime]) -> None:
        self._now = now
        self._until: dict[str, datetime] = {}

    def add(self, name: str, ttl: timedelta) -> None:
        self._until[name] = self._now() + ttl

    def __contains__(self, name: str) -> bool:
        until = self._until.get(name)
        if until is None:
            return False
        if until <= self._now():
            del self._until[name]
            return False
        return True

    def discard(self, name: str) -> None:
        self._until.pop(name, None)


class PodGroupManager:
    def __init__(
        self,
        now: Callable[[], datetime],
        schedule_timeout: timedelta,
        get_group: Callable[[str, str], PodGroup | None],
        list_members: Callable[[str, str], list[Pod]],
    ) -> None:
        self._now = now
        self.schedule_timeout = schedule_timeout
        self._get_group = get_group
        self._list_members = list_members
        self.permitted = _ExpiringSet(now)
        self.backed_off = _ExpiringSet(now)
        self.last_failed: dict[str, datetime] = {}
        #: Group full name -> names of pods that passed Permit (bound pods are counted on top).
        self._assigned: dict[str, set[str]] = {}
        self._lock = threading.RLock()

    # -- lookups -------------------------------------------------------------------------------------
    def get_pod_group(self, pod: Pod) -> tuple[str, PodGroup | None]:
        """The pod's group full name ("" when it names none) and the group (None when not found)."""
        full = pod_group_full_name(pod)
        if not full:
            return "", None
        return full, self._get_group(pod.namespace, pod.labels[POD_GROUP_LABEL])

    def members(self, pod: Pod) -> list[Pod]:
        return self._list_members(pod.namespace, pod.labels.get(POD_GROUP_LABEL, ""))

    def assigned_count(self, pod: Pod) -> int:
        full = pod_group_full_name(pod)
        return len(self._assigned_names(full, self.members(pod)))

    def _assigned_names(self, full: str, members: Iterable[Pod]) -> set[str]:
        """Permitted pods still in the group, plus every bound member (the pod informer's view)."""
        existing = {p.name for p in members}
        bound = {p.name for p in members if p.node_name}
        with self._lock:
            permitted = self._assigned.get(full, set())
            permitted &= existing
            return permitted | bound

    def creation_time(self, pod: Pod, fallback: datetime) -> datetime:
        full, group = self.get_pod_group(pod)
        if not full:
            return fallback
        failed = self.last_failed.get(full)
        if failed is not None:
            return failed
        if group is None or group.creation_timestamp is None:
            return fallback
        return group.creation_timestamp

    # -- extension points' state ---------------------------------------------------------------------
    def permit(self, pod: Pod, group: PodGroup) -> tuple[bool, bool]:
        """Count ``pod`` as assigned: (whether the group reached minMember, whether it is the first)."""
        full = group.full_name
        with self._lock:
            assigned = self._assigned_names(full, self.members(pod))
            assigned.add(pod.name)
            self._assigned[full] = assigned
            return len(assigned) >= group.min_member, len(assigned) == 1

    def unreserve(self, pod: Pod) -> None:
        full = pod_group_full_name(pod)
        with self._lock:
            assigned = self._assigned.get(full)
            if assigned is not None:
                assigned.discard(pod.name)
                if not assigned:
                    del self._assigned[full]

    def mark_failure(self, full: str) -> None:
        self.last_failed[full] = self._now()

    def clear_failure(self, full: str) -> None:
        self.last_failed.pop(full, None)


def check_cluster_resource(nodes: Iterable[NodeInfo], wanted: Mapping[str, int], group_full_name: str) -> str:
    """ "" when the nodes' free room (counting the group's own pods as free) covers ``wanted``;
    otherwise the resource gap, as scheduler-plugins words it."""
    gap = {name: value for name, value in wanted.items() if value > 0}
    for info in nodes:
        node = info.node
        if node is None or not gap:
            continue
        own = [p for p in info.pods if pod_group_full_name(p) == group_full_name]
        for name in list(gap):
            if name == "pods":
                free = node.allocatable.get("pods", 0) - (len(info.pods) - len(own))
            else:
                used = info.requested.get(name, 0) - sum(p.requests.get(name, 0) for p in own)
                free = node.allocatable.get(name, 0) - used
            left = gap[name] - free
            if left <= 0:
                del gap[name]
            else:
                gap[name] = left
        if not gap:
            return ""
    if not gap:
        return ""
    return "resource gap: " + ", ".join(f"{k}={v}" for k, v in sorted(gap.items()))
