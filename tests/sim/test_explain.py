"""explain: one attempt of one pod read back from a trace, plain text or rich tables."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import re
from pathlib import Path

import pytest

from kubesched import simulate
from kubesched.sim.explain import ExplainError, explain, node_verdicts
from kubesched.sim.output import write_trace
from tests.sim.scenarios import deployment, node, pod


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = [
        node("busy", cpu="2"),
        node("idle", cpu="2"),
        node("tiny", cpu="200m"),
        pod("load", cpu="1", node_name="busy"),
        pod("web", cpu="500m"),
        pod("big", cpu="3"),
    ]
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
    explain(gz, "web", out=out, rich_output=True, width=200)
    assert "┃" in out.getvalue() or "│" in out.getvalue()  # a drawn table
    assert "idle" in out.getvalue()


@pytest.mark.parametrize(
    ("pod_name", "kwargs", "match"),
    [
        ("nope", {}, "no attempt for pod default/nope in .*trace.jsonl$"),
        ("web", {"attempt": 7}, "no attempt 7"),
        ("web", {"node": "mars"}, "not evaluated"),
    ],
)
def test_errors_name_what_is_missing(trace: Path, pod_name: str, kwargs: dict, match: str) -> None:
    with pytest.raises(ExplainError, match=match):
        run(trace, pod_name, **kwargs)


def test_traces_without_raw_scores_show_weighted_only() -> None:
    record = {"pod": "default/p", "feasible": ["a"], "scores": {"a": {"X": 6}}, "total": {"a": 6}, "filter": {}}
    (verdict,) = node_verdicts(record)
    assert (verdict.scores[0].raw, verdict.scores[0].normalised, verdict.scores[0].weighted) == (None, None, 6)


@pytest.mark.parametrize(
    "raw_scores",
    [
        {"X": [3, 1]},  # one column per plugin over "feasible", as traces are written
        {"a": {"X": 3}, "b": {"X": 1}},  # keyed by node, as earlier traces were written
    ],
)
def test_raw_scores_are_read_in_either_layout(raw_scores: dict) -> None:
    record = {
        "pod": "default/p",
        "feasible": ["a", "b"],
        "scores": {"a": {"X": 20}, "b": {"X": 0}},
        "total": {"a": 20, "b": 0},
        "filter": {},
        "rawScores": raw_scores,
        "weights": {"X": 2},
    }
    by_node = {v.node: v.scores[0] for v in node_verdicts(record)}
    assert (by_node["a"].raw, by_node["a"].normalised, by_node["a"].weighted) == (3, 10, 20)
    assert (by_node["b"].raw, by_node["b"].normalised, by_node["b"].weighted) == (1, 0, 0)


# -- the layout follows the width ---------------------------------------------------------------------

LONG_NODES = (
    "general-purpose-zone-a-node-0001",
    "general-purpose-zone-b-node-0002",
    "gpu-accelerated-zone-c-node-0003",
    "tiny-burstable-zone-a-node-0004",
)


@pytest.fixture(scope="module")
def long_names_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Long node names, every kind of verdict: scored, rejected by a taint, rejected for cpu."""
    gpu_taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    scenario = [
        node(LONG_NODES[0], cpu="4"),
        node(LONG_NODES[1], cpu="4", zone="b"),
        node(LONG_NODES[2], cpu="8", zone="c", taints=gpu_taint),
        node(LONG_NODES[3], cpu="200m"),
        pod("load", cpu="1", node_name=LONG_NODES[0]),
        pod("web", cpu="500m"),
        pod("big", cpu="6"),
    ]
    path = tmp_path_factory.mktemp("long") / "trace.jsonl"
    write_trace(simulate(scenario, tie_break="name", record="full").records, path)
    return path


def _render(trace: Path, pod_name: str, width: int | None, *, rich: bool = False, **kwargs) -> str:
    out = io.StringIO()
    explain(trace, pod_name, out=out, rich_output=rich, width=width, **kwargs)
    return out.getvalue()


def _has_whole(text: str, name: str) -> bool:
    """``name`` appears as a whole word (not cut, not broken across lines)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


@pytest.mark.parametrize("rich", [False, True], ids=["plain", "rich"])
@pytest.mark.parametrize("pod_name", ["web", "big"])
def test_at_80_columns_no_line_is_wider_and_every_node_name_is_whole(
    long_names_trace: Path, pod_name: str, rich: bool
) -> None:
    text = _render(long_names_trace, pod_name, 80, rich=rich)
    assert max(len(line) for line in text.splitlines()) <= 80
    for name in LONG_NODES:
        assert _has_whole(text, name), name
    assert "…" not in text  # rich cuts cells with an ellipsis when a table does not fit
    assert "NodeResourcesFit: Insufficient cpu" in text and "untolerated taint" in text


def test_narrow_layout_is_one_block_per_node(long_names_trace: Path) -> None:
    lines = _render(long_names_trace, "web", 80).splitlines()
    # The selected node's block: its name and verdict, then one indented line per Score plugin.
    head = next(i for i, line in enumerate(lines) if line.startswith(f"{LONG_NODES[1]}  selected, total "))
    block = list(itertools.takewhile(lambda line: line.startswith("  "), lines[head + 1 :]))
    assert [line.split()[0] for line in block] == [
        "ImageLocality:",
        "NodeResourcesBalancedAllocation:",
        "NodeResourcesFit:",
        "TaintToleration:",
    ]
    assert all(re.fullmatch(r"\d+/\d+/\d+", line.split()[1]) for line in block)
    rejected = lines.index(f"{LONG_NODES[2]}  rejected")
    assert lines[rejected + 1].startswith("  TaintToleration: node(s) had untolerated taint")


def test_a_wide_terminal_gets_the_score_table_then_the_rejected_nodes(long_names_trace: Path) -> None:
    text = _render(long_names_trace, "web", 160, rich=True)
    assert max(len(line) for line in text.splitlines()) <= 160
    table, rejected = text.split("Rejected by a Filter plugin:")
    assert "┃ NODE" in table and "NodeResourcesBalancedAllocation" in table and "…" not in table
    assert LONG_NODES[2] not in table and LONG_NODES[2] in rejected


def test_without_a_width_the_plain_table_keeps_one_line_per_node(long_names_trace: Path) -> None:
    lines = _render(long_names_trace, "web", None).splitlines()
    assert sum(1 for line in lines if line.startswith(LONG_NODES)) == len(LONG_NODES)
    assert max(len(line) for line in lines) > 120


def test_columns_is_the_width_when_piped(long_names_trace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = _render(long_names_trace, "web", None)
    assert max(len(line) for line in text.splitlines()) <= 80


def test_one_node_at_narrow_width(long_names_trace: Path) -> None:
    text = _render(long_names_trace, "web", 40, node=LONG_NODES[1])
    assert max(len(line) for line in text.splitlines()) <= 40
    assert _has_whole(text, LONG_NODES[1])
    assert re.search(r"NodeResourcesFit: raw \d+, normalised\s+\d+, weight 1,\s+weighted \d+", text)


def test_a_width_too_narrow_is_an_input_error(long_names_trace: Path) -> None:
    with pytest.raises(ExplainError, match="too narrow"):
        _render(long_names_trace, "web", 5)


# -- names: workloads, prefixes, suggestions ----------------------------------------------------------


@pytest.fixture(scope="module")
def workload_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = [
        node("n1", cpu="4"),
        node("n2", cpu="4"),
        deployment("api", 2, namespace="shop"),
        deployment("solo", 1, namespace="shop"),
        pod("apx", namespace="shop"),
        pod("huge", cpu="64", namespace="shop"),
    ]
    path = tmp_path_factory.mktemp("workloads") / "trace.jsonl"
    write_trace(simulate(scenario, tie_break="name", record="full").records, path)
    return path


def _pods(trace: Path) -> list[str]:
    return sorted({json.loads(line)["pod"] for line in trace.read_text().splitlines()})


@pytest.mark.parametrize("name", ["Deployment/shop/api", "deploy/shop/api", "shop/api-"])
def test_a_workload_or_prefix_naming_several_pods_lists_them(workload_trace: Path, name: str) -> None:
    api_pods = [p for p in _pods(workload_trace) if p.startswith("shop/api-")]
    assert len(api_pods) == 2
    lines = _render(workload_trace, name, None).splitlines()
    assert lines[0].endswith(f"matches 2 pods in {workload_trace}:")
    assert [line.split()[0] for line in lines[1:3]] == api_pods
    assert all(re.search(r"  Scheduled on n[12]$", line) for line in lines[1:3])
    assert lines[3].endswith(f"kubesched explain {workload_trace} {api_pods[0]}")


def test_a_prefix_matching_one_pod_explains_it(workload_trace: Path) -> None:
    (solo,) = [p for p in _pods(workload_trace) if p.startswith("shop/solo-")]
    for name in ("Deployment/shop/solo", "shop/solo", "solo"):
        assert _render(workload_trace, name, 80).startswith(f"Pod {solo}, attempt 1 of 1")


def test_the_listing_shows_why_a_pod_is_pending_in_one_line(workload_trace: Path) -> None:
    lines = _render(workload_trace, "shop/", 60).splitlines()
    huge = next(line for line in lines if line.lstrip().startswith("shop/huge"))
    assert "Unschedulable" in huge and huge.endswith("…") and len(huge) <= 60


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("shop/apz", r"^no attempt for pod shop/apz in .*; did you mean shop/api, shop/apx\?$"),
        (
            "Deployment/shop/apl",
            r"^no pod of Deployment/shop/apl in .* \(its pods are named shop/apl-<hash>-<suffix>\); "
            r"did you mean Deployment/shop/api\?$",
        ),
        ("StatefulSet/shop/api", r"its pods are named shop/api-<ordinal>\); did you mean Deployment/shop/api\?$"),
        ("default/apx", r"did you mean shop/apx\?$"),
        ("zzz", r"^no attempt for pod default/zzz in [^;]*$"),
    ],
)
def test_no_match_suggests_the_closest_names(workload_trace: Path, name: str, match: str) -> None:
    with pytest.raises(ExplainError, match=match):
        _render(workload_trace, name, 80)
