"""explain: one attempt of one pod read back from a trace, plain text or rich tables."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from kubesched import simulate
from kubesched.sim.explain import ExplainError, explain, node_verdicts
from kubesched.sim.output import write_trace
from tests.sim.scenarios import node, pod


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = [node("busy", cpu="2"), node("idle", cpu="2"), node("tiny", cpu="200m"),
                pod("load", cpu="1", node_name="busy"), pod("web", cpu="500m"), pod("big", cpu="3")]
    path = tmp_path_factory.mktemp("trace") / "trace.jsonl"
    write_trace(simulate(scenario, tie_break="name", record="full").records, path)
    return path


def run(trace: Path, pod_name: str, **kwargs) -> str:
    out = io.StringIO()
    explain(trace, pod_name, out=out, rich_output=False, **kwargs)
    return out.getvalue()


def test_scores_are_raw_normalised_and_weighted_best_first_then_rejections(trace: Path) -> None:
    text = run(trace, "web")
    assert text.startswith("Pod default/web, attempt 1 of 1 (profile default-scheduler): Scheduled on idle")
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("NODE"))
    assert lines[header + 1].startswith("idle") and "selected" in lines[header + 1]
    assert lines[header + 2].startswith("busy")
    assert lines[header + 3].startswith("tiny") and "rejected by NodeResourcesFit: Insufficient cpu" in text
    # Every score cell is raw/normalised/weighted.
    fit = lines[header].split().index("NodeResourcesFit")
    assert lines[header].split()[-1] == "VERDICT"
    assert lines[header + 1].split()[fit].count("/") == 2


def test_node_detail_and_weights(trace: Path) -> None:
    text = run(trace, "default/web", node="busy")
    assert "PLUGIN" in text and "WEIGHT" in text
    row = next(line for line in text.splitlines() if line.startswith("TaintToleration"))
    _, norm, weight, weighted = row.split()[1:]
    assert int(norm) * int(weight) == int(weighted)


def test_unschedulable_pod_shows_the_message(trace: Path) -> None:
    text = run(trace, "big")
    assert "Unschedulable" in text and "0/3 nodes are available" in text


def test_gzip_traces_and_rich_tables(trace: Path, tmp_path: Path) -> None:
    gz = tmp_path / "trace.jsonl.gz"
    gz.write_bytes(gzip.compress(trace.read_bytes()))
    out = io.StringIO()
    explain(gz, "web", out=out, rich_output=True)
    assert "┃" in out.getvalue() or "│" in out.getvalue()  # a drawn table
    assert "idle" in out.getvalue()


@pytest.mark.parametrize(("pod_name", "kwargs", "match"), [
    ("nope", {}, "no attempt in the trace"),
    ("web", {"attempt": 7}, "no attempt 7"),
    ("web", {"node": "mars"}, "not evaluated"),
])
def test_errors_name_what_is_missing(trace: Path, pod_name: str, kwargs: dict, match: str) -> None:
    with pytest.raises(ExplainError, match=match):
        run(trace, pod_name, **kwargs)


def test_traces_without_raw_scores_show_weighted_only() -> None:
    record = {"pod": "default/p", "feasible": ["a"], "scores": {"a": {"X": 6}}, "total": {"a": 6}, "filter": {}}
    (verdict,) = node_verdicts(record)
    assert (verdict.scores[0].raw, verdict.scores[0].normalised, verdict.scores[0].weighted) == (None, None, 6)


@pytest.mark.parametrize("raw_scores", [
    {"X": [3, 1]},  # one column per plugin over "feasible", as traces are written
    {"a": {"X": 3}, "b": {"X": 1}},  # keyed by node, as earlier traces were written
])
def test_raw_scores_are_read_in_either_layout(raw_scores: dict) -> None:
    record = {"pod": "default/p", "feasible": ["a", "b"], "scores": {"a": {"X": 20}, "b": {"X": 0}},
              "total": {"a": 20, "b": 0}, "filter": {}, "rawScores": raw_scores, "weights": {"X": 2}}
    by_node = {v.node: v.scores[0] for v in node_verdicts(record)}
    assert (by_node["a"].raw, by_node["a"].normalised, by_node["a"].weighted) == (3, 10, 20)
    assert (by_node["b"].raw, by_node["b"].normalised, by_node["b"].weighted) == (1, 0, 0)
