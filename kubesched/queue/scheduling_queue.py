"""The scheduling queue: where pending pods wait for a scheduling attempt (kube-scheduler v1.30).

Three places hold a pending pod, and a pod is in at most one of them:

* ``activeQ`` - ready to be tried, ordered by the profile's queue-sort function; ``pop`` takes its
  head.
* ``backoffQ`` - tried and failed recently; ordered by the moment its backoff ends
  (``timestamp + initial * 2^(attempts-1)``, capped). ``flush_backoff_q_completed`` moves finished
  ones to activeQ.
* ``unschedulable`` - tried and rejected by plugins; waits for a cluster event that one of those
  plugins registered interest in, or for ``pod_max_in_unschedulable_duration``. Pods that a
  PreEnqueue plugin refuses (e.g. scheduling gates) also wait here, flagged ``gated``; they are
  never popped.

This is the behaviour with the ``SchedulerQueueingHints`` feature gate off (v1.30's default): a
plugin that registered an event is assumed to say "queue" for it, and a pod that fails while a
move request arrived during its attempt goes to backoffQ instead of the unschedulable pool.

The queue never reads the wall clock or sleeps by itself: time comes from the injected ``clock``,
and the owner drives the periodic flushes. So the same object serves a simulator stepping a
virtual clock on one thread (``pop(block=False)``) and a live scheduler whose event handlers run on
other threads (``pop(block=True)`` waits on a condition variable; ``close`` releases it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any, Protocol

from kubesched.api.objects import Pod
from kubesched.framework.capabilities import reads_pod_only
from kubesched.framework.interfaces import ClusterEvent, PreEnqueuePlugin
from kubesched.framework.status import Code, Status
from kubesched.klog import Logger, kobj
from kubesched.queue import events as ev
from kubesched.queue.heap import IndexedHeap
from kubesched.queue.nominator import MODE_NOOP, Nominator, PodLister
from kubesched.queue.queued_pod_info import QueuedPodInfo, is_pod_updated

DEFAULT_POD_INITIAL_BACKOFF = timedelta(seconds=1)
DEFAULT_POD_MAX_BACKOFF = timedelta(seconds=10)
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_DURATION = timedelta(minutes=5)

# Sub-queue names, as the scheduler_pending_pods / scheduler_queue_incoming_pods_total labels spell them.
ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"
#: The sub-queues as kube-scheduler's log lines name them.
LOGGED_QUEUE_NAMES = {ACTIVE: "Active", BACKOFF: "Backoff", UNSCHEDULABLE: "Unschedulable", GATED: "Unschedulable"}

logger = Logger(__name__)


class QueueError(Exception):
    """A request the queue refuses (kube-scheduler returns these as errors and only logs them)."""


# -- helpers --------------------------------------------------------------------------------------
class QueueMetrics(Protocol):
    """Hooks for the queue's metrics; called with the queue lock held, so keep them cheap."""

    def pending_pods_changed(self, counts: Mapping[str, int]) -> None:
        """``scheduler_pending_pods{queue}``: called whenever a count changes."""
        ...

    def incoming_pod(self, queue: str, event: str) -> None:
        """``scheduler_queue_incoming_pods_total{queue, event}``: a pod entered ``queue``."""
        ...

    # Optional: ``unschedulable_reason(profile, plugins, delta)`` moves
    # ``scheduler_unschedulable_pods{plugin, profile}`` for a pod put back (+1) or popped / deleted (-1).


class _Strategy(Enum):
    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


PreEnqueueCheck = Callable[[Pod], bool]
AffinityMatcher = Callable[[Pod, Pod], bool]
ClusterEventMap = Mapping[ClusterEvent, Iterable[str]]

_ANY_PROFILE = ""


def _utcnow() -> datetime:
    return datetime.now(UTC)


# -- the queue ------------------------------------------------------------------------------------
class SchedulingQueue:
    """kube-scheduler's PriorityQueue: activeQ, backoffQ and the unschedulable pool, plus nominations.

    Thread-safe: every public method takes the queue's lock (a reentrant lock behind a condition
    variable shared with the nominator).
    """

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        *,
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
        clock: Callable[[], datetime] = _utcnow,
        pod_initial_backoff: timedelta = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: timedelta = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_duration: timedelta = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_DURATION,
        pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]] | None = None,
        cluster_event_map: ClusterEventMap | None = None,
        cluster_event_map_per_profile: Mapping[str, ClusterEventMap] | None = None,
        affinity_matcher: AffinityMatcher | None = None,
        namespace_labels: Callable[[str], Mapping[str, str]] | None = None,
        pod_lister: PodLister | None = None,
        metrics: QueueMetrics | None = None,
        in_place_pod_vertical_scaling: bool = False,
    ) -> None:
        self._clock = clock
        self._initial_backoff = pod_initial_backoff
        self._max_backoff = pod_max_backoff
        self._max_in_unschedulable = pod_max_in_unschedulable_duration
        self._set_plugins(pre_enqueue or {}, cluster_event_map_per_profile
                          if cluster_event_map_per_profile is not None else {_ANY_PROFILE: cluster_event_map or {}})
        self._affinity_matcher = affinity_matcher
        self._namespace_labels = namespace_labels
        self._metrics = metrics
        self._unschedulable_reason = getattr(metrics, "unschedulable_reason", None)
        self._in_place_resize = in_place_pod_vertical_scaling

        self._cond = threading.Condition(threading.RLock())
        self._nominator = Nominator(pod_lister, lock=self._cond)
        self._active: IndexedHeap[QueuedPodInfo] = (
            IndexedHeap(_uid_of, sort_key=sort_key) if sort_key is not None else IndexedHeap(_uid_of, less=less)
        )
        self._backoff: IndexedHeap[QueuedPodInfo] = IndexedHeap(_uid_of, sort_key=self._backoff_time)
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._gated_uids: set[str] = set()
        self._in_flight: dict[str, Pod] = {}
        self._scheduling_cycle = 0
        self._move_request_cycle = -1
        self._closed = False
        self._last_counts: dict[str, int] = {}

    def _set_plugins(self, pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]],
                     event_maps: Mapping[str, ClusterEventMap]) -> None:
        self._pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]] = pre_enqueue
        # PreEnqueue plugins whose verdict reads the pod alone: no cluster event lifts their gates.
        self._pod_only_gates = frozenset(plugin.name for plugins in pre_enqueue.values()
                                         for plugin in plugins if reads_pod_only(plugin))
        # Registered event -> plugin names, per profile; _ANY_PROFILE applies to every profile.
        self._event_map = {profile: {e: frozenset(names) for e, names in m.items()}
                           for profile, m in event_maps.items()}
        self._interest_cache: dict[tuple[str, ClusterEvent], frozenset[str] | None] = {}
        self._event_of_interest_cache: dict[ClusterEvent, bool] = {}

    def reconfigure(self, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool], *,
                    sort_key: Callable[[QueuedPodInfo], Any] | None, pod_initial_backoff: timedelta,
                    pod_max_backoff: timedelta, pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]],
                    cluster_event_map_per_profile: Mapping[str, ClusterEventMap]) -> None:
        """New profiles took over (a configuration reload): from now on the queue orders, gates, backs
        off and requeues as they say. Every queued pod stays queued: activeQ and backoffQ are re-sorted
        (activeQ through PreEnqueue again), and the unschedulable pool moves as on a wildcard event,
        since the new plugins may judge its pods otherwise."""
        with self._cond:
            self._initial_backoff, self._max_backoff = pod_initial_backoff, pod_max_backoff
            self._set_plugins(pre_enqueue, cluster_event_map_per_profile)
            active, backoff, pool = list(self._active), list(self._backoff), list(self._unschedulable.values())
            self._active = (IndexedHeap(_uid_of, sort_key=sort_key) if sort_key is not None
                            else IndexedHeap(_uid_of, less=less))
            self._backoff = IndexedHeap(_uid_of, sort_key=self._backoff_time)
            for qpi in backoff:
                self._backoff.add(qpi)
            for qpi in active:
                self._add_to_active(qpi)
            for qpi in pool:
                self._unschedulable_remove(qpi.pod.uid)
                self._requeue(qpi, _Strategy.AFTER_BACKOFF, ev.ConfigReload.label)
            self._move_request_cycle = self._scheduling_cycle
            self._cond.notify_all()
            self._publish_counts()

    # == adding and popping ========================================================================
    def add(self, pod: Pod) -> None:
        """A new pending pod: to activeQ, or to the unschedulable pool if a PreEnqueue plugin gates it."""
        with self._cond:
            qpi = QueuedPodInfo(pod=pod, timestamp=self._clock())
            if self._add_to_active(qpi):
                self._unschedulable_remove(pod.uid)
                self._backoff.delete(pod.uid)
                self._incoming(ACTIVE, ev.POD_ADD, pod)
                self._nominator._add(pod, "", MODE_NOOP)
                self._cond.notify_all()
            self._publish_counts()

    def activate(self, pods: Iterable[Pod] | Mapping[str, Pod]) -> None:
        """Force pods waiting in backoffQ or the unschedulable pool into activeQ (PodsToActivate)."""
        items = pods.values() if isinstance(pods, Mapping) else pods
        with self._cond:
            activated = False
            for pod in items:
                activated |= self._activate(pod)
            if activated:
                self._cond.notify_all()
            self._publish_counts()

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        """Put back a pod whose attempt failed (and end its in-flight record).

        It goes to backoffQ when a move request arrived since ``scheduling_cycle`` (the cycle of the
        failed attempt) started, or when no plugin is to blame; otherwise to the unschedulable pool.
        Raises :class:`QueueError` if the pod is already queued (e.g. re-added by an update while
        it was being scheduled).
        """
        with self._cond:
            try:
                pod = qpi.pod
                where = self._where(pod.uid)
                if where is not None:
                    queue_name = {ACTIVE: "the active queue", BACKOFF: "the backoff queue"}.get(
                        where, "unschedulable queue")
                    raise QueueError(f"Pod {pod.namespace}/{pod.name} is already present in {queue_name}")
                qpi.timestamp = self._clock()
                if self._move_request_cycle >= scheduling_cycle or not qpi.rejector_plugins:
                    self._backoff.add(qpi)
                    self._incoming(BACKOFF, ev.SCHEDULE_ATTEMPT_FAILURE, pod)
                else:
                    self._unschedulable_put(qpi)
                    self._incoming(UNSCHEDULABLE, ev.SCHEDULE_ATTEMPT_FAILURE, pod)
                self._count_reasons(qpi, 1)
                self._nominator._add(pod, "", MODE_NOOP)
            finally:
                self._in_flight.pop(qpi.pod.uid, None)
                self._publish_counts()

    @property
    def scheduling_cycle(self) -> int:
        with self._cond:
            return self._scheduling_cycle

    def pop(self, block: bool = True, timeout: float | None = None) -> QueuedPodInfo | None:
        """Take the head of activeQ for a scheduling attempt.

        With ``block`` it waits (up to ``timeout`` seconds, real time) for a pod; it returns None when
        nothing arrived or the queue is closed and empty.
        """
        with self._cond:
            if block and not self._active and not self._closed:
                self._cond.wait_for(lambda: len(self._active) > 0 or self._closed, timeout)
            qpi = self._active.pop()
            if qpi is None:
                return None
            qpi.attempts += 1
            if qpi.initial_attempt_timestamp is None:
                qpi.initial_attempt_timestamp = self._clock()
            self._scheduling_cycle += 1
            self._in_flight[qpi.pod.uid] = qpi.pod
            # The next failure will say who rejected it this time.
            self._count_reasons(qpi, -1)
            qpi.unschedulable_plugins.clear()
            qpi.pending_plugins.clear()
            self._publish_counts()
            return qpi

    def done(self, uid: str) -> None:
        """The attempt on a popped pod is over (scheduled, failed, or bound)."""
        with self._cond:
            self._in_flight.pop(uid, None)

    def close(self) -> None:
        """Wake every waiting ``pop``; from now on pop returns None once activeQ is empty."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        with self._cond:
            return self._closed

    # == pod updates and deletions =================================================================
    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """A pending pod changed.

        In activeQ or backoffQ it is replaced in place. In the unschedulable pool, a change that may
        matter (see :func:`is_pod_updated`) sends it to backoffQ if still backing off, else to
        activeQ (re-running PreEnqueue, so an ungated pod gets out); a bookkeeping-only change
        leaves it there. A pod in no sub-queue is added to activeQ.
        """
        with self._cond:
            try:
                self._update(old_pod, new_pod)
            finally:
                self._publish_counts()

    def _update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        if old_pod is not None:
            for heap in (self._active, self._backoff):
                qpi = heap.get(old_pod.uid)
                if qpi is not None:
                    qpi.update_pod(new_pod)
                    self._nominator._update(old_pod, new_pod)
                    heap.update(qpi)
                    return

        qpi = self._unschedulable.get(new_pod.uid)
        if qpi is not None:
            qpi.update_pod(new_pod)
            self._nominator._update(old_pod, new_pod)
            if not is_pod_updated(old_pod, new_pod):
                self._unschedulable_put(qpi)
                return
            if self._is_backing_off(qpi):
                self._backoff.add(qpi)
                self._unschedulable_remove(new_pod.uid)
                self._incoming(BACKOFF, ev.POD_UPDATE, new_pod)
            elif self._add_to_active(qpi):
                self._unschedulable_remove(new_pod.uid)
                self._incoming(ACTIVE, ev.POD_UPDATE, new_pod)
                self._cond.notify_all()
            return

        qpi = QueuedPodInfo(pod=new_pod, timestamp=self._clock())
        if self._add_to_active(qpi):
            self._nominator._add(new_pod, "", MODE_NOOP)
            self._incoming(ACTIVE, ev.POD_UPDATE, new_pod)
            self._cond.notify_all()

    def delete(self, pod: Pod) -> None:
        """A pending pod was deleted (or got bound by someone else): forget it and its nomination."""
        with self._cond:
            self._nominator._delete(pod.uid)
            gone = self._active.delete(pod.uid)
            if gone is None:
                gone = self._backoff.delete(pod.uid) or self._unschedulable.get(pod.uid)
                self._unschedulable_remove(pod.uid)
            if gone is not None:
                self._count_reasons(gone, -1)
            self._publish_counts()

    # == cluster events ============================================================================
    def assigned_pod_added(self, pod: Pod) -> None:
        """A pod got bound: unschedulable pods whose required pod affinity it satisfies may fit now."""
        with self._cond:
            if self._event_of_interest(ev.AssignedPodAdd):
                self._move_pods(self._pods_with_matching_affinity(pod), ev.AssignedPodAdd, None, pod)
            self._publish_counts()

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod) -> None:
        """A bound pod changed: like an addition for affinity, or a move-all when it shrank in place."""
        with self._cond:
            if self._in_place_resize and self._resized_down(new_pod):
                self._move_all(ev.AssignedPodUpdate, old_pod, new_pod, None)
            elif self._event_of_interest(ev.AssignedPodUpdate):
                self._move_pods(self._pods_with_matching_affinity(new_pod), ev.AssignedPodUpdate,
                                old_pod, new_pod)
            self._publish_counts()

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old_obj: Any = None,
                                            new_obj: Any = None,
                                            precheck: PreEnqueueCheck | None = None) -> None:
        """An event that may help unschedulable pods: move those it concerns (and ``precheck`` passes)."""
        with self._cond:
            self._move_all(event, old_obj, new_obj, precheck)
            self._publish_counts()

    # == periodic flushes (driven by the owner's timers) ===========================================
    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff has ended from backoffQ to activeQ (kube-scheduler: every 1s)."""
        with self._cond:
            activated = False
            while True:
                qpi = self._backoff.peek()
                if qpi is None or self._is_backing_off(qpi):
                    break
                self._backoff.pop()
                if self._add_to_active(qpi):
                    self._incoming(ACTIVE, ev.BACKOFF_COMPLETE, qpi.pod)
                    activated = True
            if activated:
                self._cond.notify_all()
            self._publish_counts()

    def flush_unschedulable_pods_leftover(self) -> None:
        """Requeue pods stuck in the unschedulable pool too long (kube-scheduler: every 30s)."""
        with self._cond:
            now = self._clock()
            stale = [qpi for qpi in self._unschedulable.values()
                     if now - qpi.timestamp > self._max_in_unschedulable]
            if stale:
                self._move_pods(stale, ev.UnschedulableTimeout, None, None)
            self._publish_counts()

    # == nominations ===============================================================================
    def add_nominated_pod(self, pod: Pod, nominated_node_name: str = "", mode: str | None = None) -> None:
        """See :meth:`Nominator.add_nominated_pod`."""
        self._nominator.add_nominated_pod(pod, nominated_node_name, mode)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        self._nominator.delete_nominated_pod_if_exists(pod)

    def update_nominated_pod(self, old_pod: Pod | None, new_pod: Pod) -> None:
        self._nominator.update_nominated_pod(old_pod, new_pod)

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return self._nominator.nominated_pods_for_node(node_name)

    def nominations(self) -> Mapping[str, tuple[Pod, ...]]:
        return self._nominator.nominations()

    @property
    def nominator(self) -> Nominator:
        return self._nominator

    # == inspection ================================================================================
    def pending_pods(self) -> dict[str, int]:
        """Pods per sub-queue: ``active``, ``backoff``, ``unschedulable`` (not gated), ``gated``."""
        with self._cond:
            return self._counts()

    def pending_pod_list(self) -> list[Pod]:
        """Every pending pod: activeQ, then backoffQ, then the unschedulable pool (debugging)."""
        with self._cond:
            return ([q.pod for q in self._active.ordered()] + [q.pod for q in self._backoff.ordered()]
                    + [q.pod for q in self._unschedulable.values()])

    def pods_in_active_q(self) -> list[Pod]:
        """activeQ in pop order."""
        with self._cond:
            return [q.pod for q in self._active.ordered()]

    def get_pod(self, uid: str) -> QueuedPodInfo | None:
        """The queued info of a pod waiting in any sub-queue (not of one being scheduled)."""
        with self._cond:
            return self._active.get(uid) or self._backoff.get(uid) or self._unschedulable.get(uid)

    def queue_of(self, uid: str) -> str | None:
        """Which sub-queue holds the pod: active, backoff, unschedulable, gated; None if none."""
        with self._cond:
            return self._where(uid)

    def in_flight(self) -> list[Pod]:
        """Pods popped and not yet done."""
        with self._cond:
            return list(self._in_flight.values())

    def next_backoff_expiry(self) -> datetime | None:
        """When the earliest backoff in backoffQ ends (None when backoffQ is empty)."""
        with self._cond:
            qpi = self._backoff.peek()
            return None if qpi is None else self._backoff_time(qpi)

    def backoff_expiries(self) -> list[datetime]:
        """When each pod in backoffQ ends its backoff, ascending."""
        with self._cond:
            return sorted(self._backoff_time(q) for q in self._backoff)

    def next_unschedulable_timeout(self) -> datetime | None:
        """The earliest instant after which a leftover flush would move some unschedulable pod.

        A pod moves once ``now - timestamp`` *exceeds* the maximum, i.e. at any time strictly after
        the returned one.
        """
        with self._cond:
            if not self._unschedulable:
                return None
            return min(q.timestamp for q in self._unschedulable.values()) + self._max_in_unschedulable

    def backoff_duration(self, qpi: QueuedPodInfo) -> timedelta:
        """initial x 2^(attempts-1), capped at the maximum."""
        duration = self._initial_backoff
        for _ in range(1, qpi.attempts):
            if duration > self._max_backoff - duration:
                return self._max_backoff
            duration += duration
        return duration

    def _backoff_time(self, qpi: QueuedPodInfo) -> datetime:
        return qpi.timestamp + self.backoff_duration(qpi)

    # == internals (lock held) =====================================================================
    def _is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        if qpi.gated:
            return False
        return self._backoff_time(qpi) > self._clock()

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> str:
        """Run the profile's PreEnqueue plugins in order; the name of the first that refuses, or ""."""
        pod = qpi.pod
        for plugin in self._pre_enqueue.get(pod.scheduler_name, ()):
            status: Status | None
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as err:  # a failing plugin gates the pod, as an Error status would
                status = Status.from_error(err)
            if status is None or (type(status) is Status and status.is_success()):
                continue  # anything but a Status or None gates the pod, as an error would
            _log_pre_enqueue(pod, plugin.name, status)
            if plugin.name not in qpi.unschedulable_plugins:
                qpi.unschedulable_plugins.add(plugin.name)
                if self._unschedulable_reason is not None:
                    self._unschedulable_reason(pod.scheduler_name, (plugin.name,), 1)
            return plugin.name
        return ""

    def _add_to_active(self, qpi: QueuedPodInfo) -> bool:
        """Into activeQ if PreEnqueue allows it; otherwise into the unschedulable pool as gated."""
        gate = self._run_pre_enqueue(qpi)
        qpi.gated = bool(gate)
        qpi.gating_plugin = gate
        if gate:
            self._unschedulable_put(qpi)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock()
        self._active.add(qpi)
        return True

    def _activate(self, pod: Pod) -> bool:
        uid = pod.uid
        if uid in self._active:
            return False
        qpi = self._unschedulable.get(uid) or self._backoff.get(uid)
        if qpi is None:
            return False
        if not self._add_to_active(qpi):
            # Now gated in the unschedulable pool; make sure it is not left in backoffQ as well.
            self._backoff.delete(uid)
            return False
        self._unschedulable_remove(uid)
        self._backoff.delete(uid)
        self._incoming(ACTIVE, ev.FORCE_ACTIVATE, qpi.pod)
        self._nominator._add(qpi.pod, "", MODE_NOOP)
        return True

    def _interested_plugins(self, profile: str, event: ClusterEvent) -> frozenset[str] | None:
        """Plugins of ``profile`` that registered an event ``event`` matches (None: unknown profile)."""
        key = (profile, event)
        if key in self._interest_cache:
            return self._interest_cache[key]
        event_map = self._event_map.get(profile, self._event_map.get(_ANY_PROFILE))
        result: frozenset[str] | None = None
        if event_map is not None:
            names: set[str] = set()
            for registered, plugins in event_map.items():
                if event.matches(registered):
                    names |= plugins
            result = frozenset(names)
        self._interest_cache[key] = result
        return result

    def _event_of_interest(self, event: ClusterEvent) -> bool:
        if event.is_wildcard():
            return True
        cached = self._event_of_interest_cache.get(event)
        if cached is None:
            cached = any(event.matches(registered)
                         for event_map in self._event_map.values() for registered in event_map)
            self._event_of_interest_cache[event] = cached
        return cached

    def _worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent) -> _Strategy:
        rejectors = qpi.rejector_plugins
        if not rejectors or event.is_wildcard():
            return _Strategy.AFTER_BACKOFF
        interested = self._interested_plugins(qpi.pod.scheduler_name, event)
        if interested is None:
            return _Strategy.AFTER_BACKOFF
        if qpi.pending_plugins & interested:
            return _Strategy.IMMEDIATELY
        if rejectors & interested:
            return _Strategy.AFTER_BACKOFF
        return _Strategy.SKIP

    def _requeue(self, qpi: QueuedPodInfo, strategy: _Strategy, event_label: str) -> str:
        if strategy is _Strategy.AFTER_BACKOFF and self._is_backing_off(qpi):
            self._backoff.add(qpi)
            self._incoming(BACKOFF, event_label, qpi.pod)
            return BACKOFF
        if self._add_to_active(qpi):
            self._incoming(ACTIVE, event_label, qpi.pod)
            return ACTIVE
        # Gated again: _add_to_active put it back into the unschedulable pool.
        return UNSCHEDULABLE

    def _move_pods(self, pods: Iterable[QueuedPodInfo], event: ClusterEvent,
                   old_obj: Any, new_obj: Any) -> None:
        if not self._event_of_interest(event):
            return
        activated = False
        for qpi in pods:
            # Only an update of the pod itself can lift a gate that reads the pod alone (scheduling
            # gates); skip those cheaply.
            if qpi.gated and not self._pod_only_gates.isdisjoint(qpi.unschedulable_plugins):
                continue
            strategy = self._worth_requeuing(qpi, event)
            if strategy is _Strategy.SKIP:
                if v := logger.v(5):
                    v.info("Event is not making pod schedulable", "pod", kobj(qpi.pod), "event", event.label)
                continue
            self._unschedulable_remove(qpi.pod.uid)
            queue = self._requeue(qpi, strategy, event.label)
            if queue == ACTIVE:
                activated = True
            if v := logger.v(4):
                v.info("Pod moved to an internal scheduling queue", "pod", kobj(qpi.pod), "event", event.label,
                       "queue", LOGGED_QUEUE_NAMES[queue], "hint", strategy.value)
        self._move_request_cycle = self._scheduling_cycle
        if activated:
            self._cond.notify_all()

    def _move_all(self, event: ClusterEvent, old_obj: Any, new_obj: Any,
                  precheck: PreEnqueueCheck | None) -> None:
        if not self._event_of_interest(event):
            return
        pods = [qpi for qpi in self._unschedulable.values() if precheck is None or precheck(qpi.pod)]
        self._move_pods(pods, event, old_obj, new_obj)

    def _pods_with_matching_affinity(self, assigned: Pod) -> list[QueuedPodInfo]:
        matcher = self._affinity_matcher
        if matcher is not None:
            return [qpi for qpi in self._unschedulable.values() if matcher(qpi.pod, assigned)]
        ns_labels: Mapping[str, str] = {}
        if self._namespace_labels is not None:
            ns_labels = self._namespace_labels(assigned.namespace) or {}
        return [qpi for qpi in self._unschedulable.values()
                if any(term.matches(assigned, ns_labels) for term in qpi.required_affinity_terms)]

    @staticmethod
    def _resized_down(pod: Pod) -> bool:
        status = pod.raw.get("status") or {}
        return bool(status.get("resize") == "InProgress")

    def _where(self, uid: str) -> str | None:
        if uid in self._active:
            return ACTIVE
        if uid in self._backoff:
            return BACKOFF
        if uid in self._unschedulable:
            return GATED if uid in self._gated_uids else UNSCHEDULABLE
        return None

    def _unschedulable_put(self, qpi: QueuedPodInfo) -> None:
        uid = qpi.pod.uid
        self._unschedulable[uid] = qpi
        if qpi.gated:
            self._gated_uids.add(uid)
        else:
            self._gated_uids.discard(uid)

    def _unschedulable_remove(self, uid: str) -> None:
        self._unschedulable.pop(uid, None)
        self._gated_uids.discard(uid)

    def _counts(self) -> dict[str, int]:
        gated = len(self._gated_uids)
        return {ACTIVE: len(self._active), BACKOFF: len(self._backoff),
                UNSCHEDULABLE: len(self._unschedulable) - gated, GATED: gated}

    def _publish_counts(self) -> None:
        if self._metrics is None:
            return
        counts = self._counts()
        if counts != self._last_counts:
            self._last_counts = counts
            self._metrics.pending_pods_changed(dict(counts))

    def _incoming(self, queue: str, event: str, pod: Pod) -> None:
        """``pod`` entered ``queue`` because of ``event``: counted, and logged at V5."""
        if v := logger.v(5):
            v.info("Pod moved to an internal scheduling queue", "pod", kobj(pod), "event", event,
                   "queue", LOGGED_QUEUE_NAMES[queue])
        if self._metrics is not None:
            self._metrics.incoming_pod(queue, event)

    def _count_reasons(self, qpi: QueuedPodInfo, delta: int) -> None:
        if self._unschedulable_reason is not None and (qpi.unschedulable_plugins or qpi.pending_plugins):
            self._unschedulable_reason(qpi.pod.scheduler_name, qpi.rejector_plugins, delta)


def _uid_of(qpi: QueuedPodInfo) -> str:
    return qpi.pod.uid


def _log_pre_enqueue(pod: Pod, plugin: str, status: Any) -> None:
    """A PreEnqueue plugin keeps ``pod`` out of activeQ: an error, or (at V4) the plugin's status."""
    if isinstance(status, Status) and status.code is Code.ERROR:
        logger.error(status.as_error(), "Unexpected error running PreEnqueue plugin", "pod", kobj(pod),
                     "plugin", plugin)
    elif v := logger.v(4):
        v.info("Status after running PreEnqueue plugin", "pod", kobj(pod), "plugin", plugin,
               "status", status.message if isinstance(status, Status) else str(status))


PriorityQueue = SchedulingQueue
