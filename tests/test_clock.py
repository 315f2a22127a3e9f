"""Clocks: the virtual clock's timer semantics, and a smoke test of the real one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            # schedule: a delay from a few values (ties) or any, sub-microsecond parts included
            st.tuples(st.just("later"), st.one_of(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 1e-7]), st.floats(0, 50))),
            st.tuples(st.just("cancel"), st.integers(0, 40)),
            st.tuples(st.just("advance"), st.floats(0, 20)),
        ),
        max_size=60,
    )
)
def test_timers_fire_as_a_sorted_list_of_due_times_says(ops: list[tuple[str, float]]) -> None:
    """Against a plain model: every timer fires once, in (due time, order scheduled) order, with the
    clock at its due time, unless cancelled first; time ends at the furthest target."""
    clock = VirtualClock(T0)
    fired: list[tuple[int, datetime]] = []
    handles: list[Any] = []
    model: list[tuple[datetime, int]] = []  # (due, index) of pending timers
    cancelled: set[int] = set()
    want: list[tuple[int, datetime]] = []
    now = T0

    def note(i: int) -> Callable[[], None]:
        return lambda: fired.append((i, clock.now()))

    for op, value in ops:
        if op == "later":
            i = len(handles)
            handles.append(clock.call_later(value, note(i)))
            model.append((now + timedelta(seconds=max(value, 0.0)), i))
        elif op == "cancel" and handles:
            i = int(value) % len(handles)
            handles[i].cancel()
            cancelled.add(i)
        elif op == "advance":
            target = now + timedelta(seconds=value)
            due = sorted(m for m in model if m[0] <= target)
            want += [(i, max(d, now)) for d, i in due if i not in cancelled]
            model = [m for m in model if m[0] > target]
            clock.advance_to(target)
            now = max(now, target)
    assert fired == want
    assert clock.now() == now
    pending = sorted(d for d, i in model if i not in cancelled)
    assert clock.next_timer() == (pending[0] if pending else None)
