"""The one driver loop: public surface only, clock timers for the queue's flushes, runs that end."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.config import load_config
from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.recording.summary import OutcomeListener
from kubesched.scheduler import Scheduler
from kubesched.sim.driver import Driver
from kubesched.sim.report import format_summary
from kubesched.sim.simulate import START_TIME, simulate
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import ErrorBinder, PermitPlugin, config_dict, profile_with, ref

#: Everything a driver may use of a Scheduler.
PUBLIC_SURFACE = {
    "start",
    "schedule_next",
    "run_pending_tasks",
    "idle",
    "backoff_end",
    "waiting_pod_count",
    "rejecting_plugins",
    "park",
    "add_recorder",
}


class PublicOnly:
    """A Scheduler seen through its public driver surface only: anything else fails the test."""

    def __init__(self, scheduler: Scheduler) -> None:
        object.__setattr__(self, "_scheduler", scheduler)

    def __getattr__(self, name: str) -> Any:
        if name not in PUBLIC_SURFACE:
            raise AssertionError(f"the driver reached for Scheduler.{name}")
        return getattr(object.__getattribute__(self, "_scheduler"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AssertionError(f"the driver set Scheduler.{name}")


def _build(
    config: dict[str, Any] | None = None,
    *,
    public_only: bool = False,
    detect_loops: bool = True,
    objects: tuple[dict[str, Any], ...] = (),
    version: str | None = None,
) -> tuple[VirtualClock, EmbeddedCluster, Scheduler, Driver, list[tuple[float, str, str]]]:
    clock = VirtualClock(START_TIME)
    cluster = EmbeddedCluster(clock=clock.now)
    for obj in objects:
        cluster.create(obj)
    scheduler = Scheduler(
        cluster,
        load_config(config, features=feature_gates(version)),
        clock=clock,
        rng=random.Random(0),
        tie_break="name",
    )
    attempts: list[tuple[float, str, str]] = []
    scheduler.add_recorder(
        OutcomeListener(lambda o: attempts.append(((clock.now() - START_TIME).total_seconds(), o.pod, o.result)))
    )
    target: Any = PublicOnly(scheduler) if public_only else scheduler
    driver = Driver(cluster, target, clock, detect_loops=detect_loops)
    driver.start()
    return clock, cluster, scheduler, driver, attempts


def _permit_config(timeout: float = 30) -> dict[str, Any]:
    plugins = {"permit": {"enabled": [{"name": ref(PermitPlugin)}]}}
    return config_dict(profile_with(plugins, {ref(PermitPlugin): {"mode": "wait", "timeout": timeout}}))


def _error_binder_config() -> dict[str, Any]:
    plugins = {"bind": {"enabled": [{"name": ref(ErrorBinder)}], "disabled": [{"name": "*"}]}}
    return config_dict(profile_with(plugins))


# -- public surface --------------------------------------------------------------------------------
def test_the_driver_uses_only_the_schedulers_public_surface_settling_and_in_time() -> None:
    _, cluster, _, driver, attempts = _build(public_only=True, objects=(node_dict("n1", cpu="1"),))
    first = pod_dict("a", cpu="1")
    first["metadata"]["annotations"] = {"kubesched.io/duration": "1m"}
    cluster.create(first)
    cluster.create(pod_dict("b", cpu="1"))
    driver.settle()
    driver.run()
    assert [(p, r) for _, p, r in attempts] == [
        ("default/a", "Scheduled"),
        ("default/b", "Unschedulable"),
        ("default/b", "Scheduled"),
    ]
    assert driver.completed == {"default/a": "n1"}
    assert cluster.get("Pod", "default", "b")["spec"]["nodeName"] == "n1"


def test_loop_detection_and_permit_waits_go_through_the_public_surface_too() -> None:
    _, cluster, _, driver, _ = _build(_error_binder_config(), public_only=True, objects=(node_dict("n1"),))
    cluster.create(pod_dict("p"))
    driver.settle()
    assert driver.looping == ["default/p"]
    _, cluster, _, driver, _ = _build(_permit_config(), public_only=True, objects=(node_dict("n1"),))
    cluster.create(pod_dict("w"))
    driver.settle()
    assert driver.seconds() >= 30


# -- timers ----------------------------------------------------------------------------------------
def test_backoff_ends_at_the_next_one_second_flush() -> None:
    clock, cluster, scheduler, driver, attempts = _build(
        _error_binder_config(), detect_loops=False, objects=(node_dict("n1"),), version="1.30"
    )
    clock.advance_to(START_TIME + timedelta(seconds=0.5))
    cluster.create(pod_dict("p"))
    driver.drain()
    assert scheduler.schedule_next()
    driver.drain()
    assert attempts == [(0.5, "default/p", "Error")]
    # Backoff (1 s) ends at 1.5; the flush that moves the pod runs every whole second.
    clock.advance_to(START_TIME + timedelta(seconds=1.9))
    assert scheduler.idle() and scheduler.backoff_end() == START_TIME + timedelta(seconds=1.5)
    clock.advance_to(START_TIME + timedelta(seconds=2))
    assert not scheduler.idle() and scheduler.backoff_end() is None


def test_v134_backoff_ends_at_the_whole_second_after_its_window() -> None:
    """SchedulerPopFromBackoffQ: a backoff ending at 1.5 s is aligned down to 1 s, and the pod backs off
    while that window is the current one: it is released by the flush at 2 s."""
    clock, cluster, scheduler, driver, attempts = _build(
        _error_binder_config(), detect_loops=False, objects=(node_dict("n1"),), version="1.34"
    )
    clock.advance_to(START_TIME + timedelta(seconds=0.5))
    cluster.create(pod_dict("p"))
    driver.drain()
    assert scheduler.schedule_next()
    driver.drain()
    assert attempts == [(0.5, "default/p", "Error")]
    clock.advance_to(START_TIME + timedelta(seconds=1.9))
    assert scheduler.idle() and scheduler.backoff_end() == START_TIME + timedelta(seconds=2)
    clock.advance_to(START_TIME + timedelta(seconds=2))
    assert not scheduler.idle() and scheduler.backoff_end() is None


def test_settle_lets_backoffs_finish_on_the_flush_ticks() -> None:
    _, cluster, _, driver, attempts = _build(_error_binder_config(), objects=(node_dict("n1"),))
    cluster.create(pod_dict("p"))
    driver.settle()
    # Binding fails just after the 1 ms cycle; its 1 s backoff ends at 1.001, flushed at the 2 s tick.
    assert [r for _, _, r in attempts] == ["Error", "Error"]
    assert [t for t, _, _ in attempts] == pytest.approx([0.001, 2.001])
    assert driver.looping == ["default/p"]


def test_unschedulable_leftovers_are_retried_after_five_minutes() -> None:
    _, cluster, _, driver, attempts = _build(objects=(node_dict("n1"),))
    cluster.create(pod_dict("stuck", spec={"nodeSelector": {"disk": "ssd"}}))
    driver.at(600, lambda: cluster.create(pod_dict("later")))
    driver.run()
    times = [t for t, pod, _ in attempts if pod == "default/stuck"]
    # Rejected at 0; the 30 s leftover flush moves it once it has waited more than 5 minutes: at 330 s.
    assert times[:2] == [0.0, 330.0]
    assert 600 <= driver.seconds() < 602
    assert cluster.get("Pod", "default", "later")["spec"]["nodeName"] == "n1"
    assert "default/stuck" not in driver.looping


# -- runs that end (issue 12) ----------------------------------------------------------------------
@pytest.mark.parametrize("burst", [False, True])
def test_pods_that_a_permit_wait_keeps_timing_out_are_parked_as_looping(burst: bool) -> None:
    pods = [pod_dict(f"p{i}") for i in range(3)]
    r = simulate([node_dict("n1"), node_dict("n2"), *pods], _permit_config(), burst=burst, tie_break="name")
    assert r.final == {f"default/p{i}": None for i in range(3)}
    assert r.looping, "a pod retried with nothing changing must be parked"
    for pod in r.looping:
        tried = [a for a in r.attempts if a["pod"] == pod]
        assert len(tried) == 2
        assert all(
            a["message"].endswith(f"rejected due to timeout after waiting 30s at plugin {ref(PermitPlugin)}.")
            for a in tried
        )
    summary = format_summary(r)
    assert "rejected due to timeout after waiting 30s at plugin" in summary
    assert "stopped retrying it" in summary


#: v1.34 retries the pod once more: the plugin registers every event, and the pod's own status update
#: (PodScheduled=False after the timeout) is one; the second failure writes the same status, so no more.
@pytest.mark.parametrize(("version", "attempts", "seconds"), [("1.30", 1, 7), ("1.34", 2, 14)])
def test_a_single_waiting_pod_times_out_once_and_the_run_ends(version: str, attempts: int, seconds: int) -> None:
    r = simulate([node_dict("n1"), pod_dict("p")], _permit_config(timeout=5), emulated_version=version)
    assert [a["result"] for a in r.attempts] == ["Unschedulable"] * attempts
    assert 5 * attempts <= r.virtual_seconds < seconds


def test_seconds_follow_the_clock_through_every_move() -> None:
    clock, _, _, driver, _ = _build()
    assert driver.seconds() == 0.0
    clock.advance(1.5)
    assert driver.seconds() == 1.5
    assert driver.seconds() == 1.5
    seen: list[float] = []
    driver.at(4.25, lambda: seen.append(driver.seconds()))
    clock.advance(10)
    assert seen == [4.25]
    assert driver.seconds() == 11.5
