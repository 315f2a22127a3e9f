"""backoffQ: pods that failed recently and wait out a backoff before their next attempt.

The backoff doubles with every failure, from the initial to the maximum duration. The two versions
count failures differently and keep different heaps:

* v1.30: one heap ordered by ``timestamp + initial * 2^(attempts-1)`` (capped); a pod backs off
  while that instant is after now; gated pods never back off.
* v1.34: the count is the pod's rejected attempts, or its consecutive errors when the last attempts
  failed without a plugin to blame (a count of 0 means no backoff). The expiry is computed once per
  failure and, with SchedulerPopFromBackoffQ, truncated to whole seconds: a pod is released at the
  first whole second after it, and pods due in the same second leave by activeQ's order. Pods some
  plugin rejected and pods that failed with an error wait in two heaps (only the first may be popped
  early, when activeQ is empty).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

from kubesched.queue.heap import IndexedHeap
from kubesched.queue.queued_pod_info import QueuedPodInfo

#: The width of v1.34's backoff ordering window.
ORDERING_WINDOW = timedelta(seconds=1)


def _uid_of(qpi: QueuedPodInfo) -> str:
    return qpi.pod.uid


def align_to_window(t: datetime) -> datetime:
    """``t`` truncated to the whole second (Go's Truncate(time.Second))."""
    return t.replace(microsecond=0)


class BackoffQueue:
    """The backoffQ of either version (see the module docstring)."""

    def __init__(
        self,
        clock: Callable[[], datetime],
        initial: timedelta,
        maximum: timedelta,
        *,
        v134: bool,
        pop_from_backoff: bool = False,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None = None,
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
    ) -> None:
        self._clock = clock
        self._initial = initial
        self._max = maximum
        self._v134 = v134
        self._aligned = v134 and pop_from_backoff
        if not v134:
            self._rejected: IndexedHeap[QueuedPodInfo] = IndexedHeap(_uid_of, sort_key=self.backoff_time)
            self._errors: IndexedHeap[QueuedPodInfo] | None = None
            return
        self._errors = IndexedHeap(_uid_of, sort_key=self.backoff_time)
        if not self._aligned:
            self._rejected = IndexedHeap(_uid_of, sort_key=self.backoff_time)
        elif sort_key is not None:
            self._rejected = IndexedHeap(_uid_of, sort_key=lambda q: (self.backoff_time(q), sort_key(q)))
        else:
            assert less is not None, "a backoffQ ordered by priority needs activeQ's order"
            active_less = less

            def by_window_then_active(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
                ta, tb = self.backoff_time(a), self.backoff_time(b)
                return ta < tb if ta != tb else active_less(a, b)

            self._rejected = IndexedHeap(_uid_of, less=by_window_then_active)

    # -- the backoff ---------------------------------------------------------------------------------
    def duration(self, qpi: QueuedPodInfo) -> timedelta:
        """The backoff after the pod's latest failure (initial doubled per earlier failure, capped)."""
        if not self._v134:
            count = qpi.attempts
        else:
            count = qpi.consecutive_errors_count or qpi.unschedulable_count
            if count <= 0:
                return timedelta(0)
        duration = self._initial
        for _ in range(1, count):
            if duration > self._max - duration:
                return self._max
            duration += duration
        return duration

    def backoff_time(self, qpi: QueuedPodInfo) -> datetime:
        """When the pod's backoff ends (v1.34: computed once per failure, aligned with PopFromBackoffQ)."""
        if not self._v134:
            return qpi.timestamp + self.duration(qpi)
        if qpi.backoff_expiration is None:
            if (qpi.consecutive_errors_count or qpi.unschedulable_count) <= 0 or self._max <= timedelta(0):
                qpi.backoff_expiration = datetime.min.replace(tzinfo=qpi.timestamp.tzinfo)
            else:
                end = qpi.timestamp + self.duration(qpi)
                qpi.backoff_expiration = align_to_window(end) if self._aligned else end
        return qpi.backoff_expiration

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        if not self._v134:
            return not qpi.gated and self.backoff_time(qpi) > self._clock()
        now = self._clock()
        return not self.backoff_time(qpi) < (align_to_window(now) if self._aligned else now)

    def release_time(self, qpi: QueuedPodInfo) -> datetime:
        """The earliest instant at which the pod no longer backs off."""
        end = self.backoff_time(qpi)
        if self._aligned:
            return end + ORDERING_WINDOW  # backing off while end >= the current whole second
        return end + timedelta(microseconds=1) if self._v134 else end

    # -- the heaps -------------------------------------------------------------------------------------
    def add(self, qpi: QueuedPodInfo) -> None:
        """Into the heap for its kind of failure (v1.34: rejected by plugins, or an error)."""
        uid = qpi.pod.uid
        if self._errors is not None and not (qpi.unschedulable_plugins or qpi.pending_plugins):
            self._rejected.delete(uid)
            self._errors.add(qpi)
            return
        if self._errors is not None:
            self._errors.delete(uid)
        self._rejected.add(qpi)

    def update(self, qpi: QueuedPodInfo) -> bool:
        """Refresh a pod already here (its object changed); False when it is not here."""
        for heap in self._heaps():
            if qpi.pod.uid in heap:
                heap.update(qpi)
                return True
        return False

    def delete(self, uid: str) -> QueuedPodInfo | None:
        gone = self._rejected.delete(uid)
        if gone is None and self._errors is not None:
            gone = self._errors.delete(uid)
        return gone

    def get(self, uid: str) -> QueuedPodInfo | None:
        qpi = self._rejected.get(uid)
        if qpi is None and self._errors is not None:
            qpi = self._errors.get(uid)
        return qpi

    def __contains__(self, uid: object) -> bool:
        return uid in self._rejected or (self._errors is not None and uid in self._errors)

    def __len__(self) -> int:
        return len(self._rejected) + (len(self._errors) if self._errors is not None else 0)

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        for heap in self._heaps():
            yield from heap

    def len_backoff(self) -> int:
        """Pods some plugin rejected (the ones activeQ may take early)."""
        return len(self._rejected)

    def pop_backoff(self) -> QueuedPodInfo | None:
        """The head of the rejected pods' heap, backing off or not (v1.34's pop from backoffQ)."""
        return self._rejected.pop()

    def pop_completed(self) -> list[QueuedPodInfo]:
        """Every pod whose backoff is over: the rejected ones, then the errors, each in heap order."""
        out: list[QueuedPodInfo] = []
        for heap in self._heaps():
            while True:
                qpi = heap.peek()
                if qpi is None or self.is_backing_off(qpi):
                    break
                heap.pop()
                out.append(qpi)
        return out

    def ordered(self) -> list[QueuedPodInfo]:
        return [q for heap in self._heaps() for q in heap.ordered()]

    def release_times(self) -> list[datetime]:
        return sorted(self.release_time(q) for q in self)

    def _heaps(self) -> tuple[IndexedHeap[QueuedPodInfo], ...]:
        return (self._rejected,) if self._errors is None else (self._rejected, self._errors)
