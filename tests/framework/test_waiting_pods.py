"""Pods waiting at Permit (framework/runtime/waiting_pods_map.go): allow, reject, timeout, callbacks."""

from __future__ import annotations

import pytest

from kubesched.clock import VirtualClock
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import WaitingPod, WaitingPods
from tests.factories import make_pod


def waiting(waits: dict[str, float]) -> tuple[WaitingPod, VirtualClock, list[Status | None]]:
    clock = VirtualClock()
    results: list[Status | None] = []
    pod = WaitingPod(make_pod("p"), waits, clock)
    pod.on_done(results.append)
    return pod, clock, results


def test_allowed_by_every_plugin() -> None:
    pod, clock, results = waiting({"A": 10, "B": 20})
    assert pod.pending_plugins == {"A", "B"}
    pod.allow("A")
    assert results == [] and pod.pending_plugins == {"B"}
    pod.allow("B")
    assert results == [None]
    assert clock.next_timer() is None  # timers stopped once resolved
    clock.advance(60)
    assert results == [None]


def test_reject() -> None:
    pod, clock, results = waiting({"A": 10, "B": 20})
    pod.allow("A")
    pod.reject("B", "not now")
    assert results == [Status(Code.UNSCHEDULABLE, ("not now",), plugin="B")]
    pod.allow("B")  # resolution is final
    pod.reject("A", "again")
    clock.advance(60)
    assert len(results) == 1 and clock.next_timer() is None


def test_reject_by_a_plugin_that_is_not_waiting() -> None:
    pod, _, results = waiting({"A": 10})
    pod.reject("Other", "no")
    assert results == [Status(Code.UNSCHEDULABLE, ("no",), plugin="Other")]


@pytest.mark.parametrize(
    ("timeout", "text"),
    [
        (10, "10s"),
        (10.0, "10s"),
        (1.5, "1.5s"),
        (0.5, "500ms"),
        (90, "1m30s"),
        (600, "10m0s"),
        (900, "15m0s"),
        (3600, "1h0m0s"),
        (3725, "1h2m5s"),
    ],
)
def test_timeout_message_matches_kube_scheduler(timeout: float, text: str) -> None:
    """Go formats the time.Duration with %v: ``rejected due to timeout after waiting 10s at plugin X``."""
    _, clock, results = waiting({"X": timeout})
    clock.advance(timeout - 0.001)
    assert results == []
    clock.advance(0.001)
    assert results == [
        Status(Code.UNSCHEDULABLE, (f"rejected due to timeout after waiting {text} at plugin X",), plugin="X")
    ]


def test_first_timeout_wins() -> None:
    _, clock, results = waiting({"Slow": 30, "Fast": 10})
    clock.advance(100)
    assert len(results) == 1 and results[0] is not None and results[0].plugin == "Fast"


def test_allowing_plugin_stops_its_own_timer() -> None:
    pod, clock, results = waiting({"A": 10, "B": 20})
    pod.allow("A")
    clock.advance(15)  # A's timeout would have fired here; A already allowed
    assert results == []
    pod.allow("B")
    assert results == [None]


def test_zero_timeout_message() -> None:
    _, clock, results = waiting({"X": 0})
    clock.advance(0)
    assert results and results[0] is not None
    assert results[0].message == "rejected due to timeout after waiting 0s at plugin X"


def test_on_done_after_resolution_fires_at_once_with_the_result() -> None:
    pod, _, _ = waiting({"A": 10})
    pod.reject("A", "no")
    late: list[Status | None] = []
    pod.on_done(late.append)
    assert late == [Status(Code.UNSCHEDULABLE, ("no",), plugin="A")]

    allowed, _, _ = waiting({"A": 10})
    allowed.allow("A")
    later: list[Status | None] = []
    allowed.on_done(later.append)
    assert later == [None]


def test_every_callback_is_called_once() -> None:
    pod, _, first = waiting({"A": 10})
    second: list[Status | None] = []
    pod.on_done(second.append)
    pod.allow("A")
    pod.allow("A")
    assert first == [None] and second == [None]


def test_waiting_pods_registry() -> None:
    registry = WaitingPods()
    clock = VirtualClock()
    a = WaitingPod(make_pod("a", uid="ua"), {"P": 1}, clock)
    b = WaitingPod(make_pod("b", uid="ub"), {"P": 1}, clock)
    registry.add(a)
    registry.add(b)
    assert registry.get("ua") is a and registry.get("nope") is None
    assert set(registry.all()) == {a, b}
    registry.remove("ua")
    registry.remove("ua")
    assert registry.all() == [b]
