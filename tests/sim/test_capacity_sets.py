"""capacity with several shapes: whole sets of N of each, in order, and each shape alone."""

from __future__ import annotations

import json

import pytest
import yaml

from kubesched.app.cli import main
from kubesched.sim.capacity_sets import capacity_sets
from kubesched.sim.simulate import SimulationError
from tests.sim.scenarios import node, pod


def test_whole_sets_in_order_and_each_shape_alone() -> None:
    # 4 cpu: a set is 2 x 1 cpu then 1 x 1.5 cpu (3.5 cpu); the second set's first pod finds 0.5 cpu left.
    shapes = [(pod("small", cpu="1"), 2), (pod("big", cpu="1500m"), 1)]
    result = capacity_sets([node("n1", cpu="4", memory="8Gi")], shapes, tie_break="name")
    assert result.sets == 1
    assert result.placements == {"small": {"n1": 2}, "big": {"n1": 1}}
    assert result.stop_reason.startswith("default/small-2: 0/1 nodes are available: 1 Insufficient cpu")
    assert {name: r.replicas for name, r in result.alone.items()} == {"small": 4, "big": 2}
    assert result.to_dict()["set"] == [{"pod": "small", "count": 2}, {"pod": "big", "count": 1}]


def test_the_same_template_twice_gets_distinct_replica_names() -> None:
    result = capacity_sets(
        [node("n1", cpu="2")], [(pod("p", cpu="1"), 1), (pod("p", cpu="1"), 1)], max_sets=5, alone=False
    )
    assert result.sets == 1 and list(result.placements) == ["p", "p-2"]


def test_bad_counts_are_refused() -> None:
    with pytest.raises(SimulationError, match="each count must be 1 or more"):
        capacity_sets([node("n1")], [(pod("p"), 0)])


def test_the_command_takes_template_counts(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario, a, b = tmp_path / "s.yaml", tmp_path / "a.yaml", tmp_path / "b.yaml"
    scenario.write_text(yaml.safe_dump(node("n1", cpu="4", memory="8Gi")))
    a.write_text(yaml.safe_dump(pod("a", cpu="1")))
    b.write_text(yaml.safe_dump(pod("b", cpu="1")))
    assert main(["capacity", str(scenario), "--pod", f"{a}=3", "--pod", f"{b}=1", "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["sets"] == 1 and document["alone"]["a"]["replicas"] == 4
    with pytest.raises(SystemExit) as exit_:
        main(["capacity", str(scenario), "--pod", f"{a}=0"])
    assert exit_.value.code == 2
    assert "expected TEMPLATE.yaml=N with N a count of 1 or more" in capsys.readouterr().err
