"""The pod picker's compact attempts: node sets as runs, the best scores in natural order, verdicts grouped."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kubesched.framework.status import Code, Status
from kubesched.recording.attempt import PRE_FILTER_RESULT, Attempt
from kubesched.recording.full import FullRecorder
from kubesched.sim.html_decisions import NodeIndex, Texts, encode, expand, page_decisions, ranges

#: Snapshot order is not name order: the page must not care.
NAMES = np.array(["node-10", "node-2", "node-1", "node-3", "node-11", "node-4"])


@given(st.sets(st.integers(min_value=0, max_value=300)))
def test_runs_give_back_the_positions(positions: set[int]) -> None:
    assert expand(ranges(list(positions))) == sorted(positions)


def test_runs_are_gaps_and_lengths() -> None:
    assert ranges([9, 3, 4, 5]) == [3, 3, 3, 1]
    assert ranges(range(1000)) == [0, 1000]
    assert ranges([]) == []


def _status(plugin: str, reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE, (reason,), plugin)


def scheduled_attempt() -> Attempt:
    """node-10 chosen among three tied nodes; node-11 and node-4 rejected."""
    attempt = Attempt(FullRecorder(), "default/p", 1, "default-scheduler")
    cpu = _status("NodeResourcesFit", "Insufficient cpu")
    attempt.rejected(NAMES, np.array([4, 5]), [cpu, cpu])
    rows = np.array([0, 1, 2, 3])
    attempt.feasible(NAMES, rows)
    attempt.weighted({"X": 2, "Y": 1})
    attempt.scored(
        rows,
        {"X": np.array([20, 20, 10, 20]), "Y": np.array([5, 5, 5, 5])},
        np.array([25, 25, 15, 25]),
        {"X": np.array([10, 10, 5, 10]), "Y": np.array([5, 5, 5, 5])},
        np.array([0, 1, 3]),
    )
    attempt.scheduled("node-10")
    return attempt


def test_an_attempt_names_nodes_by_natural_position_and_keeps_the_best_scores() -> None:
    nodes, texts = NodeIndex(NAMES.tolist()), Texts()
    assert nodes.names == ["node-1", "node-2", "node-3", "node-4", "node-10", "node-11"]
    got = encode(scheduled_attempt(), nodes, texts, keep=2)

    def named(runs: list[int]) -> list[str]:
        return [nodes.names[i] for i in expand(runs)]

    assert (got["r"], nodes.names[got["n"]], got["e"]) == ("Scheduled", "node-10", 0)
    assert named(got["f"]) == ["node-1", "node-2", "node-3", "node-10"]
    assert named(got["t"]) == ["node-2", "node-3", "node-10"]
    # The best two of three tied at 25 in natural order (node-2, node-3), then the chosen node-10.
    assert [texts.items[i] for i in got["sp"]] == ["X", "Y"] and got["w"] == [2, 1]
    assert [[nodes.names[row[0]], *row[1:]] for row in got["s"]] == [
        ["node-2", 25, [10, 5], [20, 5]],
        ["node-3", 25, [10, 5], [20, 5]],
        ["node-10", 25, [10, 5], [20, 5]],
    ]
    assert got["k"] == 2
    assert [nodes.names[row[0]] for row in encode(scheduled_attempt(), nodes, texts, keep=3)["s"]] == [
        "node-2",
        "node-3",
        "node-10",
    ]
    [(plugin, reason, runs)] = got["x"]
    assert (texts.items[plugin], texts.items[reason], named(runs)) == (
        "NodeResourcesFit",
        "Insufficient cpu",
        ["node-4", "node-11"],
    )


def test_rejections_are_grouped_by_verdict_the_last_report_on_a_node_winning() -> None:
    attempt = Attempt(FullRecorder(), "default/p", 2, "default-scheduler")
    attempt.skipped_outside(NAMES, np.array([0, 1, 2]))  # PreFilterResult: only three candidates
    attempt.rejected(
        NAMES,
        np.array([0, 1, 2]),
        [
            _status("NodeResourcesFit", "Insufficient cpu"),
            _status("NodeResourcesFit", "Insufficient cpu"),
            _status("TaintToleration", "untolerated taint"),
        ],
    )
    attempt.failed("Unschedulable", "0/6 nodes are available", None)
    nodes, texts = NodeIndex(NAMES.tolist()), Texts()
    got = encode(attempt, nodes, texts)
    groups = [(texts.items[p], texts.items[r], [nodes.names[i] for i in expand(runs)]) for p, r, runs in got["x"]]
    skipped = "node not in the PreFilterResult node set (not evaluated)"
    assert groups == [
        (PRE_FILTER_RESULT, skipped, ["node-3", "node-4", "node-11"]),
        ("NodeResourcesFit", "Insufficient cpu", ["node-2", "node-10"]),
        ("TaintToleration", "untolerated taint", ["node-1"]),
    ]
    assert "f" not in got and "s" not in got and got["m"] == "0/6 nodes are available"


def test_pods_come_in_natural_order_with_their_attempts_in_turn() -> None:
    attempts = []
    for pod in ("default/web-10", "default/web-2", "default/web-10"):
        attempt = Attempt(FullRecorder(), pod, 1, "default-scheduler")
        attempt.failed("Unschedulable", "no", None)
        attempts.append(attempt)
    got = page_decisions(attempts, NodeIndex([]), Texts())
    assert [(pod, len(list_)) for pod, list_ in got] == [("default/web-2", 1), ("default/web-10", 2)]
