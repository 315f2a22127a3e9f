"""Clocks: the virtual clock's timer semantics, and a smoke test of the real one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from kubesched.clock import RealClock, VirtualClock

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_timers_fire_in_due_order_with_time_set_to_each_due() -> None:
    clock = VirtualClock(T0)
    fired: list[tuple[str, datetime]] = []

    def record(name: str) -> Callable[[], None]:
        return lambda: fired.append((name, clock.now()))

    for name, delay in (("c", 3), ("a", 1), ("b", 2), ("a2", 1), ("late", 10)):
        clock.call_later(delay, record(name))
    assert clock.next_timer() == at(1)
    assert clock.advance_to(at(5)) == 4
    assert fired == [("a", at(1)), ("a2", at(1)), ("b", at(2)), ("c", at(3))]  # ties keep insertion order
    assert clock.now() == at(5)
    assert clock.next_timer() == at(10)
    assert clock.advance(5) == 1 and fired[-1] == ("late", at(10))
    assert clock.next_timer() is None


def test_cancelled_timers_do_not_fire() -> None:
    clock = VirtualClock(T0)
    fired: list[str] = []
    first = clock.call_later(1, lambda: fired.append("first"))
    clock.call_later(2, lambda: fired.append("second"))
    first.cancel()
    assert clock.next_timer() == at(2)
    assert clock.advance(10) == 1 and fired == ["second"]


def test_a_timer_can_cancel_a_later_one() -> None:
    clock = VirtualClock(T0)
    fired: list[str] = []
    later = clock.call_later(2, lambda: fired.append("later"))
    clock.call_later(1, later.cancel)
    clock.advance(5)
    assert fired == []


def test_timers_scheduled_by_callbacks_fire_when_due_within_the_same_advance() -> None:
    clock = VirtualClock(T0)
    fired: list[tuple[str, datetime]] = []

    def chain() -> None:
        fired.append(("chain", clock.now()))
        clock.call_later(1, lambda: fired.append(("next", clock.now())))
        clock.call_later(100, lambda: fired.append(("too late", clock.now())))

    clock.call_later(1, chain)
    assert clock.advance_to(at(3)) == 2
    assert fired == [("chain", at(1)), ("next", at(2))]
    assert clock.next_timer() == at(101)


def test_time_never_goes_backwards() -> None:
    clock = VirtualClock(T0)
    clock.advance(10)
    fired: list[datetime] = []
    clock.call_later(-5, lambda: fired.append(clock.now()))  # negative delay: due now
    assert clock.next_timer() == at(10)
    assert clock.advance_to(at(3)) == 0  # the past: nothing fires, time stays
    assert clock.now() == at(10)
    assert clock.advance_to(at(10)) == 1 and fired == [at(10)]
    assert clock.now() == at(10)


def test_default_start_is_fixed_and_aware() -> None:
    now = VirtualClock().now()
    assert now == VirtualClock().now() and now.tzinfo is not None


def test_real_clock_smoke() -> None:
    clock = RealClock()
    before = clock.now()
    assert before.tzinfo is not None
    done = threading.Event()
    clock.call_later(0.01, done.set)
    assert done.wait(5), "timer never fired"
    cancelled = threading.Event()
    handle = clock.call_later(0.1, cancelled.set)
    handle.cancel()
    assert not cancelled.wait(0.15)
    assert clock.now() >= before


def test_cancelled_timers_ahead_of_a_due_one_are_skipped_and_time_stops_at_the_target() -> None:
    clock = VirtualClock(datetime(2024, 1, 1, tzinfo=UTC))
    fired: list[str] = []
    clock.call_later(1, lambda: fired.append("cancelled")).cancel()
    clock.call_later(2, lambda: fired.append("due"))
    clock.call_later(5, lambda: fired.append("later"))
    assert clock.advance(3) == 1
    assert fired == ["due"]
    assert clock.now() == datetime(2024, 1, 1, 0, 0, 3, tzinfo=UTC)
