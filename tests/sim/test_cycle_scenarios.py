"""Scheduling attempts worked out from kube-scheduler's source (scenarios under tests/sim/scenarios/).

A folder whose ``expected.json`` lists ``attempts`` is replayed at each of its ``versions``; every
listed attempt must be found, in the listed order, with the listed fields (``filter`` as recorded:
``{node: {plugin, code, reasons}}``). A ``message`` may differ by version: then it maps versions to texts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.sim.simulate import simulate

SCENARIOS = Path(__file__).parent / "scenarios"


def _cases() -> list[tuple[Path, str]]:
    cases: list[tuple[Path, str]] = []
    for folder in sorted(SCENARIOS.iterdir()):
        expected = folder / "expected.json"
        if expected.is_file() and "attempts" in (spec := json.loads(expected.read_text())):
            cases.extend((folder, version) for version in spec["versions"])
    return cases


def _wanted(attempt: dict[str, Any], version: str) -> dict[str, Any]:
    message = attempt.get("message")
    return {**attempt, "message": message[version]} if isinstance(message, dict) else attempt


@pytest.mark.parametrize(("folder", "version"), _cases(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_attempts_match_the_worked_out_outcome(folder: Path, version: str) -> None:
    spec = json.loads((folder / "expected.json").read_text())
    result = simulate([folder / "scenario.yaml"], seed=0, tie_break="name", emulated_version=version, record="full")
    index = {(a["pod"], a["attempt"]): i for i, a in enumerate(result.attempts)}
    last = -1
    for want in (_wanted(a, version) for a in spec["attempts"]):
        at = index.get((want["pod"], want["attempt"]))
        assert at is not None, f"{want['pod']} has no attempt {want['attempt']}"
        assert at > last, f"{want['pod']} attempt {want['attempt']} comes before the attempt listed above it"
        got = result.attempts[at]
        assert {k: got.get(k) for k in want} == want
        last = at


def test_there_are_cases() -> None:
    assert any(folder.name == "filter-nominated-first-pass" for folder, _ in _cases())
