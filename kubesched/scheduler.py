"""The scheduler: cluster events in, decisions out.

:class:`Scheduler` wires the parts kube-scheduler has: informer-style event handlers that feed bound
pods and nodes to the cache and pending pods to the queue, one framework per profile, the scheduling
loop and the binding cycles. It talks to the cluster only through the cluster protocol, so the same
object schedules an embedded (simulated) cluster or a live one.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sized
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from kubesched.api.errors import ObjectError
from kubesched.api.objects import Node, Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.cache.cache import Cache
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import Clock
from kubesched.cluster.kinds import KNOWN_KINDS
from kubesched.cluster.listers import LISTED_KINDS, Listers
from kubesched.cluster.protocol import ApiError, Cluster, WatchEvent
from kubesched.config.types import KubeSchedulerConfiguration, Profile
from kubesched.extender import HTTPExtender, build_extenders, ignored_by_scheduler
from kubesched.framework.interfaces import ActionType, ClusterEvent, PluginFactory, QueueSortPlugin
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Status
from kubesched.metrics import PluginTimer, SchedulerMetrics
from kubesched.plugins import nodename, nodeports
from kubesched.plugins.names import NODE_RESOURCES_FIT
from kubesched.plugins.nodeaffinity import RequiredNodeAffinity
from kubesched.plugins.noderesources import fit as noderesources_fit
from kubesched.plugins.registry import in_tree_registry, resolve_profile
from kubesched.queue import events as qevents
from kubesched.queue.queued_pod_info import QueuedPodInfo
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.recording import Attempt, NullAttempt, NullRecorder, Recorder, Recorders
from kubesched.schedule_one import schedule_one

log = logging.getLogger(__name__)

WATCHED_KINDS = ("Node", "Pod", *LISTED_KINDS)
#: kube-scheduler's flush periods: backoffQ every second, the unschedulable leftovers every 30 s.
BACKOFF_FLUSH_PERIOD = 1.0
LEFTOVER_FLUSH_PERIOD = 30.0


def _is_embedded(cluster: Cluster) -> bool:
    """Whether ``cluster`` is the embedded one, asked without importing the embedded control plane: a
    live scheduler never loads it, and no EmbeddedCluster can exist unless its module was loaded."""
    apiserver = sys.modules.get("kubesched.embedded.apiserver")
    return apiserver is not None and isinstance(cluster, apiserver.EmbeddedCluster)


class Scheduler:
    """kube-scheduler's Scheduler: cache, queue, profiles and the loop that joins them."""

    def __init__(
        self,
        cluster: Cluster,
        config: KubeSchedulerConfiguration,
        *,
        clock: Clock,
        rng: random.Random | None = None,
        tie_break: str = "random",
        registry: Mapping[str, PluginFactory] | None = None,
        executor: Callable[[Callable[[], None]], None] | None = None,
        metrics: SchedulerMetrics | None = None,
        gate: Callable[[], bool] | None = None,
        bind_for_extenders: bool | None = None,
    ) -> None:
        self.cluster = cluster
        #: Whether this replica may act (e.g. ``LeaderElector.is_leader``): consulted before every pop and
        #: again before PreBind and Bind, so a replica that lost its Lease stops popping at once and never
        #: binds afterwards. None means always (no leader election).
        self.gate = gate
        self.config = config
        self.clock = clock
        self.rng = rng or random.Random()
        if tie_break not in ("random", "name"):
            raise ValueError(f"tie_break must be 'random' or 'name', not {tie_break!r}")
        self.tie_break = tie_break
        self.metrics = metrics or SchedulerMetrics()
        #: What scheduling attempts are reported to (see kubesched.recording); the default keeps nothing.
        self.recorder: Recorder = NullRecorder()
        self.warnings: list[str] = []
        self.next_start_node_index = 0
        self.snapshot = Snapshot()
        self.cache = Cache(clock.now, ttl=timedelta(0))
        self._pods: dict[str, Pod] = {}
        #: (namespace, label key, value) -> uids: what plugins' pod listings by label read.
        self._pods_by_label: dict[tuple[str, str, str], set[str]] = {}
        self.listers = Listers()
        self._tasks: deque[Callable[[], None]] = deque()
        self._tasks_lock = threading.Lock()
        self._executor = executor
        self._watch: Any = None
        self._housekeeping: list[Any] = []
        self._attempt_started: dict[str, float] = {}
        #: Pods whose binding cycle waits in PreBind (for the cluster to bind their claims).
        self.waiting_in_pre_bind: set[str] = set()
        self._cycles = 0

        self.extenders: list[HTTPExtender] = build_extenders(config.extenders)
        # A binding extender binds through the API server itself. The embedded cluster lives in this
        # process where no extender can reach it, so there the scheduler records the Binding on the
        # extender's behalf once the extender said yes.
        self.bind_for_extenders = (_is_embedded(cluster) if bind_for_extenders is None
                                   else bind_for_extenders)
        ignored = ignored_by_scheduler(config.extenders)

        plugin_registry = dict(in_tree_registry() if registry is None else registry)
        self.profiles: dict[str, Framework] = {}
        for profile in config.profiles:
            if ignored:
                profile = _ignore_resources_in_fit(profile, ignored)
            effective, warnings = resolve_profile(profile, plugin_registry)
            self.warnings.extend(warnings)
            self.profiles[profile.scheduler_name] = Framework(
                effective,
                plugin_registry,
                cluster=cluster,
                clock=clock,
                nominator=_QueueNominator(self),
                snapshot_fn=lambda: self.snapshot,
                listers=self.listers,
                parallelism=config.parallelism,
                percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
                # pod_lister: the scheduler's informer view of a pod (what kube-scheduler's podLister
                # answers), so no plugin needs a live GET in the scheduling or binding cycle.
                extra_handle={"rng": self.rng, "tie_break": tie_break, "pod_lister": self.current_pod},
                extenders=self.extenders,
                event_recorder=_SchedulerEvents(self),
                pod_lister=self.list_pods,
            )
        for warning in self.warnings:
            log.warning(warning)
        first = next(iter(self.profiles.values()))
        sort = first.queue_sort
        # Kinds beyond the built-in ones that plugins register events for (Coscheduling's PodGroup):
        # watched into the listers, and their changes sent to the queue.
        self.extra_kinds = sorted({
            e.resource for fwk in self.profiles.values() for events in fwk.enqueue_events.values()
            for e in events if e.resource in KNOWN_KINDS and e.resource not in WATCHED_KINDS})
        self.watched_kinds = (*WATCHED_KINDS, *self.extra_kinds)
        event_maps = {
            name: qevents.build_cluster_event_map(
                _Registration(plugin, evs) for plugin, evs in fwk.enqueue_events.items())
            for name, fwk in self.profiles.items()
        }
        self.queue = SchedulingQueue(
            less=sort.less if getattr(sort, "sort_key", None) is not None else _guarded_less(sort),
            sort_key=getattr(sort, "sort_key", None),
            clock=clock.now,
            pod_initial_backoff=timedelta(seconds=config.pod_initial_backoff_seconds),
            pod_max_backoff=timedelta(seconds=config.pod_max_backoff_seconds),
            pre_enqueue={name: fwk.pre_enqueue_plugins for name, fwk in self.profiles.items()},
            cluster_event_map_per_profile=event_maps,
            namespace_labels=self.namespace_labels,
            metrics=self.metrics,
        )
        self._wire_metrics()

    def _wire_metrics(self) -> None:
        """Per-profile framework timings, and the cache's counts for scheduler_cache_size."""
        self._preempting_profiles = set()
        for name, fwk in self.profiles.items():
            fwk.metrics = self.metrics.for_profile(name)
            if "DefaultPreemption" in fwk.plugin_names("post_filter"):
                self._preempting_profiles.add(name)
        cache = self.cache
        self.metrics.set_cache_source(lambda: {
            "assumed_pods": cache.assumed_pod_count(), "pods": cache.pod_count(), "nodes": cache.node_count()})

    # -- wiring to the cluster -------------------------------------------------------------------------
    def start(self) -> None:
        """Watch the cluster, list what exists (listing after watching misses nothing), and arm the
        queue's and cache's periodic housekeeping on the clock."""
        self._watch = self.cluster.watch(self.watched_kinds, self.handle_event)
        if not getattr(self._watch, "replays_existing", False):
            # An informer hands what exists over as ADDED events itself; any other watch is listed.
            existing = getattr(self._watch, "existing", None)  # an embedded watch's own listing
            for kind in self.watched_kinds:
                items = existing(kind) if existing is not None else self.cluster.list(kind)[0]
                for obj in items:
                    self.handle_event(WatchEvent("ADDED", kind, obj, None))
        self._every(BACKOFF_FLUSH_PERIOD, self._flush_backoff)
        self._every(LEFTOVER_FLUSH_PERIOD, self.queue.flush_unschedulable_pods_leftover)

    def has_synced(self) -> bool:
        """Whether the watch has handed over everything that existed (an embedded watch always has)."""
        check = getattr(self._watch, "has_synced", None)
        return self._watch is not None and (check is None or bool(check()))

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()
        for timer in self._housekeeping:
            timer.cancel()
        self._housekeeping.clear()
        self.queue.close()

    def _every(self, period: float, job: Callable[[], None]) -> None:
        """Run ``job`` every ``period`` seconds of clock time until :meth:`stop` (wait.Until's role)."""
        slot = len(self._housekeeping)

        def tick() -> None:
            try:
                job()
            except Exception:
                log.exception("periodic %s failed", getattr(job, "__name__", "job"))
            if self._housekeeping:
                self._housekeeping[slot] = self.clock.call_later(period, tick)

        self._housekeeping.append(self.clock.call_later(period, tick))

    def _flush_backoff(self) -> None:
        self.queue.flush_backoff_q_completed()
        self.cache.cleanup_expired_assumed_pods()

    def namespace_labels(self, name: str) -> Mapping[str, str]:
        return self.listers.namespace_labels(name) or {}

    def handle_event(self, event: WatchEvent) -> None:
        """Route one watch event the way kube-scheduler's informer handlers do."""
        try:
            if event.kind == "Node":
                self._on_node(event)
            elif event.kind == "Pod":
                self._on_pod(event)
            elif event.kind in LISTED_KINDS:
                self._on_listed(event)
            elif event.kind in self.extra_kinds:
                self._on_listed(event)
                action = _ACTIONS.get(event.type, ActionType.UPDATE)
                self.queue.move_all_to_active_or_backoff_queue(
                    ClusterEvent(event.kind, action, f"{event.kind}{event.type.capitalize()}"), event.old, event.obj,
                    None)
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
        # Storage additions and updates may make pods rejected by the volume plugins schedulable
        # (kube-scheduler registers no delete handlers for these kinds).
        cluster_event = qevents.STORAGE_EVENTS.get((event.kind, event.type))
        if cluster_event is not None:
            self.queue.move_all_to_active_or_backoff_queue(cluster_event, event.old, event.obj, None)

    def _parse_node(self, obj: Mapping[str, Any]) -> Node | None:
        try:
            return Node.from_dict(obj)
        except ObjectError as err:
            name = (obj.get("metadata") or {}).get("name", "?")
            log.error("ignoring malformed node %s: %s", name, err)
            self._record_object_event("Node", "", name, "Warning", "FailedToParse", f"node ignored: {err}")
            return None

    def _on_node(self, event: WatchEvent) -> None:
        node = self._parse_node(event.obj)
        if node is None:
            return
        if event.type == "DELETED":
            self.cache.remove_node(node)
            return
        if event.type == "ADDED" or event.old is None:
            info = self.cache.add_node(node)
            self.queue.move_all_to_active_or_backoff_queue(qevents.NodeAdd, None, node, self._pre_check_for_node(info))
            return
        old = self._parse_node(event.old)
        info = self.cache.update_node(old, node)
        changes = node_scheduling_properties_changes(old, node) if old is not None else [qevents.NodeAdd]
        for change in changes:
            self.queue.move_all_to_active_or_backoff_queue(change, old, node, self._pre_check_for_node(info))

    def _pre_check_for_node(self, info: NodeInfo) -> Callable[[Pod], bool]:
        """Cheap admission checks a node event uses to skip pods it cannot possibly help."""

        def check(pod: Pod) -> bool:
            node = info.node
            if node is None:
                return False
            return admission_check(pod, info) and find_untolerated_taint(
                node.taints, pod.tolerations, ("NoSchedule",)) is None

        return check

    def _parse_pod(self, obj: Mapping[str, Any], *, report: bool = True) -> Pod | None:
        try:
            return Pod.from_dict(obj)
        except ObjectError as err:
            if report:
                meta = obj.get("metadata") or {}
                ns, name = meta.get("namespace", "default"), meta.get("name", "?")
                log.error("pod %s/%s is malformed and stays pending: %s", ns, name, err)
                self._record_object_event("Pod", ns, name, "Warning", "FailedScheduling",
                                          f"pod is malformed and cannot be scheduled: {err}",
                                          uid=str(meta.get("uid") or ""))
            return None

    def _responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    def _on_pod(self, event: WatchEvent) -> None:
        if event.type == "DELETED":
            # The last version seen is what leaves; no need to parse the deleted object again.
            known = self._pods.pop(str((event.obj.get("metadata") or {}).get("uid") or ""), None)
            if known is not None:
                self._pod_gone(known)
                return
        new = None
        if event.type == "MODIFIED":
            known = self._pods.get(str((event.obj.get("metadata") or {}).get("uid") or ""))
            new = _rebound(known, event.obj) if known is not None else None
        if new is None:
            new = self._parse_pod(event.obj, report=event.type != "DELETED")
        if new is None:
            # A pod we cannot read is not scheduled; forget any earlier, readable version of it.
            uid = str((event.obj.get("metadata") or {}).get("uid") or "")
            stale = self._forget_pod(uid)
            if stale is not None:
                self._pod_gone(stale)
            return
        old = self._pods.get(new.uid)
        if event.type == "DELETED":
            self._forget_pod(new.uid)
            self._pod_gone(old or new)
            return
        if new.is_terminal:
            # Terminal pods are invisible to the scheduler (as if deleted).
            self._forget_pod(new.uid)
            if old is not None:
                self._pod_gone(old)
            return
        self._remember_pod(new)
        was_assigned = old is not None and bool(old.node_name)
        if new.node_name:
            if was_assigned and old is not None:
                self.cache.update_pod(old, new)
                self.queue.assigned_pod_updated(old, new)
            else:
                if old is not None and self._responsible_for(old):
                    self._delete_from_queue(old)
                self.cache.add_pod(new)
                self.queue.assigned_pod_added(new)
            return
        if not self._responsible_for(new):
            return
        if old is None:
            self.queue.add(new)
        elif old.meta.resource_version != new.meta.resource_version and not self.cache.is_assumed(new):
            self.queue.update(old, new)

    def _pod_gone(self, pod: Pod) -> None:
        if pod.node_name:
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff_queue(qevents.AssignedPodDelete, pod, None, None)
        elif self._responsible_for(pod):
            self._delete_from_queue(pod)

    def _delete_from_queue(self, pod: Pod) -> None:
        self.queue.delete(pod)
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is not None and fwk.reject_waiting_pod(pod.uid):
            self.queue.move_all_to_active_or_backoff_queue(qevents.AssignedPodDelete, pod, None, None)

    # -- used by the scheduling / binding cycles -------------------------------------------------------
    def framework_for(self, pod: Pod) -> Framework | None:
        return self.profiles.get(pod.scheduler_name)

    def skip_pod_schedule(self, pod: Pod) -> bool:
        """A pod being deleted, or one already assumed, is not scheduled again."""
        return pod.meta.deletion_timestamp is not None or self.cache.is_assumed(pod)

    def update_snapshot(self) -> Snapshot:
        self.cache.update_snapshot(self.snapshot)
        return self.snapshot

    def assume(self, pod: Pod, host: str) -> Pod:
        assumed = dataclasses.replace(pod, node_name=host)
        self.cache.assume_pod(assumed, host)
        self.queue.delete_nominated_pod_if_exists(assumed)
        return assumed

    def current_pod(self, pod: Pod) -> Pod | None:
        """The latest version of ``pod`` the scheduler has seen (None once deleted)."""
        return self._pods.get(pod.uid)

    def on_assumed_pod_forgotten(self, pod: Pod, *, exclude_self: bool) -> None:
        precheck = (lambda other: other.uid != pod.uid) if exclude_self else None
        self.queue.move_all_to_active_or_backoff_queue(qevents.AssignedPodDelete, pod, None, precheck)

    def bind_on_behalf_of_extender(self, pod: Pod, host: str) -> Status | None:
        try:
            self.cluster.bind(pod.namespace, pod.name, host, uid=pod.uid or None)
        except ApiError as err:
            return Status.from_error(err)
        return None

    def submit(self, task: Callable[[], None]) -> None:
        """Hand a binding cycle to the executor (a thread pool live, a task list in simulation)."""
        if self._executor is not None:
            self._executor(task)
            return
        with self._tasks_lock:
            self._tasks.append(task)

    def run_pending_tasks(self) -> int:
        """Run queued tasks (binding cycles) until none is left; returns how many ran."""
        ran = 0
        while True:
            with self._tasks_lock:
                if not self._tasks:
                    return ran
                task = self._tasks.popleft()
            task()
            ran += 1

    def has_pending_tasks(self) -> bool:
        with self._tasks_lock:
            return bool(self._tasks)

    def add_recorder(self, recorder: Recorder) -> None:
        """Report attempts to ``recorder`` as well as to the recorders already attached."""
        current = self.recorder
        if isinstance(current, Recorders):
            current.add(recorder)
        elif current.enabled:
            self.recorder = Recorders([current, recorder])
        else:
            self.recorder = recorder

    def begin_attempt(self, qpi: QueuedPodInfo, profile: str) -> Attempt | NullAttempt:
        """Start timing a scheduling attempt and get the attempt its cycle reports to."""
        self._attempt_started[qpi.pod.uid] = time.perf_counter()
        self._cycles += 1
        return self.recorder.begin(qpi.pod.key, qpi.attempts, profile, qpi.pod.nominated_node_name or None,
                                   self._cycles)

    def metrics_scheduled(self, profile: str, qpi: QueuedPodInfo) -> None:
        started = self._attempt_started.pop(qpi.pod.uid, None)
        entered = qpi.initial_attempt_timestamp
        sli = (self.clock.now() - entered).total_seconds() if entered is not None else None
        self.metrics.observe_scheduled(profile, time.perf_counter() - started if started else 0.0,
                                       qpi.attempts, sli)

    def plugin_timer(self, fwk: Framework) -> PluginTimer | None:
        """The plugin timer of a new scheduling cycle: set on one cycle in ten (pluginMetricsSamplePercent)."""
        return fwk.metrics.plugin_timer() if fwk.metrics is not None else None

    def metrics_post_filter(self, fwk: Framework, victims: Sized | None) -> None:
        """PostFilter ran: a preemption attempt when DefaultPreemption is among its plugins (as upstream
        counts them), with the chosen candidate's victims."""
        if fwk.profile_name in self._preempting_profiles:
            self.metrics.observe_preemption(len(victims) if victims else None)

    def record_event(self, pod: Pod, type_: str, reason: str, message: str) -> None:
        if not self.may_act():  # a replica that lost its Lease leaves the pod's story to the new leader
            return
        self._record_object_event("Pod", pod.namespace, pod.name, type_, reason, message, uid=pod.uid,
                                  controller=pod.scheduler_name)

    def _record_object_event(self, kind: str, namespace: str, name: str, type_: str, reason: str,
                             message: str, uid: str = "", controller: str = "kubesched") -> None:
        """Record an event; ``controller`` is the reporting scheduler (a pod's profile, as upstream)."""
        now = self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{name}.", "namespace": namespace or "default"},
            "involvedObject": {"kind": kind, "namespace": namespace, "name": name, "uid": uid},
            "type": type_,
            "reason": reason,
            "message": truncate_message(message),
            "source": {"component": "kubesched"},
            "reportingController": controller,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            self.cluster.record_event(event)
        except ApiError as err:
            log.warning("recording event for %s/%s failed: %s", namespace, name, err)

    def patch_unschedulable(self, pod: Pod, reason: str, message: str, nominated_node: str | None) -> None:
        """Set PodScheduled=False (and the nomination, when it changes) on the pod's status."""
        started = self._attempt_started.pop(pod.uid, None)
        result = "unschedulable" if reason == "Unschedulable" else "error"
        self.metrics.observe_attempt(result, pod.scheduler_name,
                                     time.perf_counter() - started if started else 0.0)
        if not self.may_act():
            return
        condition = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
        nnn: Any = ...
        if nominated_node is None and pod.nominated_node_name:
            nnn = None
        elif nominated_node and nominated_node != pod.nominated_node_name:
            nnn = nominated_node
        current = self._pods.get(pod.uid)
        if current is not None and nnn is ... and _has_condition(current, condition):
            return
        try:
            self.cluster.patch_pod_status(pod.namespace, pod.name, conditions=[condition], nominated_node_name=nnn)
        except ApiError as err:
            log.warning("updating status of pod %s failed: %s", pod.key, err)

    # -- the loop --------------------------------------------------------------------------------------
    def may_act(self) -> bool:
        """The gate: True when this replica may pop and bind (it leads, or there is no election)."""
        return self.gate is None or self.gate()

    def schedule_next(self, *, block: bool = False, timeout: float | None = None) -> bool:
        """Pop one pod and run its scheduling cycle; False when there was nothing to pop or the gate is
        closed (the pods stay queued for when it opens)."""
        if not self.may_act():
            return False
        qpi = self.queue.pop(block=block, timeout=timeout)
        if qpi is None:
            return False
        schedule_one(self, qpi)
        return True

    def run_periodic(self) -> None:
        """Every periodic flush at once, whatever its period (for tests that step by hand)."""
        self.queue.flush_backoff_q_completed()
        self.queue.flush_unschedulable_pods_leftover()
        self.cache.cleanup_expired_assumed_pods()

    # -- what a driver may ask (the simulator's loop uses only these and the cluster) -------------------
    def idle(self) -> bool:
        """Nothing to do right now: no binding task queued and no pod ready to pop."""
        return not self.has_pending_tasks() and not self.queue.pending_pods().get("active")

    def backoff_end(self) -> datetime | None:
        """When the last pod now backing off may be retried (None when none is backing off)."""
        expiries = self.queue.backoff_expiries()
        return expiries[-1] if expiries else None

    def waiting_pod_count(self) -> int:
        """Pods held at Permit or in PreBind, waiting to be allowed, rejected or timed out."""
        return len(self.waiting_in_pre_bind) + sum(len(fwk.waiting_pods.all()) for fwk in self.profiles.values())

    def rejecting_plugins(self, key: str) -> frozenset[str] | None:
        """The plugins whose verdict keeps a queued pod (``ns/name``) waiting; None if it is not queued."""
        pod = self._pod_by_key(key)
        qpi = self.queue.get_pod(pod.uid) if pod is not None else None
        if qpi is None:
            return None
        return frozenset(qpi.unschedulable_plugins) | frozenset(qpi.pending_plugins)

    def park(self, key: str) -> bool:
        """Stop retrying a pending pod (``ns/name``): it leaves the queue and stays pending in the cluster.

        For drivers that must end: kube-scheduler would retry such a pod for ever. Returns whether the
        pod was queued."""
        pod = self._pod_by_key(key)
        if pod is None or self.queue.get_pod(pod.uid) is None:
            return False
        self.queue.delete(pod)
        return True

    def _pod_by_key(self, key: str) -> Pod | None:
        return next((p for p in self._pods.values() if p.key == key), None)

    def run_forever(self, stop: threading.Event) -> None:
        """Live mode: housekeeping on clock timers, binding on a pool, scheduling on this thread."""
        pool = ThreadPoolExecutor(max_workers=max(self.config.parallelism, 1), thread_name_prefix="binder")

        def logged(task: Callable[[], None]) -> None:
            try:
                task()
            except Exception:
                # The binding cycle undoes and requeues its own failures; anything escaping it is a bug,
                # and a pool would otherwise keep it silently in a future nobody reads.
                log.exception("binding task failed")

        def run_in_pool(task: Callable[[], None]) -> None:
            pool.submit(logged, task)

        self._executor = run_in_pool
        try:
            while not stop.is_set():
                if not self.may_act():
                    stop.wait(0.1)
                    continue
                self.schedule_next(block=True, timeout=0.5)
        finally:
            pool.shutdown(wait=True)
            self.stop()

    def pods(self) -> Iterable[Pod]:
        return list(self._pods.values())

    def list_pods(self, namespace: str | None = None, labels: Mapping[str, str] | None = None) -> list[Pod]:
        """Known pods (pending and bound), in ``namespace`` and with ``labels`` when given."""
        if namespace is not None and labels:
            sets = [self._pods_by_label.get((namespace, k, v), set()) for k, v in labels.items()]
            uids = set.intersection(*sets) if len(sets) > 1 else sets[0]
            return [self._pods[uid] for uid in sorted(uids, key=lambda u: self._pods[u].key)]
        return [p for p in self._pods.values() if (namespace is None or p.namespace == namespace)
                and all(p.labels.get(k) == v for k, v in (labels or {}).items())]

    def _remember_pod(self, pod: Pod) -> None:
        old = self._pods.get(pod.uid)
        if old is not None and old.labels is not pod.labels:
            self._unindex(old)
        self._pods[pod.uid] = pod
        for key, value in pod.labels.items():
            self._pods_by_label.setdefault((pod.namespace, key, value), set()).add(pod.uid)

    def _forget_pod(self, uid: str) -> Pod | None:
        pod = self._pods.pop(uid, None)
        if pod is not None:
            self._unindex(pod)
        return pod

    def _unindex(self, pod: Pod) -> None:
        for key, value in pod.labels.items():
            uids = self._pods_by_label.get((pod.namespace, key, value))
            if uids is not None:
                uids.discard(pod.uid)
                if not uids:
                    del self._pods_by_label[(pod.namespace, key, value)]


MAX_EVENT_MESSAGE = 1024


def truncate_message(message: str) -> str:
    """Event messages are capped like kube-scheduler's (keep the start, mark the cut)."""
    if len(message) <= MAX_EVENT_MESSAGE:
        return message
    return message[:MAX_EVENT_MESSAGE - 4] + " ..."


_ACTIONS = {"ADDED": ActionType.ADD, "MODIFIED": ActionType.UPDATE, "DELETED": ActionType.DELETE}


def _guarded_less(sort: QueueSortPlugin) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
    """A QueueSort plugin's ``less`` that cannot break the queue: on an exception (or a non-bool
    answer) the pods are ordered by priority, then by when they were queued, as PrioritySort does."""
    less = sort.less

    def guarded(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        try:
            answer = less(a, b)
            if isinstance(answer, (bool, np.bool_)):
                return bool(answer)
            raise TypeError(f"returned {type(answer).__name__}, expected bool")
        except Exception as err:
            log.warning('queue sort plugin "%s" failed: %s', sort.name, err, exc_info=True)
            if a.pod.priority != b.pod.priority:
                return a.pod.priority > b.pod.priority
            return a.timestamp < b.timestamp

    return guarded


def _ignore_resources_in_fit(profile: Profile, ignored: tuple[str, ...]) -> Profile:
    """Extender resources marked ignoredByScheduler become NodeResourcesFit's ignoredResources
    (replacing the configured ones, as kube-scheduler does)."""
    args = profile.plugin_config.get(NODE_RESOURCES_FIT)
    if args is None or not hasattr(args, "ignored_resources"):
        return profile
    config = dict(profile.plugin_config)
    config[NODE_RESOURCES_FIT] = dataclasses.replace(args, ignored_resources=ignored)  # type: ignore[type-var]
    return dataclasses.replace(profile, plugin_config=config)


class _SchedulerEvents:
    """The handle's event recorder: Events through the scheduler, as its own are written."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler

    def event(self, regarding: Pod | Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        if isinstance(regarding, Pod):
            self._scheduler.record_event(regarding, type_, reason, message)
            return
        meta = regarding.get("metadata") or {}
        self._scheduler._record_object_event(str(regarding.get("kind") or ""), str(meta.get("namespace") or ""),
                                             str(meta.get("name") or ""), type_, reason, message,
                                             uid=str(meta.get("uid") or ""))


class _QueueNominator:
    """The queue's nominator, for frameworks built before the queue exists (the queue needs them)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return self._scheduler.queue.nominated_pods_for_node(node_name)

    def nominations(self) -> Mapping[str, tuple[Pod, ...]]:
        return self._scheduler.queue.nominations()


class _Registration:
    """A plugin's registered events, in the shape the queue's event-map builder reads."""

    def __init__(self, name: str, events: list[ClusterEvent]) -> None:
        self.name = name
        self._events = events

    def events_to_register(self) -> list[ClusterEvent]:
        return self._events


#: Pod fields a binding or a status update writes without changing what the scheduler parses from them.
_REWRITTEN_META = frozenset({"resourceVersion", "managedFields"})
_PARSED_STATUS = ("phase", "nominatedNodeName", "startTime")


def _rebound(old: Pod, raw: Mapping[str, Any]) -> Pod | None:
    """``old`` with ``raw``'s node name and resourceVersion, when nothing else the scheduler parses
    changed (a binding, a condition update); None when ``raw`` must be parsed afresh.

    Every pod is bound once and most get a status update: comparing dicts is far cheaper than parsing."""
    spec, old_spec = raw.get("spec"), old.raw.get("spec")
    meta, old_meta = raw.get("metadata"), old.raw.get("metadata")
    status, old_status = raw.get("status") or {}, old.raw.get("status") or {}
    if not (isinstance(spec, dict) and isinstance(old_spec, dict) and isinstance(meta, dict)
            and isinstance(old_meta, dict) and isinstance(status, dict) and isinstance(old_status, dict)):
        return None
    if {k: v for k, v in spec.items() if k != "nodeName"} != {k: v for k, v in old_spec.items() if k != "nodeName"}:
        return None
    if ({k: v for k, v in meta.items() if k not in _REWRITTEN_META}
            != {k: v for k, v in old_meta.items() if k not in _REWRITTEN_META}):
        return None
    if any(status.get(k) != old_status.get(k) for k in _PARSED_STATUS):
        return None
    node_name = spec.get("nodeName") or ""
    if not isinstance(node_name, str):
        return None
    resource_version = str(meta.get("resourceVersion") or "")
    return dataclasses.replace(old, raw=raw, node_name=node_name,
                               meta=dataclasses.replace(old.meta, resource_version=resource_version))


def _has_condition(pod: Pod, condition: Mapping[str, str]) -> bool:
    for existing in (pod.raw.get("status") or {}).get("conditions") or []:
        if existing.get("type") == condition["type"]:
            return all(existing.get(k) == v for k, v in condition.items())
    return False


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
