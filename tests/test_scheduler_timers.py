"""The scheduler's housekeeping runs on its clock's timers, whatever the clock: flushes and their periods."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from kubesched.clock import RealClock, VirtualClock
from kubesched.config import load_config
from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.scheduler import BACKOFF_FLUSH_PERIOD, LEFTOVER_FLUSH_PERIOD, Scheduler


class RecordingClock(RealClock):
    """Wall time, but timers are only noted (so nothing runs on a thread in the test)."""

    def __init__(self) -> None:
        self.timers: list[tuple[float, Callable[[], None], _Handle]] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> _Handle:
        handle = _Handle()
        self.timers.append((delay, callback, handle))
        return handle


class _Handle:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def test_start_arms_the_backoff_and_leftover_flushes_and_each_tick_re_arms() -> None:
    clock = RecordingClock()
    scheduler = Scheduler(EmbeddedCluster(), load_config(None, features=feature_gates("1.30")), clock=clock)
    scheduler.start()
    assert sorted(delay for delay, _, _ in clock.timers) == [BACKOFF_FLUSH_PERIOD, LEFTOVER_FLUSH_PERIOD] == [1.0, 30.0]
    backoff_tick = next(cb for delay, cb, _ in clock.timers if delay == BACKOFF_FLUSH_PERIOD)
    backoff_tick()
    assert [delay for delay, _, _ in clock.timers].count(BACKOFF_FLUSH_PERIOD) == 2
    scheduler.stop()
    assert all(handle.cancelled for _, _, handle in clock.timers[-2:])
    backoff_tick()  # a tick already running when the scheduler stops does not re-arm
    assert len(clock.timers) == 3


def test_v134_flushes_backoff_on_whole_seconds() -> None:
    """With SchedulerPopFromBackoffQ the backoffQ flush ticks on the whole seconds its windows end on."""
    start = datetime(2024, 1, 1, 0, 0, 0, 250_000, tzinfo=UTC)
    clock = VirtualClock(start)
    scheduler = Scheduler(EmbeddedCluster(clock=clock.now), load_config(None), clock=clock)
    scheduler.start()
    assert clock.next_timer() == datetime(2024, 1, 1, 0, 0, 1, tzinfo=UTC)
    clock.advance_to(datetime(2024, 1, 1, 0, 0, 1, tzinfo=UTC))
    assert clock.next_timer() == datetime(2024, 1, 1, 0, 0, 2, tzinfo=UTC)
    scheduler.stop()


def test_on_a_virtual_clock_the_flushes_tick_as_time_passes_and_stop_with_the_scheduler() -> None:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    clock = VirtualClock(start)
    scheduler = Scheduler(EmbeddedCluster(clock=clock.now), load_config(None), clock=clock)
    scheduler.start()
    assert clock.advance_to(start + timedelta(seconds=95)) == 95 + 3  # 95 backoff ticks, 3 leftover ticks
    assert clock.next_timer() == start + timedelta(seconds=96)
    scheduler.stop()
    assert clock.next_timer() is None
