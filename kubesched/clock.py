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
    """``[due, callback]``: one pending timer. Cancelling clears the callback; the clock drops the
    timer when its turn comes."""

    __slots__ = ()

    def cancel(self) -> None:
        self[1] = None


#: Low bits of a timer's heap key that hold its sequence number (timers due together fire in the
#: order they were scheduled; 2**48 timers is more than any run schedules); the bits above hold its
#: due time in microseconds after the start.
_SEQ_BITS = 48
_ONE_US = timedelta(microseconds=1)


class VirtualClock:
    """Simulated time: it stands still until :meth:`advance_to` moves it, firing due timers in order.

    The heap holds one int per pending timer (due microseconds, then sequence: :data:`_SEQ_BITS`), and
    the timers are found by that key. A run keeps tens of thousands of timers pending (one per running
    pod), and each pop walks the heap from memory: ints compare in one step, where entries holding
    datetimes cost several memory reads per comparison.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._now = self._start = start or datetime(2024, 1, 1, tzinfo=UTC)
        self._keys: list[int] = []
        self._timers: dict[int, _VirtualTimer] = {}
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        due = self._now + timedelta(0, 0.0 if delay < 0.0 else delay)  # (days, seconds): positional is cheaper
        key = (((due - self._start) // _ONE_US) << _SEQ_BITS) + next(self._seq)
        timer = self._timers[key] = _VirtualTimer((due, callback))
        heapq.heappush(self._keys, key)
        return timer

    def next_timer(self) -> datetime | None:
        """When the earliest pending timer is due (None when none is pending)."""
        keys, timers = self._keys, self._timers
        while keys:
            timer = timers[keys[0]]
            if timer[1] is not None:
                return timer[0]  # type: ignore[no-any-return]
            del timers[heapq.heappop(keys)]
        return None

    def advance_to(self, when: datetime) -> int:
        """Move time forward to ``when`` (never backwards), running every timer due by then."""
        fired = 0
        keys, timers, pop = self._keys, self._timers, heapq.heappop
        while keys:
            key = keys[0]
            due, callback = timers[key]
            if callback is None:  # cancelled
                del timers[pop(keys)]
                continue
            if due > when:
                break
            del timers[pop(keys)]
            if due > self._now:
                self._now = due
            callback()  # may add timers: the heap's head is read again
            fired += 1
        if when > self._now:
            self._now = when
        return fired

    def advance(self, seconds: float) -> int:
        return self.advance_to(self._now + timedelta(seconds=seconds))
