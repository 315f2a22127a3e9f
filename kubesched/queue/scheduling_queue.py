"""The scheduling queue: where pending pods wait for a scheduling attempt.

Three places hold a pending pod, and a pod is in at most one of them:

* ``activeQ`` - ready to be tried, ordered by the profile's queue-sort function; ``pop`` takes its head.
* ``backoffQ`` - tried and failed recently, waiting out a backoff (:mod:`kubesched.queue.backoff_queue`);
  ``flush_backoff_q_completed`` moves finished ones to activeQ.
* ``unschedulable`` - rejected by plugins; waits for a cluster event that may help, or for
  ``pod_max_in_unschedulable_duration``. Pods that a PreEnqueue plugin refuses (e.g. scheduling
  gates) also wait here, flagged ``gated`` (:mod:`kubesched.queue.pre_enqueue`); they are never popped.

The version decides how an event moves a pod (the SchedulerQueueingHints gate):

* off (v1.30's default): a plugin that registered an event is taken to say "queue" for it, and a pod that fails while
  a move request arrived during its attempt goes to backoffQ instead of the unschedulable pool.
* on (v1.34, locked): each rejecting plugin's hint decides (:mod:`kubesched.queue.hints`); events that arrive while a
  pod is being scheduled are kept (:mod:`kubesched.queue.in_flight`) and judged when it fails; an update of a waiting
  pod is matched as the events it makes; a gated pod only hears the events its gating plugin registered, but not those
  it says cannot lift the gate (:class:`~kubesched.framework.capabilities.GateHoldingPreEnqueuePlugin`). With
  SchedulerPopFromBackoffQ, an empty activeQ takes backoffQ's head, and PreEnqueue runs as a pod enters backoffQ.

The queue never reads the wall clock or sleeps by itself: time comes from the injected ``clock``, and the owner drives
the periodic flushes. So the same object serves a simulator stepping a virtual clock on one thread
(``pop(block=False)``) and a live scheduler whose event handlers run on other threads (``pop(block=True)`` waits on a
condition variable; ``close`` releases it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from kubesched.api.objects import Pod
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.framework.interfaces import ClusterEvent, PreEnqueuePlugin
from kubesched.klog import Logger, kobj
from kubesched.queue import events as ev
from kubesched.queue.backoff_queue import BackoffQueue
from kubesched.queue.heap import IndexedHeap
from kubesched.queue.hints import QueueingHintMap, QueueingHints, Strategy, hint_map_from_event_map
from kubesched.queue.in_flight import InFlight
from kubesched.queue.nominator import MODE_NOOP, Nominator, PodLister
from kubesched.queue.pre_enqueue import PreEnqueueGates
from kubesched.queue.queue_base import (
    ACTIVE,
    ANY_PROFILE,
    BACKOFF,
    GATED,
    LOGGED_QUEUE_NAMES,
    UNSCHEDULABLE,
    QueueBase,
    QueueError,
    QueueMetrics,
)
from kubesched.queue.queued_pod_info import QueuedPodInfo, is_pod_updated
from kubesched.queue.unschedulable_pods import UnschedulablePods

__all__ = [
    "ACTIVE",
    "BACKOFF",
    "GATED",
    "LOGGED_QUEUE_NAMES",
    "UNSCHEDULABLE",
    "PriorityQueue",
    "QueueError",
    "QueueMetrics",
    "SchedulingQueue",
]

DEFAULT_POD_INITIAL_BACKOFF = timedelta(seconds=1)
DEFAULT_POD_MAX_BACKOFF = timedelta(seconds=10)
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_DURATION = timedelta(minutes=5)

logger = Logger(__name__)

PreEnqueueCheck = Callable[[Pod], bool]
AffinityMatcher = Callable[[Pod, Pod], bool]
ClusterEventMap = Mapping[ClusterEvent, Iterable[str]]
#: Incoming-pod labels after which v1.34 re-reads the pod's nomination.
_NOMINATING_LABELS = frozenset({ev.EventUnscheduledPodAdd.event_label, ev.EventUnscheduledPodUpdate.event_label})


def _utcnow() -> datetime:
    return datetime.now(UTC)


class SchedulingQueue(QueueBase):
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
        queueing_hint_map_per_profile: Mapping[str, QueueingHintMap] | None = None,
        cluster_event_map: ClusterEventMap | None = None,
        cluster_event_map_per_profile: Mapping[str, ClusterEventMap] | None = None,
        affinity_matcher: AffinityMatcher | None = None,
        namespace_labels: Callable[[str], Mapping[str, str]] | None = None,
        pod_lister: PodLister | None = None,
        metrics: QueueMetrics | None = None,
        in_place_pod_vertical_scaling: bool = False,
        features: FeatureGates | None = None,
    ) -> None:
        features = features or feature_gates()
        #: SchedulerQueueingHints: the hint-driven queue of v1.34 (see the module docstring).
        self.hints_enabled = features.enabled("SchedulerQueueingHints")
        self._pop_from_backoff = features.enabled("SchedulerPopFromBackoffQ")
        self._dra = features.enabled("DynamicResourceAllocation")
        self._clock = clock
        self._max_in_unschedulable = pod_max_in_unschedulable_duration
        self._v134 = features.at_least("1.34")
        self._metrics = metrics
        self._unschedulable_reason = getattr(metrics, "unschedulable_reason", None)
        self._set_plugins(
            pre_enqueue or {},
            _hint_maps(queueing_hint_map_per_profile, cluster_event_map_per_profile, cluster_event_map),
        )
        self._affinity_matcher = affinity_matcher
        self._namespace_labels = namespace_labels
        self._in_place_resize = in_place_pod_vertical_scaling

        # Taken as the lock itself (``with self._lock``): entering through the Condition adds a Python
        # call per use; the Condition is for waiting and waking only.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        #: Poppers blocked in wait_for: without any (a simulation, an idle live loop) nobody is woken.
        self._waiting = 0
        self._nominator = Nominator(pod_lister, lock=self._lock)
        self._new_heaps(less, sort_key, pod_initial_backoff, pod_max_backoff)
        self._unschedulable = UnschedulablePods()
        self._in_flight = InFlight(record_events=self.hints_enabled)
        self._scheduling_cycle = 0
        self._move_request_cycle = -1
        self._closed = False
        self._last_counts: tuple[int, ...] = ()

    def _set_plugins(
        self, pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]], hint_maps: Mapping[str, QueueingHintMap]
    ) -> None:
        self._hints = QueueingHints(hint_maps, v134_matching=self.hints_enabled, on_error=_log_hint_error)
        self._gates = PreEnqueueGates(
            pre_enqueue,
            self._hints.plugin_events(),
            hints_enabled=self.hints_enabled,
            unschedulable_reason=self._unschedulable_reason,
        )

    def _new_heaps(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        sort_key: Callable[[QueuedPodInfo], Any] | None,
        pod_initial_backoff: timedelta,
        pod_max_backoff: timedelta,
    ) -> None:
        """Empty activeQ and backoffQ, ordered by ``sort_key`` when given (else by ``less``)."""
        self._active: IndexedHeap[QueuedPodInfo] = (
            IndexedHeap(_uid_of, sort_key=sort_key) if sort_key is not None else IndexedHeap(_uid_of, less=less)
        )
        self._backoff = BackoffQueue(
            self._clock,
            pod_initial_backoff,
            pod_max_backoff,
            v134=self._v134,
            pop_from_backoff=self._pop_from_backoff,
            less=less,
            sort_key=sort_key,
        )

    def reconfigure(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        *,
        sort_key: Callable[[QueuedPodInfo], Any] | None,
        pod_initial_backoff: timedelta,
        pod_max_backoff: timedelta,
        pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]],
        queueing_hint_map_per_profile: Mapping[str, QueueingHintMap] | None = None,
        cluster_event_map_per_profile: Mapping[str, ClusterEventMap] | None = None,
    ) -> None:
        """New profiles took over (a configuration reload): from now on the queue orders, gates, backs
        off and requeues as they say. Every queued pod stays queued: activeQ and backoffQ are re-sorted
        (activeQ through PreEnqueue again), and the unschedulable pool moves as on a wildcard event,
        since the new plugins may judge its pods otherwise."""
        with self._lock:
            self._set_plugins(
                pre_enqueue, _hint_maps(queueing_hint_map_per_profile, cluster_event_map_per_profile, None)
            )
            active, backoff = list(self._active), list(self._backoff)
            self._new_heaps(less, sort_key, pod_initial_backoff, pod_max_backoff)
            for qpi in backoff:
                self._backoff.add(qpi)
            for qpi in active:
                self._move_to_active(qpi, ev.ConfigReload.label)
            self._move_pods(list(self._unschedulable.values()), ev.ConfigReload, None, None)
            self._move_request_cycle = self._scheduling_cycle
            self._wake()
            self._publish_counts()

    # == adding and popping ========================================================================
    def add(self, pod: Pod) -> None:
        """A new pending pod: to activeQ, or to the unschedulable pool if a PreEnqueue plugin gates it."""
        with self._lock:
            qpi = QueuedPodInfo(pod=pod, timestamp=self._clock())
            label = ev.EventUnscheduledPodAdd.event_label if self.hints_enabled else ev.POD_ADD
            if self._move_to_active(qpi, label):
                if not self.hints_enabled:
                    self._nominator._add(pod, "", MODE_NOOP)
                self._wake()
            self._publish_counts()

    def activate(self, pods: Iterable[Pod] | Mapping[str, Pod]) -> None:
        """Force pods waiting in backoffQ or the unschedulable pool into activeQ (PodsToActivate).

        With QueueingHints, a pod that is being scheduled right now is remembered instead
        (ForceActivate): if its attempt fails, it is requeued rather than left waiting."""
        items = pods.values() if isinstance(pods, Mapping) else pods
        with self._lock:
            activated = False
            for pod in items:
                if self._activate(pod):
                    activated = True
                elif self.hints_enabled:
                    self._in_flight.add_pod_events(pod, None, (ev.EventForceActivate,))
                    self._move_request_cycle = self._scheduling_cycle
            if activated:
                self._wake()
            self._publish_counts()

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        """Put back a pod whose attempt failed (and end its in-flight record).

        Without hints it goes to backoffQ when a move request arrived since ``scheduling_cycle`` (the
        cycle of the failed attempt) started, or when no plugin is to blame; otherwise to the
        unschedulable pool. With hints, the events seen during the attempt decide. Raises
        :class:`QueueError` if the pod is already queued (e.g. re-added by an update while it was
        being scheduled).
        """
        with self._lock:
            try:
                pod = qpi.pod
                where = self._where(pod.uid)
                if where is not None:
                    queue_name = {ACTIVE: "the active queue", BACKOFF: "the backoff queue"}.get(
                        where, "unschedulable queue"
                    )
                    raise QueueError(f"Pod {pod.namespace}/{pod.name} is already present in {queue_name}")
                if qpi.unschedulable_plugins or qpi.pending_plugins:
                    qpi.unschedulable_count += 1
                    qpi.consecutive_errors_count = 0
                else:
                    qpi.consecutive_errors_count += 1
                qpi.timestamp = self._clock()
                qpi.backoff_expiration = None
                self._count_reasons(qpi, 1)
                if self.hints_enabled:
                    queue = self._requeue(qpi, self._in_flight_strategy(qpi), ev.SCHEDULE_ATTEMPT_FAILURE)
                    if queue == ACTIVE or (self._pop_from_backoff and queue == BACKOFF):
                        self._wake()
                    return
                if self._move_request_cycle >= scheduling_cycle or not qpi.rejector_plugins:
                    if self._move_to_backoff(qpi, ev.SCHEDULE_ATTEMPT_FAILURE) and self._pop_from_backoff:
                        self._wake()
                else:
                    self._put_unschedulable(qpi, ev.SCHEDULE_ATTEMPT_FAILURE)
                self._nominator._add(pod, "", MODE_NOOP)
            finally:
                self._in_flight.done(qpi.pod.uid)
                self._publish_counts()

    @property
    def scheduling_cycle(self) -> int:
        with self._lock:
            return self._scheduling_cycle

    def _wake(self) -> None:
        """Wake blocked poppers (the lock is held)."""
        if self._waiting:
            self._cond.notify_all()

    def pop(self, block: bool = True, timeout: float | None = None) -> QueuedPodInfo | None:
        """Take the head of activeQ (with SchedulerPopFromBackoffQ, of backoffQ when activeQ is empty)
        for a scheduling attempt.

        With ``block`` it waits (up to ``timeout`` seconds, real time) for a pod; it returns None when
        nothing arrived or the queue is closed and empty.
        """
        with self._lock:
            if block and not self._poppable() and not self._closed:
                self._waiting += 1
                try:
                    self._cond.wait_for(lambda: self._poppable() or self._closed, timeout)
                finally:
                    self._waiting -= 1
            while True:
                qpi = self._active.pop()
                if qpi is None and self._pop_from_backoff:
                    qpi = self._backoff.pop_backoff()
                    if qpi is not None:
                        self._incoming(ACTIVE, ev.POP_FROM_BACKOFF_Q, qpi.pod)
                if qpi is None:
                    return None
                qpi.attempts += 1
                if self._in_flight.add_pod(qpi.pod) or not self.hints_enabled:
                    break
                logger.error(
                    None,
                    "The same pod is tracked in multiple places in the scheduler, and just discard it",
                    "pod",
                    kobj(qpi.pod),
                )
            if qpi.initial_attempt_timestamp is None:
                qpi.initial_attempt_timestamp = self._clock()
            self._scheduling_cycle += 1
            # The next failure will say who rejected it this time.
            self._count_reasons(qpi, -1)
            qpi.unschedulable_plugins.clear()
            qpi.pending_plugins.clear()
            qpi.set_gating("")
            qpi.gating_plugin_events = ()
            self._publish_counts()
            return qpi

    def poppable(self) -> bool:
        """Whether :meth:`pop` would return a pod now."""
        with self._lock:
            return self._poppable()

    def done(self, uid: str) -> None:
        """The attempt on a popped pod is over (failed and put back, or allowed by Permit)."""
        with self._lock:
            self._in_flight.done(uid)

    def close(self) -> None:
        """Wake every waiting ``pop``; from now on pop returns None once activeQ is empty."""
        with self._lock:
            self._closed = True
            self._wake()

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    # == pod updates and deletions =================================================================
    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """A pending pod changed.

        In activeQ or backoffQ it is replaced in place. In the unschedulable pool, a change that may
        matter sends it to backoffQ if still backing off, else to activeQ (re-running PreEnqueue, so
        an ungated pod gets out); v1.30 asks :func:`is_pod_updated`, v1.34 the hints of the events
        the update makes. A pod being scheduled only has those events noted (v1.34); a pod in no
        sub-queue is added to activeQ.
        """
        with self._lock:
            try:
                if self.hints_enabled:
                    self._update_with_hints(old_pod, new_pod)
                else:
                    self._update(old_pod, new_pod)
            finally:
                self._publish_counts()

    def _update_in_place(self, old_pod: Pod | None, new_pod: Pod) -> bool:
        """Replace the pod where it waits in activeQ or backoffQ; False if it waits in neither."""
        if old_pod is None:
            return False
        for heap_update, qpi in (
            (self._active.update, self._active.get(old_pod.uid)),
            (self._backoff.update, self._backoff.get(old_pod.uid)),
        ):
            if qpi is not None:
                qpi.update_pod(new_pod)
                self._nominator._update(old_pod, new_pod)
                heap_update(qpi)
                return True
        return False

    def _update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        if self._update_in_place(old_pod, new_pod):
            return
        qpi = self._unschedulable.get(new_pod.uid)
        if qpi is not None:
            qpi.update_pod(new_pod)
            self._nominator._update(old_pod, new_pod)
            if not is_pod_updated(old_pod, new_pod):
                self._unschedulable.put(qpi)
                return
            if self._backoff.is_backing_off(qpi):
                self._move_to_backoff(qpi, ev.POD_UPDATE)
            elif self._move_to_active(qpi, ev.POD_UPDATE):
                self._wake()
            return
        qpi = QueuedPodInfo(pod=new_pod, timestamp=self._clock())
        if self._move_to_active(qpi, ev.POD_UPDATE):
            self._nominator._add(new_pod, "", MODE_NOOP)
            self._wake()

    def _update_with_hints(self, old_pod: Pod | None, new_pod: Pod) -> None:
        events = (
            ev.pod_scheduling_properties_change(new_pod, old_pod, dra=self._dra)
            if old_pod is not None
            else [ev.EventUnscheduledPodUpdate]
        )
        if self._in_flight.add_pod_events(new_pod, old_pod, events):
            return  # judged when the attempt ends
        if self._update_in_place(old_pod, new_pod):
            return
        qpi = self._unschedulable.get(new_pod.uid)
        if qpi is None:
            qpi = QueuedPodInfo(pod=new_pod, timestamp=self._clock())
            if self._move_to_active(qpi, ev.EventUnscheduledPodUpdate.event_label):
                self._wake()
            return
        qpi.update_pod(new_pod)
        self._nominator._update(old_pod, new_pod)
        moved = False
        for event in events:
            strategy = self._hints.worth_requeuing(qpi, event, old_pod, new_pod)
            if moved and strategy is Strategy.SKIP:
                continue
            queue = self._requeue(qpi, strategy, event.event_label)
            moved |= queue != UNSCHEDULABLE
            if queue == ACTIVE or (self._pop_from_backoff and queue == BACKOFF):
                self._wake()
                break

    def delete(self, pod: Pod) -> None:
        """A pending pod was deleted (or got bound by someone else): forget it and its nomination."""
        uid = pod.uid
        with self._lock:
            self._nominator._delete(uid)
            gone = self._active.delete(uid) or self._backoff.delete(uid) or self._unschedulable.remove(uid)
            if gone is not None:
                self._count_reasons(gone, -1)
                self._publish_counts()

    # == cluster events ============================================================================
    def assigned_pod_added(self, pod: Pod) -> None:
        """v1.30: a pod got bound; unschedulable pods whose required pod affinity it satisfies may fit now."""
        with self._lock:
            if self._hints.is_event_of_interest(ev.AssignedPodAdd):
                self._move_pods(self._pods_with_matching_affinity(pod), ev.AssignedPodAdd, None, pod)
            self._publish_counts()

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod) -> None:
        """v1.30: a bound pod changed; like an addition for affinity, or a move-all when it shrank in place."""
        with self._lock:
            if self._in_place_resize and self._resized_down(new_pod):
                self._move_all(ev.AssignedPodUpdate, old_pod, new_pod, None)
            elif self._hints.is_event_of_interest(ev.AssignedPodUpdate):
                self._move_pods(self._pods_with_matching_affinity(new_pod), ev.AssignedPodUpdate, old_pod, new_pod)
            self._publish_counts()

    def move_all_to_active_or_backoff_queue(
        self, event: ClusterEvent, old_obj: Any = None, new_obj: Any = None, precheck: PreEnqueueCheck | None = None
    ) -> None:
        """An event that may help unschedulable pods: move those it concerns (and ``precheck`` passes)."""
        with self._lock:
            if not self._unschedulable and not self._in_flight:
                # Nothing waits and nothing is being scheduled: the event only counts as a move request.
                if self._hints.is_event_of_interest(event):
                    self._move_request_cycle = self._scheduling_cycle
                return
            self._move_all(event, old_obj, new_obj, precheck)
            self._publish_counts()

    # == periodic flushes (driven by the owner's timers) ===========================================
    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff has ended from backoffQ to activeQ (kube-scheduler: every 1s)."""
        with self._lock:
            completed = self._backoff.pop_completed()
            if not completed:
                return
            activated = False
            for qpi in completed:
                activated |= self._move_to_active(qpi, ev.BACKOFF_COMPLETE)
            if activated:
                self._wake()
            self._publish_counts()

    def flush_unschedulable_pods_leftover(self) -> None:
        """Requeue pods stuck in the unschedulable pool too long (kube-scheduler: every 30s)."""
        with self._lock:
            now = self._clock()
            stale = [qpi for qpi in self._unschedulable.values() if now - qpi.timestamp > self._max_in_unschedulable]
            if stale:
                self._move_pods(stale, ev.UnschedulableTimeout, None, None)
            self._publish_counts()

    # == internals (lock held) =====================================================================
    def _poppable(self) -> bool:
        return len(self._active) > 0 or (self._pop_from_backoff and self._backoff.len_backoff() > 0)

    def _move_to_active(self, qpi: QueuedPodInfo, label: str) -> bool:
        """Into activeQ if PreEnqueue allows it (v1.34 with PopFromBackoffQ ran it when the pod entered
        backoffQ); otherwise into the unschedulable pool as gated, unless it waits elsewhere."""
        uid = qpi.pod.uid
        if not (self._pop_from_backoff and label == ev.BACKOFF_COMPLETE):
            self._gates.run(qpi)
        if qpi.gated:
            if uid not in self._active and uid not in self._backoff:
                # v1.30 counts no incoming pod for a gated one.
                self._put_unschedulable(qpi, label, count=self.hints_enabled)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock()
        self._active.add(qpi)
        self._unschedulable.remove(uid)
        self._backoff.delete(uid)
        self._incoming(ACTIVE, label, qpi.pod)
        if label in _NOMINATING_LABELS:
            self._nominator._add(qpi.pod, "", MODE_NOOP)
        return True

    def _move_to_backoff(self, qpi: QueuedPodInfo, label: str) -> bool:
        """Into backoffQ (v1.34 with PopFromBackoffQ: if PreEnqueue allows it; else gated in the pool)."""
        if self._pop_from_backoff:
            self._gates.run(qpi)
            if qpi.gated:
                self._put_unschedulable(qpi, label)
                return False
        self._backoff.add(qpi)
        self._unschedulable.remove(qpi.pod.uid)
        self._incoming(BACKOFF, label, qpi.pod)
        return True

    def _put_unschedulable(self, qpi: QueuedPodInfo, label: str, count: bool = True) -> None:
        if count and qpi.pod.uid not in self._unschedulable:
            self._incoming(UNSCHEDULABLE, label, qpi.pod)
        self._unschedulable.put(qpi)

    def _activate(self, pod: Pod) -> bool:
        uid = pod.uid
        if uid in self._active:
            return False
        qpi = self._unschedulable.get(uid) or self._backoff.delete(uid)
        if qpi is None:
            return False
        if not self._move_to_active(qpi, ev.FORCE_ACTIVATE):
            return False
        if not self.hints_enabled:
            self._nominator._add(qpi.pod, "", MODE_NOOP)
        return True

    def _in_flight_strategy(self, qpi: QueuedPodInfo) -> Strategy:
        """What the events seen while the pod was being scheduled mean for it, now that it failed."""
        if not (qpi.unschedulable_plugins or qpi.pending_plugins):
            return Strategy.AFTER_BACKOFF
        events = self._in_flight.events_for(qpi.pod.uid)
        if events is None:
            logger.error(None, "in flight Pod isn't found in the scheduling queue", "pod", kobj(qpi.pod))
            return Strategy.AFTER_BACKOFF
        strategy = Strategy.SKIP
        for e in events:
            found = self._hints.worth_requeuing(qpi, e.event, e.old_obj, e.new_obj)
            if found is Strategy.IMMEDIATELY:
                return found
            if found is Strategy.AFTER_BACKOFF:
                strategy = found
                if not qpi.pending_plugins:
                    return strategy
        return strategy

    def _requeue(self, qpi: QueuedPodInfo, strategy: Strategy, label: str) -> str:
        if strategy is Strategy.SKIP:
            self._put_unschedulable(qpi, label)
            return UNSCHEDULABLE
        if strategy is Strategy.AFTER_BACKOFF and self._backoff.is_backing_off(qpi):
            return BACKOFF if self._move_to_backoff(qpi, label) else UNSCHEDULABLE
        return ACTIVE if self._move_to_active(qpi, label) else UNSCHEDULABLE

    def _move_pods(self, pods: Iterable[QueuedPodInfo], event: ClusterEvent, old_obj: Any, new_obj: Any) -> None:
        if not self._hints.is_event_of_interest(event):
            return
        activated = False
        label = event.event_label
        for qpi in pods:
            if qpi.gated and not self._gates.may_lift(qpi, event):
                continue
            strategy = self._hints.worth_requeuing(qpi, event, old_obj, new_obj)
            if strategy is Strategy.SKIP:
                if v := logger.v(5):
                    v.info("Event is not making pod schedulable", "pod", kobj(qpi.pod), "event", label)
                continue
            self._unschedulable.remove(qpi.pod.uid)
            queue = self._requeue(qpi, strategy, label)
            if queue == ACTIVE or (self._pop_from_backoff and queue == BACKOFF):
                activated = True
            if v := logger.v(4):
                v.info(
                    "Pod moved to an internal scheduling queue",
                    "pod",
                    kobj(qpi.pod),
                    "event",
                    label,
                    "queue",
                    LOGGED_QUEUE_NAMES[queue],
                    "hint",
                    int(strategy),
                )
        self._move_request_cycle = self._scheduling_cycle
        if self._in_flight.add_event(event, old_obj, new_obj) and (v := logger.v(5)):
            v.info("Event received while pods are in flight", "event", label)
        if activated:
            self._wake()

    def _move_all(self, event: ClusterEvent, old_obj: Any, new_obj: Any, precheck: PreEnqueueCheck | None) -> None:
        if not self._hints.is_event_of_interest(event):
            return
        # Only pods some interested plugin rejected (or none did) can move.
        candidates = (
            list(self._unschedulable.values())
            if event.is_wildcard()
            else self._unschedulable.candidates(self._hints.interested_plugins(event))
        )
        pods = [qpi for qpi in candidates if precheck is None or precheck(qpi.pod)]
        self._move_pods(pods, event, old_obj, new_obj)

    def _pods_with_matching_affinity(self, assigned: Pod) -> list[QueuedPodInfo]:
        matcher = self._affinity_matcher
        if matcher is not None:
            return [qpi for qpi in self._unschedulable.values() if matcher(qpi.pod, assigned)]
        ns_labels: Mapping[str, str] = {}
        if self._namespace_labels is not None:
            ns_labels = self._namespace_labels(assigned.namespace) or {}
        return [
            qpi
            for qpi in self._unschedulable.values()
            if any(term.matches(assigned, ns_labels) for term in qpi.required_affinity_terms)
        ]

    @staticmethod
    def _resized_down(pod: Pod) -> bool:
        status = pod.raw.get("status") or {}
        return bool(status.get("resize") == "InProgress")


def _hint_maps(
    per_profile: Mapping[str, QueueingHintMap] | None,
    event_maps: Mapping[str, ClusterEventMap] | None,
    event_map: ClusterEventMap | None,
) -> dict[str, QueueingHintMap]:
    """The hint maps the queue was given, or v1.30 event maps as hint maps (``ANY_PROFILE``: all profiles)."""
    if per_profile is not None:
        return dict(per_profile)
    if event_maps is not None:
        return {profile: hint_map_from_event_map(m) for profile, m in event_maps.items()}
    return {ANY_PROFILE: hint_map_from_event_map(event_map or {})}


def _log_hint_error(err: BaseException, plugin: str, event: ClusterEvent, qpi: QueuedPodInfo) -> None:
    logger.error(
        err, "QueueingHintFn returns error", "event", event.event_label, "plugin", plugin, "pod", kobj(qpi.pod)
    )


def _uid_of(qpi: QueuedPodInfo) -> str:
    return qpi.pod.uid


PriorityQueue = SchedulingQueue
