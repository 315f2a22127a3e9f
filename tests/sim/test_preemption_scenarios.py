"""Preemption candidate ordering, one criterion at a time (scenarios under tests/sim/scenarios/).

Each folder holds manifests and ``expected.json``: the node kube-scheduler nominates for the
preemptor and the victims it evicts, worked out from its source (pickOneNodeForPreemption and
SelectVictimsOnNode), and the emulated versions it holds for (``versions``; the default version when
absent). The candidates in a scenario differ in one criterion only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.sim.simulate import simulate

SCENARIOS = Path(__file__).parent / "scenarios"


def _folders() -> list[Path]:
    return sorted(p for p in SCENARIOS.iterdir() if p.name.startswith("preempt-"))


def _cases() -> list[tuple[Path, str | None]]:
    return [
        (folder, version)
        for folder in _folders()
        for version in json.loads((folder / "expected.json").read_text()).get("versions", [None])
    ]


@pytest.mark.parametrize(("folder", "version"), _cases(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_preemption_picks_reference_candidate(folder: Path, version: str | None) -> None:
    expected = json.loads((folder / "expected.json").read_text())
    result = simulate([folder / "scenario.yaml"], seed=0, tie_break="name", emulated_version=version)
    preemptions = [a for a in result.attempts if a["pod"] == expected["preemptor"] and a.get("nominatedNode")]
    assert preemptions, f"{expected['preemptor']} never preempted"
    first = preemptions[0]
    assert first["nominatedNode"] == expected["nominatedNode"]
    assert sorted(first["victims"]) == sorted(expected["victims"])
    assert result.final[expected["preemptor"]] == expected["nominatedNode"]


def test_every_criterion_has_a_scenario() -> None:
    names = {p.name for p in _folders()}
    for criterion in ("pdb", "highest-priority", "priority-sum", "victim-count", "start-time", "first-candidate"):
        assert f"preempt-order-{criterion}" in names
