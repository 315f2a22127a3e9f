"""Clocks: where the scheduler's sense of time comes from.

Everything that waits (backoff, periodic flushes, assumed-pod expiry, permit timeouts) reads a
:class:`Clock` and schedules callbacks on it. The real clock uses wall time and timer threads; the
virtual clock only moves when the simulator advances it, running due callbacks in order, so a day of
cluster time passes without a single sleep.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> datetime: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback`` once, ``delay`` seconds from now."""
        ...


class RealClock:
    """Wall-clock time (UTC) with thread timers."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        timer = threading.Timer(max(delay, 0.0), callback)
        timer.daemon = True
        timer.start()
        return timer


class _VirtualTimer(list[Any]):
    """``[due, sequence, callback]``: the heap entry is the handle, so scheduling a timer makes one
    object (heap order is due time, then sequence; the callback is never compared). Cancelling
    clears the callback, and the clock drops the entry when it reaches the heap's head."""

    __slots__ = ()

    def cancel(self) -> None:
        self[2] = None


class VirtualClock:
    """Simulated time: it stands still until :meth:`advance_to` moves it, firing due timers in order."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2024, 1, 1, tzinfo=UTC)
        self._timers: list[_VirtualTimer] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _VirtualTimer((self._now + timedelta(seconds=0.0 if delay < 0.0 else delay), next(self._seq), callback))
        heapq.heappush(self._timers, timer)
        return timer

    def next_timer(self) -> datetime | None:
        """When the earliest pending timer is due (None when none is pending)."""
        timers = self._timers
        while timers and timers[0][2] is None:
            heapq.heappop(timers)
        return timers[0][0] if timers else None

    def advance_to(self, when: datetime) -> int:
        """Move time forward to ``when`` (never backwards), running every timer due by then."""
        fired = 0
        timers = self._timers
        while timers:
            due, _, callback = timers[0]
            if callback is None:  # cancelled
                heapq.heappop(timers)
                continue
            if due > when:
                break
            heapq.heappop(timers)
            if due > self._now:
                self._now = due
            callback()  # may add timers: the heap's head is read again
            fired += 1
        if when > self._now:
            self._now = when
        return fired

    def advance(self, seconds: float) -> int:
        return self.advance_to(self._now + timedelta(seconds=seconds))
