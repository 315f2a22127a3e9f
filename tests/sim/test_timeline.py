"""Time in simulations: pods arriving and completing, timeline steps run, and what is measured over time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.app.cli import main
from kubesched.sim.simulate import SimulationError, simulate
from tests.factories import node_dict, pod_dict


def timed(name: str, arrival: str | None = None, duration: str | None = None, **kw: Any) -> dict[str, Any]:
    pod = pod_dict(name, **kw)
    annotations = {}
    if arrival is not None:
        annotations["kubesched.io/arrival"] = arrival
    if duration is not None:
        annotations["kubesched.io/duration"] = duration
    pod["metadata"]["annotations"] = annotations
    return pod


def created_at(result: Any, name: str) -> str:
    return next(p for p in result.pods() if p["metadata"]["name"] == name)["metadata"]["creationTimestamp"]


# -- arrival ---------------------------------------------------------------------------------------
def test_pods_are_created_at_their_arrival_and_the_others_at_time_zero_in_document_order() -> None:
    r = simulate(
        [node_dict("n1"), timed("late", "1h30m"), timed("first"), timed("soon", "90s"), timed("second")],
        tie_break="name",
    )
    assert r.timed
    assert created_at(r, "first") == created_at(r, "second") == "2024-01-01T00:00:00Z"
    assert created_at(r, "soon") == "2024-01-01T00:01:30Z"
    assert created_at(r, "late") == "2024-01-01T01:30:00Z"
    assert [a["pod"] for a in r.attempts] == ["default/first", "default/second", "default/soon", "default/late"]
    assert r.virtual_seconds == pytest.approx(5400, abs=1)


def test_sub_second_arrivals_keep_their_order() -> None:
    r = simulate([node_dict("n1"), timed("b", "500ms"), timed("a", "250ms")])
    assert [a["pod"] for a in r.attempts] == ["default/a", "default/b"]


def test_without_arrivals_the_run_is_untimed() -> None:
    r = simulate([node_dict("n1"), pod_dict("p")])
    assert not r.timed
    assert r.virtual_seconds < 1


# -- duration --------------------------------------------------------------------------------------
def test_a_completed_pod_frees_its_node_for_the_next_one() -> None:
    r = simulate([node_dict("n1", cpu="1"), timed("a", "0s", "10m", cpu="1"), timed("b", "1m", "5m", cpu="1")])
    assert r.final == {"default/a": "n1", "default/b": "n1"}
    assert r.completed == 2
    assert r.deleted == []
    # b is retried once by the 5-minute leftover flush, then when a's deletion frees the node.
    assert [(a["pod"], a["result"]) for a in r.attempts] == [
        ("default/a", "Scheduled"),
        ("default/b", "Unschedulable"),
        ("default/b", "Unschedulable"),
        ("default/b", "Scheduled"),
    ]
    # b waited from 1m until a completed at 10m, then ran 5m.
    assert r.virtual_seconds == pytest.approx(900, abs=1)
    assert 500 < r.latency()["p99"] <= 541
    assert r.cluster is not None and r.cluster.list("Pod")[0] == []


def test_durations_work_in_one_at_a_time_mode_too() -> None:
    r = simulate([node_dict("n1", cpu="1"), timed("a", duration="30s", cpu="1"), timed("b", cpu="1")])
    assert not r.timed
    assert r.final == {"default/a": "n1", "default/b": "n1"}
    assert r.completed == 1


# -- time series -----------------------------------------------------------------------------------
def test_pending_pods_and_requested_share_are_sampled_over_time() -> None:
    r = simulate(
        [
            node_dict("n1", cpu="2"),
            timed("a", "0s", "60s", cpu="1"),
            timed("b", "0s", "120s", cpu="1"),
            timed("c", "10s", "10s", cpu="1"),
        ]
    )
    series = r.series
    assert series is not None
    at = {round(t): i for i, t in enumerate(series.times)}
    assert series.requested["cpu"][at[5]] == 2000 and series.allocatable["cpu"][at[5]] == 2000
    assert series.pending[at[30]] == 1  # c waits for a
    assert series.pending[at[65]] == 0 and series.requested["cpu"][at[65]] == 2000  # c runs in a's place
    assert series.requested["cpu"][-1] == 0
    assert series.utilisation()["cpu"]["peak"] == 1.0
    assert r.latency()["p50"] == pytest.approx(0, abs=0.01)


def test_a_long_run_keeps_a_bounded_number_of_samples() -> None:
    r = simulate([node_dict("n1"), timed("a", "0s"), timed("b", "100h")])
    assert r.series is not None
    assert len(r.series.times) <= r.series.max_points
    assert r.series.interval > 1


# -- timeline --------------------------------------------------------------------------------------
def test_cordon_keeps_pods_off_until_uncordon(tmp_path: Path) -> None:
    steps = [{"at": "10s", "action": "cordon", "object": "Node/n1"}, {"at": "5m", "action": "uncordon", "object": "n1"}]
    r = simulate([node_dict("n1"), timed("p", "1m")], timeline=steps)
    assert r.final == {"default/p": "n1"}
    assert [a["result"] for a in r.attempts] == ["Unschedulable", "Scheduled"]
    assert r.latency()["p50"] == pytest.approx(240, abs=1)


def test_create_and_drain_steps(tmp_path: Path) -> None:
    path = tmp_path / "timeline.yaml"
    path.write_text(
        "- {at: 1m, action: create, object: {apiVersion: v1, kind: Node, metadata: {name: n2},"
        " status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}}}\n"
        "- {at: 2m, action: drain, object: Node/n1}\n"
    )
    r = simulate([node_dict("n1", cpu="1"), timed("a", "0s", cpu="1"), timed("b", "30s", cpu="1")], timeline=path)
    assert r.final == {"default/a": None, "default/b": "n2"}
    assert r.deleted == []  # no victim: the timeline deleted it
    assert r.removed == ["default/a"]
    assert [(d.pod, d.reason, d.node, d.by) for d in r.deletions] == [
        ("default/a", "timeline", "n1", f"{path}: step 2: drain Node/n1")
    ]
    assert r.cluster is not None and r.cluster.get("Node", None, "n1")["spec"]["unschedulable"] is True


def test_deleting_a_node_that_is_gone_is_a_warning_not_a_crash() -> None:
    r = simulate([node_dict("n1"), timed("p", "0s")], timeline=[{"at": "1s", "action": "delete", "object": "Node/nx"}])
    assert any("step 1: delete failed" in w for w in r.warnings)


def test_cli_timeline_and_time_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        yaml.safe_dump_all(
            [node_dict("n1", cpu="1"), timed("a", "0s", "1m", cpu="1"), timed("b", "10s", "1m", cpu="1")]
        )
    )
    timeline = tmp_path / "t.yaml"
    timeline.write_text("- {at: 5m, action: cordon, object: n1}\n")
    assert main(["simulate", str(scenario), "--timeline", str(timeline)]) == 0
    out = capsys.readouterr().out
    assert "Scheduled 2/2 pending pods" in out
    assert "2 pods completed" in out
    assert "creation-to-bound latency: p50" in out
    assert "cpu requested/allocatable: mean" in out
    timeline.write_text("- {at: 5m, action: nap}\n")
    assert main(["simulate", str(scenario), "--timeline", str(timeline)]) == 2
    assert "step 1: action" in capsys.readouterr().err


# -- streamed arrivals -----------------------------------------------------------------------------
def test_streamed_arrivals_are_read_only_when_due() -> None:
    read: list[str] = []

    def stream() -> Any:
        for i, at in enumerate(["0s", "10s", "20s"]):
            read.append(f"p{i}")
            yield timed(f"p{i}", at, "15s")

    pods = stream()
    r = simulate([node_dict("n1", cpu="1"), timed("first", "5s", "1s")], arrivals=pods)
    assert r.timed
    assert r.final == {"default/first": "n1", "default/p0": "n1", "default/p1": "n1", "default/p2": "n1"}
    assert r.completed == 4
    assert read == ["p0", "p1", "p2"]


def test_a_stream_is_consumed_lazily() -> None:
    from kubesched.scenario.generate.poisson import poisson_pods
    from kubesched.scenario.pipeline import Scenario
    from kubesched.sim.simulate import Simulation, resolve_config

    taken = [0]

    def counted() -> Any:
        for pod in poisson_pods(100, 1.0, "const:1s"):
            taken[0] += 1
            yield pod

    sim = Simulation(Scenario(), resolve_config(None), arrivals=counted())
    sim.load()
    assert taken[0] == 0  # nothing read before the run
    r = sim.run()
    assert taken[0] == 100
    assert len(r.final) == 100 and r.completed == 0  # no node: all pending
    assert r.series is not None and max(r.series.pending) == 100


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([timed("a", "10s"), timed("b", "5s")], "item 2: arrivals must come in time order"),
        ([{"kind": "Node", "metadata": {"name": "x"}}], "item 1: expected a Pod"),
        ([timed("a", "later")], "item 1.*not a valid duration"),
    ],
)
def test_bad_streams_name_the_item(items: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(SimulationError, match=message):
        simulate([node_dict("n1")], arrivals=iter(items))
