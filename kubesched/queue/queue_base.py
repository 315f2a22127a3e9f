"""What the scheduling queue shares with its readers: sub-queue names, errors, metrics hooks, the
nominations it keeps, and the read-only views of what waits where.

:class:`QueueBase` holds the inspection side of :class:`~kubesched.queue.scheduling_queue.SchedulingQueue`
(the part that moves pods lives there).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from kubesched.api.objects import Pod
from kubesched.klog import Logger, kobj
from kubesched.queue.backoff_queue import BackoffQueue
from kubesched.queue.heap import IndexedHeap
from kubesched.queue.hints import ANY_PROFILE
from kubesched.queue.in_flight import InFlight
from kubesched.queue.nominator import Nominator
from kubesched.queue.queued_pod_info import QueuedPodInfo
from kubesched.queue.unschedulable_pods import UnschedulablePods

__all__ = [
    "ACTIVE",
    "ANY_PROFILE",
    "BACKOFF",
    "GATED",
    "LOGGED_QUEUE_NAMES",
    "UNSCHEDULABLE",
    "QueueBase",
    "QueueError",
    "QueueMetrics",
]

# Sub-queue names, as the scheduler_pending_pods / scheduler_queue_incoming_pods_total labels spell them.
ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"
#: The sub-queues as kube-scheduler's log lines name them.
LOGGED_QUEUE_NAMES = {ACTIVE: "Active", BACKOFF: "Backoff", UNSCHEDULABLE: "Unschedulable", GATED: "Unschedulable"}

logger = Logger("kubesched.queue.scheduling_queue")


class QueueError(Exception):
    """A request the queue refuses (kube-scheduler returns these as errors and only logs them)."""


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


class QueueBase:
    """Nominations and inspection of the queue's parts (every method takes the queue's lock)."""

    _lock: threading.RLock
    _nominator: Nominator
    _active: IndexedHeap[QueuedPodInfo]
    _backoff: BackoffQueue
    _unschedulable: UnschedulablePods
    _in_flight: InFlight
    _metrics: QueueMetrics | None
    _unschedulable_reason: Any
    _max_in_unschedulable: timedelta
    _last_counts: tuple[int, ...]

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
        with self._lock:
            return self._counts()

    def pending_pod_list(self) -> list[Pod]:
        """Every pending pod: activeQ, then backoffQ, then the unschedulable pool (debugging)."""
        with self._lock:
            return (
                [q.pod for q in self._active.ordered()]
                + [q.pod for q in self._backoff.ordered()]
                + [q.pod for q in self._unschedulable.values()]
            )

    def pods_in_active_q(self) -> list[Pod]:
        """activeQ in pop order."""
        with self._lock:
            return [q.pod for q in self._active.ordered()]

    def get_pod(self, uid: str) -> QueuedPodInfo | None:
        """The queued info of a pod waiting in any sub-queue (not of one being scheduled)."""
        with self._lock:
            return self._active.get(uid) or self._backoff.get(uid) or self._unschedulable.get(uid)

    def queue_of(self, uid: str) -> str | None:
        """Which sub-queue holds the pod: active, backoff, unschedulable, gated; None if none."""
        with self._lock:
            return self._where(uid)

    def in_flight(self) -> list[Pod]:
        """Pods popped and not yet done."""
        with self._lock:
            return self._in_flight.pods()

    def in_flight_event_count(self) -> int:
        """Cluster events kept for the pods in flight (v1.34)."""
        with self._lock:
            return self._in_flight.event_count()

    def next_backoff_expiry(self) -> datetime | None:
        """When the earliest backoff in backoffQ ends (None when backoffQ is empty)."""
        with self._lock:
            times = self._backoff.release_times()
            return times[0] if times else None

    def backoff_expiries(self) -> list[datetime]:
        """When each pod in backoffQ may leave it (its backoff over), ascending."""
        with self._lock:
            return self._backoff.release_times()

    def next_unschedulable_timeout(self) -> datetime | None:
        """The earliest instant after which a leftover flush would move some unschedulable pod.

        A pod moves once ``now - timestamp`` *exceeds* the maximum, i.e. at any time strictly after
        the returned one.
        """
        with self._lock:
            if not len(self._unschedulable):
                return None
            return min(q.timestamp for q in self._unschedulable.values()) + self._max_in_unschedulable

    def backoff_duration(self, qpi: QueuedPodInfo) -> timedelta:
        """The pod's current backoff: initial x 2^(failures-1), capped at the maximum."""
        return self._backoff.duration(qpi)

    # == bookkeeping (lock held) ===================================================================
    def _where(self, uid: str) -> str | None:
        if uid in self._active:
            return ACTIVE
        if uid in self._backoff:
            return BACKOFF
        if uid in self._unschedulable:
            return GATED if self._unschedulable.is_gated(uid) else UNSCHEDULABLE
        return None

    def _counts(self) -> dict[str, int]:
        gated = self._unschedulable.gated_count
        return {
            ACTIVE: len(self._active),
            BACKOFF: len(self._backoff),
            UNSCHEDULABLE: len(self._unschedulable) - gated,
            GATED: gated,
        }

    def _publish_counts(self) -> None:
        if self._metrics is None:
            return
        gated = self._unschedulable.gated_count
        active, backoff, unschedulable = len(self._active), len(self._backoff), len(self._unschedulable) - gated
        counts = (active, backoff, unschedulable, gated)
        if counts != self._last_counts:
            self._last_counts = counts
            # A dict display: a third of what dict(zip(...)) costs, and this runs twice an arrival.
            self._metrics.pending_pods_changed(
                {ACTIVE: active, BACKOFF: backoff, UNSCHEDULABLE: unschedulable, GATED: gated}
            )

    def _incoming(self, queue: str, event: str, pod: Pod) -> None:
        """``pod`` entered ``queue`` because of ``event``: counted, and logged at V5."""
        if v := logger.v(5):
            v.info(
                "Pod moved to an internal scheduling queue",
                "pod",
                kobj(pod),
                "event",
                event,
                "queue",
                LOGGED_QUEUE_NAMES[queue],
            )
        if self._metrics is not None:
            self._metrics.incoming_pod(queue, event)

    def _count_reasons(self, qpi: QueuedPodInfo, delta: int) -> None:
        if self._unschedulable_reason is not None and (qpi.unschedulable_plugins or qpi.pending_plugins):
            self._unschedulable_reason(qpi.pod.scheduler_name, qpi.rejector_plugins, delta)
