"""The simulation driver (kubesched.sim.simulate): arrival modes, retries, loop detection, results."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kubesched.sim.simulate import START_TIME, Simulation, SimulationError, simulate
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import (
    AlwaysErrorPreFilter,
    ErrorBinder,
    LabelFilter,
    PermitPlugin,
    config_dict,
    profile_with,
    ref,
)


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def pod_of_class(name: str, cls: str, cpu: str) -> dict[str, Any]:
    pod = pod_dict(name, cpu=cpu, spec={"priorityClassName": cls})
    del pod["spec"]["priority"]
    return pod


PREEMPTION = [
    priority_class("low", 0),
    priority_class("high", 100),
    node_dict("n1", cpu="2"),
    pod_of_class("lo", "low", "2"),
    pod_of_class("hi", "high", "2"),
]


def summary(attempts: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(a["pod"], a["attempt"], a["result"], a.get("node"), a.get("victims")) for a in attempts]


def test_one_at_a_time_arrival_preempts_then_retries_after_the_victim_is_gone() -> None:
    r = simulate(PREEMPTION)
    assert summary(r.attempts) == [
        ("default/lo", 1, "Scheduled", "n1", None),
        ("default/hi", 1, "Unschedulable", None, ["default/lo"]),
        ("default/hi", 2, "Scheduled", "n1", None),
    ]
    assert r.attempts[1]["nominatedNode"] == "n1"
    assert r.final == {"default/lo": None, "default/hi": "n1"}
    assert r.deleted == ["default/lo"]
    assert r.nominated == {}
    assert r.never_attempted == []
    assert r.looping == []
    # The retry waited out the backoff (1s) on the virtual clock.
    assert r.virtual_seconds >= 1


def test_burst_arrival_lets_the_queue_order_decide() -> None:
    r = simulate(PREEMPTION, burst=True)
    assert summary(r.attempts) == [
        ("default/hi", 1, "Scheduled", "n1", None),
        ("default/lo", 1, "Unschedulable", None, None),
    ]
    assert r.final == {"default/lo": None, "default/hi": "n1"}
    assert r.deleted == []


def test_looping_pod_is_attempted_twice_then_parked() -> None:
    cfg = config_dict(profile_with({"preFilter": {"enabled": [{"name": ref(AlwaysErrorPreFilter)}]}}))
    r = simulate([node_dict("n1"), pod_dict("loop")], cfg)
    assert [(a["pod"], a["attempt"], a["result"]) for a in r.attempts] == [
        ("default/loop", 1, "Error"),
        ("default/loop", 2, "Error"),
    ]
    assert r.attempts[0]["message"] == f'running PreFilter plugin "{ref(AlwaysErrorPreFilter)}": boom'
    assert r.looping == ["default/loop"]
    assert r.final == {"default/loop": None}
    assert r.never_attempted == []


def test_unschedulable_pod_waits_for_a_helpful_event_and_the_run_ends() -> None:
    cfg = config_dict(profile_with({"filter": {"enabled": [{"name": ref(LabelFilter)}]}}))
    r = simulate([node_dict("n1"), pod_dict("p")], cfg)
    assert [(a["result"], a["attempt"]) for a in r.attempts] == [("Unschedulable", 1)]
    assert r.looping == []  # it has a rejector: an event could help, so it is not a loop
    assert r.final == {"default/p": None}


def test_pods_of_unknown_scheduler_names_are_never_attempted_with_a_warning() -> None:
    r = simulate([node_dict("n1"), pod_dict("ok"), pod_dict("stray", spec={"schedulerName": "nobody"})])
    assert r.final == {"default/ok": "n1", "default/stray": None}
    assert r.never_attempted == ["default/stray"]
    assert 'pod default/stray: schedulerName "nobody" matches no profile; never scheduled' in r.warnings


def test_bound_pods_in_the_scenario_are_not_pending() -> None:
    r = simulate([node_dict("n1", cpu="2"), pod_dict("running", cpu="2", node_name="n1"), pod_dict("p", cpu="1")])
    assert list(r.final) == ["default/p"]
    assert r.final["default/p"] is None
    assert "Insufficient cpu" in r.attempts[0]["message"]


def test_virtual_time_moves_without_sleeping(monkeypatch: pytest.MonkeyPatch) -> None:
    """The preemptor's retry waits out its 1s backoff on the virtual clock, not in real time (the
    backoff flush that moves it runs every second, so it leaves backoff at the tick after)."""

    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"the simulator slept {seconds}s")

    monkeypatch.setattr(time, "sleep", no_sleep)
    objects: list[dict[str, Any]] = [priority_class("low", 0), priority_class("high", 100), node_dict("n1", cpu="1")]
    objects += [pod_of_class(f"lo{i}", "low", "1") for i in range(3)]
    objects += [pod_of_class(f"hi{i}", "high", "1") for i in range(3)]
    r = simulate(objects)
    assert 1 <= r.virtual_seconds < 3
    # Equal priorities never preempt each other: only hi0 displaces lo0.
    assert r.final == {
        "default/lo0": None,
        "default/lo1": None,
        "default/lo2": None,
        "default/hi0": "n1",
        "default/hi1": None,
        "default/hi2": None,
    }
    assert r.deleted == ["default/lo0"]
    assert [a["attempt"] for a in r.attempts if a["pod"] == "default/hi0"] == [1, 2]


def _placement(seed: int) -> dict[str, str | None]:
    objects = [node_dict(f"n{i}") for i in range(6)] + [pod_dict(f"p{i}") for i in range(4)]
    return simulate(objects, seed=seed, tie_break="random").final


def test_random_tie_break_is_deterministic_per_seed() -> None:
    assert _placement(3) == _placement(3)
    assert len({tuple(sorted(_placement(s).items(), key=lambda kv: kv[0])) for s in range(6)}) > 1


def test_tie_break_by_name_ignores_the_seed() -> None:
    objects = [node_dict(f"n{i}") for i in range(3)] + [pod_dict("p")]
    assert simulate(objects, seed=1, tie_break="name").final == {"default/p": "n0"}
    assert simulate(objects, seed=2, tie_break="name").final == {"default/p": "n0"}


def test_simulation_class_steps() -> None:
    from kubesched.config import load_config
    from kubesched.scenario.pipeline import load_scenario

    sim = Simulation(load_scenario([node_dict("n1"), pod_dict("p")]), load_config(None), seed=0)
    sim.load()
    assert [m.obj["metadata"]["name"] for m in sim.pending] == ["p"]
    assert sim.clock.now() == START_TIME
    result = sim.run()
    assert result.final == {"default/p": "n1"}
    assert result.summaries[0].result == "Scheduled"
    assert result.cluster is sim.cluster


def test_bad_input_is_a_simulation_error() -> None:
    with pytest.raises(SimulationError):
        simulate([42])


def test_a_binding_cycle_that_always_fails_is_parked_after_two_attempts() -> None:
    plugins = {"bind": {"enabled": [{"name": ref(ErrorBinder)}], "disabled": [{"name": "*"}]}}
    r = simulate([node_dict("n1"), pod_dict("p")], config_dict(profile_with(plugins)))
    assert [(a["pod"], a["attempt"], a["result"]) for a in r.attempts] == [
        ("default/p", 1, "Error"),
        ("default/p", 2, "Error"),
    ]
    assert r.looping == ["default/p"]
    assert r.final == {"default/p": None}


#: v1.34 tries once more: the plugin registers every event, the pod's own status update among them.
@pytest.mark.parametrize(("version", "attempts"), [("1.30", 1), ("1.34", 2)])
def test_a_permit_that_never_allows_times_out_and_the_run_ends(version: str, attempts: int) -> None:
    plugins = {"permit": {"enabled": [{"name": ref(PermitPlugin)}]}}
    cfg = config_dict(profile_with(plugins, {ref(PermitPlugin): {"mode": "wait", "timeout": 30}}))
    r = simulate([node_dict("n1"), pod_dict("p")], cfg, emulated_version=version)
    assert [(a["attempt"], a["result"]) for a in r.attempts] == [(i + 1, "Unschedulable") for i in range(attempts)]
    timeout_reason = f"rejected due to timeout after waiting 30s at plugin {ref(PermitPlugin)}."
    assert r.attempts[0]["message"].endswith(timeout_reason)
    assert r.virtual_seconds >= 30
    assert r.final == {"default/p": None}


# -- progress --------------------------------------------------------------------------------------
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster"


def _watch_progress(calls: list[tuple[int, int]]) -> Any:
    def progress(done: int, total: int) -> None:
        assert 0 <= done <= total
        if calls:
            assert done >= calls[-1][0] and total >= calls[-1][1]  # neither ever goes back
        calls.append((done, total))

    return progress


def test_progress_counts_the_example_pending_pods_and_its_workload_pods() -> None:
    calls: list[tuple[int, int]] = []
    result = simulate([EXAMPLE], progress=_watch_progress(calls))
    assert calls[0] == (0, 34)  # the bare pending pods are known before the run
    assert calls[-1] == (len(result.final), len(result.final)) == (57, 57)  # and the workloads' 23
    # Before the end, done counts pods bound (the victim was bound before it went) or deleted unbound.
    assert calls[-2][0] == 53


def test_progress_grows_as_a_deployment_creates_its_pods() -> None:
    calls: list[tuple[int, int]] = []
    nodes = [node_dict(f"n{i}", cpu="4") for i in range(4)]
    result = simulate([*nodes, deployment_of(30)], progress=_watch_progress(calls))
    assert sum(1 for n in result.final.values() if n) == 30
    assert [t for _, t in calls][:4] == [0, 1, 2, 3]  # each pod adds one as the controller creates it
    assert calls[-1] == (30, 30)
    assert {d for d, _ in calls} == set(range(31))  # one step per pod bound


@pytest.mark.parametrize("mode", ["burst", "timed"])
def test_progress_counts_bound_pods_in_burst_and_timed_runs(mode: str) -> None:
    calls: list[tuple[int, int]] = []
    pods = [pod_dict(f"p{i}", cpu="1") for i in range(3)] + [pod_dict("huge", cpu="64")]
    if mode == "timed":
        for i, p in enumerate(pods):
            p["metadata"]["annotations"] = {"kubesched.io/arrival": f"{i}s"}
    simulate([node_dict("n1", cpu="4"), *pods], burst=mode == "burst", progress=_watch_progress(calls))
    assert calls[0] == (0, 4)
    assert (3, 4) in calls  # three bound, the fourth given up only at the end
    assert calls[-1] == (4, 4)


def test_progress_total_grows_with_streamed_arrivals() -> None:
    calls: list[tuple[int, int]] = []
    stream = (
        pod_dict(f"s{i}", cpu="100m")
        | {"metadata": {"name": f"s{i}", "namespace": "default", "annotations": {"kubesched.io/arrival": f"{i}s"}}}
        for i in range(5)
    )
    simulate([node_dict("n1")], arrivals=stream, progress=_watch_progress(calls))
    assert max(t for _, t in calls) == 5 and calls[-1] == (5, 5)


def deployment_of(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_dict("web", cpu="500m")["spec"]},
        },
    }


def test_deterministic_uids_are_the_version_4_uuids_of_the_seeded_bits() -> None:
    import random
    import uuid

    from kubesched.sim.simulate import _deterministic_uids

    make = _deterministic_uids(3)
    rng = random.Random("uids-3")
    for _ in range(200):
        assert make() == str(uuid.UUID(int=rng.getrandbits(128), version=4))
