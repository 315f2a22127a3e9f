"""Cluster events into the scheduler, routed as kube-scheduler's eventhandlers.go routes them.

Nodes go to the cache, and each change that may help a pod waiting for a node (one added, a label,
taint, allocatable or condition changed) moves the unschedulable pods it can help. Bound pods go to
the cache; pending pods whose ``schedulerName`` has a profile go to the scheduling queue; terminal
pods count as deleted. The listed kinds (storage, namespaces, DRA objects, ...) go to the listers,
and kinds plugins register events for (Coscheduling's PodGroup) also to the queue. An object the
scheduler cannot read is reported (a log line and an Event) and ignored; a handler never stops the
watch.

The emulated version decides what reaches the queue. v1.30 pre-checks node events against each pod
(resources, node name, affinity, ports, taints) and moves only pods whose required affinity a newly
bound pod matches. v1.34 (SchedulerQueueingHints) leaves that to the plugins' hints: every event goes
to the queue, updates say exactly what changed, a node deletion is an event, and a pending pod that
held a nominated node and loses it (deleted, bound, or renominated) frees that room for the pods of
no higher priority.

:class:`PodStore` is the scheduler's informer view of pods: the latest version of every pod it knows,
with a label index for the plugins' listings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.frozen import evolve
from kubesched.api.node_affinity import RequiredNodeAffinity
from kubesched.api.objects import Node, Pod, parse_time, pod_like, resize_status
from kubesched.api.resources import V1_34_RULES, ResourceRules
from kubesched.api.taints import find_untolerated_taint
from kubesched.cache.cache import Cache
from kubesched.cache.node_info import NodeInfo
from kubesched.cluster.listers import LISTED_KINDS, Listers
from kubesched.cluster.protocol import WatchEvent
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.framework.runtime import Framework
from kubesched.klog import Logger, kobj
from kubesched.plugins import nodename, nodeports
from kubesched.plugins.noderesources import fit as noderesources_fit
from kubesched.profile.events import ClusterEventRecorder
from kubesched.queue import events as qevents
from kubesched.queue.scheduling_queue import SchedulingQueue

log = logging.getLogger(__name__)
#: kube-scheduler's "Add event for ..." lines, at their verbosity.
logger = Logger(__name__)

_ACTIONS = {"ADDED": ActionType.ADD, "MODIFIED": ActionType.UPDATE, "DELETED": ActionType.DELETE}


class PodStore:
    """Every pod the scheduler knows, pending and bound, by uid; indexed by (namespace, label, value)."""

    __slots__ = ("_by_label", "_pods")

    def __init__(self) -> None:
        self._pods: dict[str, Pod] = {}
        self._by_label: dict[tuple[str, str, str], set[str]] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def get(self, uid: str) -> Pod | None:
        return self._pods.get(uid)

    def current(self, pod: Pod) -> Pod | None:
        """The latest version of ``pod`` (None once it is deleted or terminal)."""
        return self._pods.get(pod.uid)

    def by_key(self, key: str) -> Pod | None:
        """The pod named ``namespace/name`` (a scan: for drivers, not for the scheduling cycle)."""
        return next((p for p in self._pods.values() if p.key == key), None)

    def all(self) -> list[Pod]:
        return list(self._pods.values())

    def list(self, namespace: str | None = None, labels: Mapping[str, str] | None = None) -> list[Pod]:
        """Pods in ``namespace`` and with ``labels`` when given; through the index when both are."""
        if namespace is not None and labels:
            sets = [self._by_label.get((namespace, k, v), set()) for k, v in labels.items()]
            uids = set.intersection(*sets) if len(sets) > 1 else sets[0]
            return [self._pods[uid] for uid in sorted(uids, key=lambda u: self._pods[u].key)]
        return [
            p
            for p in self._pods.values()
            if (namespace is None or p.namespace == namespace)
            and all(p.labels.get(k) == v for k, v in (labels or {}).items())
        ]

    def remember(self, pod: Pod) -> None:
        """Keep ``pod`` as the latest version of itself."""
        uid = pod.uid
        old = self._pods.get(uid)
        if old is not None and old.labels is not pod.labels:
            self._unindex(old)
        self._pods[uid] = pod
        for key, value in pod.labels.items():
            self._by_label.setdefault((pod.namespace, key, value), set()).add(uid)

    def forget(self, uid: str) -> Pod | None:
        """Drop the pod (and its labels from the index); the version forgotten, if there was one."""
        pod = self._pods.pop(uid, None)
        if pod is not None:
            self._unindex(pod)
        return pod

    def _unindex(self, pod: Pod) -> None:
        for key, value in pod.labels.items():
            uids = self._by_label.get((pod.namespace, key, value))
            if uids is not None:
                uids.discard(pod.uid)
                if not uids:
                    del self._by_label[(pod.namespace, key, value)]


class EventHandlers:
    """The scheduler's watch handlers: one :meth:`handle` per watch event."""

    def __init__(
        self,
        *,
        cache: Cache,
        queue: SchedulingQueue,
        pods: PodStore,
        listers: Listers,
        profiles: Mapping[str, Framework],
        extra_kinds: Collection[str],
        events: ClusterEventRecorder,
        rules: ResourceRules = V1_34_RULES,
        features: FeatureGates | None = None,
    ) -> None:
        self.cache = cache
        #: How pods' requests add up (the emulated release's rules): every pod is read with them.
        self.rules = rules
        self.queue = queue
        self.pods = pods
        self.listers = listers
        self.profiles = profiles
        #: Kinds plugins register events for beyond the built-in ones: listed, and sent to the queue.
        self.extra_kinds = frozenset(extra_kinds)
        self.events = events
        features = features or feature_gates()
        #: SchedulerQueueingHints: events as v1.34 produces them, judged by the plugins' hints.
        self.hints = features.enabled("SchedulerQueueingHints")
        #: Node deletions and lost nominations are events (v1.34, whatever the gates).
        self.v134 = features.at_least("1.34")
        self._dra = features.enabled("DynamicResourceAllocation")

    def handle(self, event: WatchEvent) -> None:
        """Route one watch event the way kube-scheduler's informer handlers do."""
        try:
            if event.kind == "Node":
                self._on_node(event)
            elif event.kind == "Pod":
                self._on_pod(event)
            elif event.kind in LISTED_KINDS or event.kind in self.extra_kinds:
                self._on_listed(event)
        except Exception:
            # A handler bug must never stop the watch: log and carry on.
            log.exception("handling %s %s event failed", event.kind, event.type)

    def _on_listed(self, event: WatchEvent) -> None:
        try:
            self.listers.apply(event.type, event.kind, event.obj)
        except ObjectError as err:
            name = (event.obj.get("metadata") or {}).get("name", "?")
            log.error("ignoring malformed %s %s: %s", event.kind, name, err)
            return
        cluster_event = self._cluster_event(event)
        if cluster_event is None:
            return
        if event.type == "DELETED":
            self.queue.move_all_to_active_or_backoff_queue(cluster_event, event.obj, None, None)
        else:
            self.queue.move_all_to_active_or_backoff_queue(cluster_event, event.old, event.obj, None)

    def _cluster_event(self, event: WatchEvent) -> ClusterEvent | None:
        """What a listed kind's change means to the queue: v1.30 only storage additions and updates;
        v1.34 every change of a kind the queue hears (only those some plugin registered matter)."""
        if event.kind in self.extra_kinds and event.kind not in qevents.KIND_RESOURCES:
            action = _ACTIONS.get(event.type, ActionType.UPDATE)
            return ClusterEvent(event.kind, action, f"{event.kind}{event.type.capitalize()}")
        if self.hints:
            return qevents.watch_event(event.kind, event.type)
        return qevents.STORAGE_EVENTS.get((event.kind, event.type))

    # -- nodes ---------------------------------------------------------------------------------------------
    def _on_node(self, event: WatchEvent) -> None:
        node = self._parse_node(event.obj)
        if node is None:
            return
        if event.type == "DELETED":
            if self.v134:
                self.queue.move_all_to_active_or_backoff_queue(qevents.EventNodeDelete, node, None, None)
            if v := logger.v(3):
                v.info("Delete event for node", "node", kobj(node))
            self.cache.remove_node(node)
            return
        if event.type == "ADDED" or event.old is None:
            if v := logger.v(3):
                v.info("Add event for node", "node", kobj(node))
            info = self.cache.add_node(node)
            added = qevents.EventNodeAdd if self.hints else qevents.NodeAdd
            self.queue.move_all_to_active_or_backoff_queue(added, None, node, self._pre_check(info))
            return
        old = self._parse_node(event.old)
        if v := logger.v(4):
            v.info("Update event for node", "node", kobj(node))
        info = self.cache.update_node(old, node)
        if old is None:
            changes = [qevents.EventNodeAdd if self.hints else qevents.NodeAdd]
        elif self.hints:
            changes = qevents.node_scheduling_properties_change(node, old)
        else:
            changes = node_scheduling_properties_changes(old, node)
        for change in changes:
            self.queue.move_all_to_active_or_backoff_queue(change, old, node, self._pre_check(info))

    def _pre_check(self, info: NodeInfo) -> Callable[[Pod], bool] | None:
        """v1.30's cheap admission check of a node event; v1.34 leaves it to the plugins' hints."""
        return None if self.hints else pre_check_for_node(info)

    def _parse_node(self, obj: Mapping[str, Any]) -> Node | None:
        try:
            return Node.from_dict(obj)
        except ObjectError as err:
            name = (obj.get("metadata") or {}).get("name", "?")
            log.error("ignoring malformed node %s: %s", name, err)
            self.events.object_event("Node", "", name, "Warning", "FailedToParse", f"node ignored: {err}")
            return None

    # -- pods ----------------------------------------------------------------------------------------------
    def _on_pod(self, event: WatchEvent) -> None:
        if event.type == "DELETED":
            self._on_pod_deleted(event.obj)
            return
        uid = _uid_of(event.obj)
        known = self.pods.get(uid)
        new = rebound(known, event.obj) if event.type == "MODIFIED" and known is not None else None
        if new is None:
            new = self._parse_pod(event.obj, report=True)
        if new is None:
            # A pod we cannot read is not scheduled; forget any earlier, readable version of it.
            stale = self.pods.forget(uid)
            if stale is not None:
                self._pod_gone(stale)
            return
        old = known  # new.uid is uid: both read metadata.uid as a string
        if new.is_terminal:
            # Terminal pods are invisible to the scheduler (as if deleted).
            self.pods.forget(new.uid)
            if old is not None:
                self._pod_gone(old)
            return
        self.pods.remember(new)
        if new.node_name:
            self._on_assigned_pod(old, new)
        elif self._responsible_for(new):
            self._on_pending_pod(old, new)

    def _on_pod_deleted(self, obj: Mapping[str, Any]) -> None:
        # The last version seen is what leaves; a pod never seen leaves as the deleted object says.
        gone = self.pods.forget(_uid_of(obj))
        if gone is None:
            gone = self._parse_pod(obj, report=False)
            if gone is None:
                return
        self._pod_gone(gone)

    def _on_assigned_pod(self, old: Pod | None, new: Pod) -> None:
        if old is not None and old.node_name:
            if v := logger.v(4):
                v.info("Update event for scheduled pod", "pod", kobj(old))
            self.cache.update_pod(old, new)
            if not self.hints:
                self.queue.assigned_pod_updated(old, new)
                return
            for change in qevents.pod_scheduling_properties_change(new, old, dra=self._dra):
                self.queue.move_all_to_active_or_backoff_queue(change, old, new, None)
            return
        pending = old if old is not None and self._responsible_for(old) else None
        if pending is not None and not self.hints:
            self._delete_from_queue(pending)  # bound (by us or someone else): no longer pending
        if v := logger.v(3):
            v.info("Add event for scheduled pod", "pod", kobj(new))
        self.cache.add_pod(new)
        if not self.hints:
            self.queue.assigned_pod_added(new)
            return
        # v1.34: every unschedulable pod hears it (its plugins' hints decide), then the pending pod
        # it was leaves the queue (its nomination with it).
        self.queue.move_all_to_active_or_backoff_queue(qevents.EventAssignedPodAdd, None, new, None)
        if pending is not None:
            self._delete_from_queue(pending)

    def _on_pending_pod(self, old: Pod | None, new: Pod) -> None:
        if old is None:
            if v := logger.v(3):
                v.info("Add event for unscheduled pod", "pod", kobj(new))
            self.queue.add(new)
        elif old.meta.resource_version != new.meta.resource_version and not self.cache.is_assumed(new):
            if v := logger.v(4):
                v.info("Update event for unscheduled pod", "pod", kobj(new))
            self.queue.update(old, new)
            if self.v134 and old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
                # Its old nominated node was held for it against pods of no higher priority.
                self._nomination_released(old)

    def _parse_pod(self, obj: Mapping[str, Any], *, report: bool) -> Pod | None:
        try:
            return Pod.from_dict(obj, self.rules)
        except ObjectError as err:
            if report:
                meta = obj.get("metadata") or {}
                ns, name = meta.get("namespace", "default"), meta.get("name", "?")
                log.error("pod %s/%s is malformed and stays pending: %s", ns, name, err)
                self.events.object_event(
                    "Pod",
                    ns,
                    name,
                    "Warning",
                    "FailedScheduling",
                    f"pod is malformed and cannot be scheduled: {err}",
                    uid=str(meta.get("uid") or ""),
                )
            return None

    def _responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    def _pod_gone(self, pod: Pod) -> None:
        if pod.node_name:
            if v := logger.v(3):
                v.info("Delete event for scheduled pod", "pod", kobj(pod))
            self.cache.remove_pod(pod)
            deleted = qevents.EventAssignedPodDelete if self.hints else qevents.AssignedPodDelete
            self.queue.move_all_to_active_or_backoff_queue(deleted, pod, None, None)
        elif self._responsible_for(pod):
            self._delete_from_queue(pod)

    def _delete_from_queue(self, pod: Pod) -> None:
        if v := logger.v(3):
            v.info("Delete event for unscheduled pod", "pod", kobj(pod))
        self.queue.delete(pod)
        fwk = self.profiles.get(pod.scheduler_name)
        deleted = qevents.EventAssignedPodDelete if self.hints else qevents.AssignedPodDelete
        if fwk is not None and fwk.reject_waiting_pod(pod.uid):
            self.queue.move_all_to_active_or_backoff_queue(deleted, pod, None, None)
        elif self.v134 and pod.nominated_node_name:
            self._nomination_released(pod)

    def _nomination_released(self, pod: Pod) -> None:
        """A pod that held a nominated node no longer does: for pods of its priority or lower, the
        room it held there is free (v1.34 treats this as a deletion of an assigned pod)."""
        deleted = qevents.EventAssignedPodDelete if self.hints else qevents.AssignedPodDelete
        priority = pod.priority
        self.queue.move_all_to_active_or_backoff_queue(deleted, pod, None, lambda other: other.priority <= priority)


def _uid_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


#: Pod fields a binding or a status update writes without changing what the scheduler parses from them.
_REWRITTEN_META = frozenset({"resourceVersion", "managedFields"})
_REWRITTEN_SPEC = frozenset({"nodeName"})


def rebound(old: Pod, raw: Mapping[str, Any]) -> Pod | None:
    """``old`` with ``raw``'s node name, resourceVersion and start time, when nothing else the scheduler
    parses changed (a binding, a condition update); None when ``raw`` must be parsed afresh.

    Every pod is bound once and most get a status update: comparing dicts is far cheaper than parsing."""
    spec, old_spec = raw.get("spec"), old.raw.get("spec")
    meta, old_meta = raw.get("metadata"), old.raw.get("metadata")
    status, old_status = raw.get("status") or {}, old.raw.get("status") or {}
    if not (
        isinstance(spec, dict)
        and isinstance(old_spec, dict)
        and isinstance(meta, dict)
        and isinstance(old_meta, dict)
        and isinstance(status, dict)
        and isinstance(old_status, dict)
    ):
        return None
    if not _equal_except(spec, old_spec, _REWRITTEN_SPEC) or not _equal_except(meta, old_meta, _REWRITTEN_META):
        return None
    if status.get("phase") != old_status.get("phase"):
        return None
    if status.get("nominatedNodeName") != old_status.get("nominatedNodeName"):
        return None
    if resize_status(status) != resize_status(old_status):
        return None  # what containers report about their resources can change what the pod counts for
    node_name = spec.get("nodeName") or ""
    if not isinstance(node_name, str):
        return None
    start_time = old.start_time
    if status.get("startTime") != old_status.get("startTime"):  # a binding stamps it
        try:
            start_time = parse_time(status.get("startTime"), "status.startTime")
        except ObjectError:
            return None  # parsed afresh, and reported
    meta_now = evolve(old.meta, resource_version=str(meta.get("resourceVersion") or ""))
    return pod_like(old, raw, meta_now, node_name, old.phase, old.nominated_node_name, start_time)


def _equal_except(new: Mapping[str, Any], old: Mapping[str, Any], skip: frozenset[str]) -> bool:
    """Whether the two mappings are equal leaving out the keys in ``skip`` (as comparing copies without
    them would say, without making the copies)."""
    missing = object()
    kept = 0
    for key, value in new.items():
        if key in skip:
            continue
        kept += 1
        before = old.get(key, missing)
        if before is missing or not (value is before or value == before):
            return False
    for key in skip:  # a loop: a generator costs more than the one or two keys it counts
        if key in old:
            kept += 1
    return kept == len(old)


def node_scheduling_properties_changes(old: Node, new: Node) -> list[ClusterEvent]:
    """Every scheduling-relevant difference between two versions of a node, as cluster events."""
    events: list[ClusterEvent] = []
    if old.unschedulable and not new.unschedulable:
        events.append(qevents.NodeSpecUnschedulableChange)
    if old.allocatable != new.allocatable:
        events.append(qevents.NodeAllocatableChange)
    if old.labels != new.labels:
        events.append(qevents.NodeLabelChange)
    if old.taints != new.taints:
        events.append(qevents.NodeTaintChange)
    old_conditions = (old.raw.get("status") or {}).get("conditions")
    new_conditions = (new.raw.get("status") or {}).get("conditions")
    if _strip_heartbeats(old_conditions) != _strip_heartbeats(new_conditions):
        events.append(qevents.NodeConditionChange)
    if old.meta.annotations != new.meta.annotations:
        events.append(qevents.NodeAnnotationChange)
    return events


def _strip_heartbeats(conditions: Any) -> list[tuple[Any, Any]]:
    return [(c.get("type"), c.get("status")) for c in conditions or []]


def pre_check_for_node(info: NodeInfo) -> Callable[[Pod], bool]:
    """Cheap admission checks a node event uses to skip pods it cannot possibly help."""

    def check(pod: Pod) -> bool:
        node = info.node
        if node is None:
            return False
        return (
            admission_check(pod, info) and find_untolerated_taint(node.taints, pod.tolerations, ("NoSchedule",)) is None
        )

    return check


def admission_check(pod: Pod, info: NodeInfo) -> bool:
    """Whether ``pod`` could run on the node at all, by the Filter plugins' own checks: resources
    (pod count included), node name, nodeSelector plus required node affinity, host ports."""
    node = info.node
    if node is None:
        return False
    return (
        not noderesources_fit.fits(pod, info)
        and nodename.fits(pod, info)
        and RequiredNodeAffinity.of(pod).matches(node)
        and nodeports.fits(pod, info)
    )
