"""Sweeps: variants from a grid, metrics per run, intervals over seeds, and every engine giving the same runs."""

from __future__ import annotations

import pytest

from kubesched import simulate
from kubesched.api.objects import Node, Pod
from kubesched.scenario.pipeline import SimulationError
from kubesched.sim.sweep import (
    Variant,
    compare,
    fragmentation,
    grid_variants,
    interval,
    parse_grid,
    run_task,
    scenario_objects,
    tasks_for,
    with_setting,
)
from kubesched.sim.sweep_engine import run_tasks
from tests.sim.scenarios import node, pod


def _scenario() -> tuple[dict, ...]:
    return scenario_objects([[node("n1", cpu="4"), node("n2", cpu="4"), *(pod(f"p{i}", cpu="1") for i in range(5))]][0])


def test_a_grid_point_sets_a_score_weight_and_a_plugin_arg_in_every_profile() -> None:
    [weights, strategy] = parse_grid(
        ["NodeResourcesFit.weight=1,5", "NodeResourcesFit.args.scoringStrategy.type=MostAllocated"]
    )
    variants = grid_variants(Variant("defaults"), [weights, strategy])
    assert [v.label for v in variants] == [
        "defaults NodeResourcesFit.weight=1 NodeResourcesFit.args.scoringStrategy.type=MostAllocated",
        "defaults NodeResourcesFit.weight=5 NodeResourcesFit.args.scoringStrategy.type=MostAllocated",
    ]
    result = simulate([node("n1"), node("n2"), pod("p")], config=variants[1].config, record="full")
    assert result.records[0].details["weights"]["NodeResourcesFit"] == 5
    config = variants[1].config
    assert config is not None
    args = next(p for p in config["profiles"][0]["pluginConfig"] if p["name"] == "NodeResourcesFit")
    assert args["args"]["scoringStrategy"]["type"] == "MostAllocated"
    # An existing entry is changed, not repeated.
    again = with_setting(variants[1].config, "NodeResourcesFit.weight", 7)
    assert [e for e in again["profiles"][0]["plugins"]["score"]["enabled"] if e["name"] == "NodeResourcesFit"] == [
        {"name": "NodeResourcesFit", "weight": 7}
    ]


@pytest.mark.parametrize(
    "spec",
    [
        "NodeResourcesFit=1",
        "NodeResourcesFit.weight=",
        "NodeResourcesFit.weight=a",
        "NodeResourcesFit.args=1",
        "x.weight.y=1",
    ],
)
def test_bad_grid_specs_are_refused(spec: str) -> None:
    with pytest.raises(SimulationError, match="--grid"):
        parse_grid([spec])


def test_an_interval_is_the_mean_with_students_t_over_the_seeds() -> None:
    assert interval([5.0]).half_width == 0.0
    two = interval([1.0, 3.0])  # mean 2, sd sqrt(2), t(1) = 12.706
    assert two.mean == 2.0 and two.half_width == pytest.approx(12.706 * 2**0.5 / 2**0.5)


def test_fragmentation_is_the_free_cpu_the_median_pod_cannot_use() -> None:
    nodes = [Node.from_dict(node("a", cpu="4")), Node.from_dict(node("b", cpu="4"))]
    bound = [Pod.from_dict(pod("x", cpu="3500m", node_name="a")), Pod.from_dict(pod("y", cpu="1", node_name="b"))]
    typical = [Pod.from_dict(pod("t", cpu="1"))]
    # a has 0.5 cpu free (less than the median pod's 1): unusable; b has 3 free.
    assert fragmentation(nodes, bound, typical) == pytest.approx(0.5 / 3.5)
    assert fragmentation(nodes, bound, []) == 0.0


def test_a_run_is_measured() -> None:
    [task] = tasks_for({"s": _scenario()}, [Variant("defaults")], [0])
    metrics = run_task(task)
    assert (metrics.scheduled, metrics.pending, metrics.preemptions) == (5, 0, 0)
    assert metrics.cpu_utilisation == pytest.approx(5 / 8)


def test_the_process_pool_gives_the_runs_of_the_sequential_loop_in_order() -> None:
    tasks = tasks_for(
        {"s": _scenario()},
        [Variant("defaults"), *grid_variants(Variant("x"), parse_grid(["NodeResourcesBalancedAllocation.weight=3"]))],
        [0, 1],
    )
    sequential = run_tasks(tasks, workers=1)
    pooled = run_tasks(tasks, workers=2)
    strip = [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in sequential]
    assert [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in pooled] == strip
    comparison = compare(pooled)
    assert list(comparison.rows) == [("s", "defaults"), ("s", "x NodeResourcesBalancedAllocation.weight=3")]
    assert comparison.rows[("s", "defaults")]["scheduled"].n == 2
