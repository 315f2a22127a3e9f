"""Replays the conformance corpus (decisions recorded from kube-scheduler v1.30.6) and compares.

Each scenario folder under the corpus holds manifests, an optional KubeSchedulerConfiguration and
the recorded attempts; every scenario is replayed. Comparison follows the corpus README: attempt by attempt
(pod, attempt, profile, result, node, message, feasible, filter, scores, total, ties, nominatedNode,
victims), then the final placement and the pods never attempted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import load_config
from kubesched.sim.simulate import simulate
from tests.corpus import CORPUS

COMPARED = ("pod", "attempt", "profile", "result", "node", "message", "feasible", "filter", "scores",
            "total", "ties", "nominatedNode", "victims")


def _scenarios() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if (p / "golden.json").is_file())


def _config(folder: Path) -> Any:
    """The scenario's config, with percentageOfNodesToScore 100 unless the file sets it (corpus rule)."""
    path = folder / "config.yaml"
    raw: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if path.is_file():
        raw = yaml.safe_load(path.read_text())
    raw.setdefault("percentageOfNodesToScore", 100)
    return load_config(raw)


def _first_mismatch(want: dict[str, Any], got: dict[str, Any]) -> str | None:
    for key in COMPARED:
        w, g = want.get(key), got.get(key)
        if key in ("feasible", "ties", "victims"):
            w, g = sorted(w or []), sorted(g or [])
        if w != g:
            return f"{key}: want {json.dumps(w, sort_keys=True)}\n           got  {json.dumps(g, sort_keys=True)}"
    return None


@pytest.mark.parametrize("folder", _scenarios(), ids=lambda p: p.name)
def test_scenario_matches_reference(folder: Path) -> None:
    golden = json.loads((folder / "golden.json").read_text())
    result = simulate([folder / "scenario.yaml"], config=_config(folder), seed=0, tie_break="name", record="full")

    looping = {a["pod"] for a in golden["attempts"] if a.get("looping")}
    want_attempts = [a for a in golden["attempts"] if not (a["pod"] in looping and a["attempt"] > 2)]
    got_attempts = [a for a in result.attempts if not (a["pod"] in looping and a["attempt"] > 2)]
    for i, (want, got) in enumerate(zip(want_attempts, got_attempts, strict=False)):
        problem = _first_mismatch(want, got)
        assert problem is None, f"attempt #{i + 1} ({want['pod']} attempt {want['attempt']}): {problem}"
    assert [(a["pod"], a["attempt"]) for a in got_attempts] == [(a["pod"], a["attempt"]) for a in want_attempts]
    assert result.final == golden["final"]
    assert sorted(result.never_attempted) == sorted(golden.get("neverAttempted", []))
    # What the cluster's controllers and the scheduler warned about (claims that can never bind,
    # pods no profile serves), in the reference's order.
    assert result.warnings == (golden.get("warnings") or [])


def test_corpus_is_present_or_skipped_loudly() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"conformance corpus not found at {CORPUS}")
    assert _scenarios(), f"no scenarios under {CORPUS}"
