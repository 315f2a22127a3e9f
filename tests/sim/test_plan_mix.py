"""plan with several node templates: the cheapest mix by kubesched.io/cost, or the fewest nodes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from kubesched.sim.plan_mix import _cheaper_mixes, plan_mix
from kubesched.sim.simulate import SimulationError
from tests.sim.scenarios import node, pod


def _template(name: str, cpu: str, cost: str | None) -> dict[str, Any]:
    n = node(name, cpu=cpu, memory="128Gi")
    del n["metadata"]["labels"]["kubernetes.io/hostname"]
    if cost is not None:
        n["metadata"]["annotations"] = {"kubesched.io/cost": cost}
    return n


def _pods(small: int, big: bool = False) -> list[dict[str, Any]]:
    return [
        *([pod("big", cpu="20", memory="1Gi")] if big else []),
        *(pod(f"s{i}", cpu="1", memory="512Mi") for i in range(small)),
    ]


SMALL, LARGE = _template("cpu8", "8", "0.40"), _template("cpu32", "32", "1.40")


def test_small_nodes_are_cheaper_for_small_pods() -> None:
    result = plan_mix([node("n0", cpu="1"), *_pods(20)], [SMALL, LARGE], tie_break="name")
    assert dict(zip(result.templates, result.mix, strict=True)) == {"cpu8": 3, "cpu32": 0}
    assert result.exact and result.cost == Decimal("1.20") and result.pending == []


def test_a_mix_beats_either_template_alone() -> None:
    # The 20-cpu pod needs the large node; the rest fit beside it and on one small node.
    result = plan_mix([node("n0", cpu="1"), *_pods(20, big=True)], [SMALL, LARGE], tie_break="name")
    assert result.mix == (1, 1) and result.cost == Decimal("1.80") and result.exact
    assert result.to_dict()["nodesToAdd"] == {"cpu8": 1, "cpu32": 1}


def test_without_prices_the_fewest_nodes() -> None:
    result = plan_mix(
        [node("n0", cpu="1"), *_pods(20)], [_template("a", "8", None), _template("b", "32", None)], tie_break="name"
    )
    assert result.objective == "nodes" and result.mix == (0, 1)


def test_some_priced_and_some_not_is_an_error() -> None:
    with pytest.raises(SimulationError, match=r"some templates carry kubesched\.io/cost and b not"):
        plan_mix([node("n0")], [_template("a", "8", "1"), _template("b", "8", None)])
    with pytest.raises(SimulationError, match="expected a positive decimal"):
        plan_mix([node("n0")], [_template("a", "8", "free"), _template("b", "8", "1")])


def test_a_small_budget_returns_the_best_found_and_says_it_is_not_proven() -> None:
    result = plan_mix([node("n0", cpu="1"), *_pods(20, big=True)], [SMALL, LARGE], tie_break="name", max_simulations=3)
    assert not result.exact and result.mix == (0, 2)  # cpu32 alone: two nodes


def test_cheaper_mixes_come_cheapest_first() -> None:
    mixes = _cheaper_mixes([Decimal("1"), Decimal("2")], Decimal("4"), 10)
    assert mixes == [(1, 0), (0, 1), (2, 0), (1, 1), (3, 0)]  # equal cost: fewer nodes first


def test_the_command_takes_several_templates(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import yaml

    from kubesched.app.cli import main

    scenario, small, large = tmp_path / "s.yaml", tmp_path / "small.yaml", tmp_path / "large.yaml"
    scenario.write_text(yaml.safe_dump_all([node("n0", cpu="1"), *_pods(20)]))
    small.write_text(yaml.safe_dump(SMALL))
    large.write_text(yaml.safe_dump(LARGE))
    assert (
        main(
            [
                "plan",
                str(scenario),
                "--node-template",
                str(small),
                "--node-template",
                str(large),
                "--tie-break",
                "name",
                "-o",
                "json",
            ]
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["nodesToAdd"] == {"cpu8": 3, "cpu32": 0} and document["costPerHour"] == "1.20"
    assert document["objective"] == "cost" and document["exact"] is True
    assert main(["plan", str(scenario), "--node-template", str(small), "--node-template", str(large)]) == 0
    assert capsys.readouterr().out.startswith("Add 3 x cpu8 (cost 1.20 per hour): then 20 of 20 pods are scheduled.")
