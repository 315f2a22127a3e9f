"""Attempt: what the cycle reports, read back as the trace record, counted, ranked and encoded."""

from __future__ import annotations

import json
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.status import Code, Status
from kubesched.recording import AttemptEncoder, FullRecorder
from kubesched.recording.attempt import SKIPPED_ENTRY, Attempt

NAMES = np.array(["n3", "n1", "n4", "n2"], dtype=object)


def _status(plugin: str, *reasons: str, code: Code = Code.UNSCHEDULABLE) -> Status:
    return Status(code, reasons, plugin=plugin)


def _begin() -> Attempt:
    attempt = FullRecorder().begin("ns/p", 2, "default-scheduler", "n9")
    assert isinstance(attempt, Attempt)
    return attempt


def _encoded(attempt: Attempt) -> dict:
    line = AttemptEncoder().encode(attempt)
    assert line == json.dumps(attempt.to_record().to_dict(raw_scores=True), separators=(",", ":"))
    return json.loads(line)


def test_a_prefilter_rejection_stands_for_every_node() -> None:
    attempt = _begin()
    attempt.rejected_all(
        NAMES,
        _status("NodeAffinity", "node(s) didn't satisfy plugin NodeAffinity", code=Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    )
    attempt.failed("Unschedulable", "0/4 nodes are available", None)
    record = _encoded(attempt)
    assert record["evaluatedNodes"] == 4 and record["startNominatedNode"] == "n9"
    assert set(record["filter"]) == {"n1", "n2", "n3", "n4"}
    assert record["filter"]["n2"] == {
        "plugin": "NodeAffinity",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) didn't satisfy plugin NodeAffinity"],
    }
    assert attempt.filter_counts() == {("NodeAffinity", "node(s) didn't satisfy plugin NodeAffinity"): 4}


def test_skipped_nodes_and_a_node_rejected_twice_keep_dict_semantics() -> None:
    attempt = _begin()
    nominated = _status("NodeResourcesFit", "Insufficient cpu")
    attempt.rejected(NAMES, np.array([1]), [nominated])  # the nominated node first
    attempt.skipped_outside(NAMES, np.array([1, 2]))
    taint = _status("TaintToleration", "node(s) had untolerated taint {a: b}")
    attempt.rejected(NAMES, np.array([1, 2]), [taint, taint])  # then the full pass, again on n1
    attempt.evaluated(2)
    attempt.failed("Unschedulable", "nope", "n2")
    record = _encoded(attempt)
    assert list(record["filter"]) == ["n1", "n3", "n2", "n4"]  # first report's position, last report's verdict
    assert record["filter"]["n1"]["plugin"] == "TaintToleration"
    assert record["filter"]["n3"] == SKIPPED_ENTRY
    assert record["nominatedNode"] == "n2"
    assert attempt.filter_counts() == {
        ("TaintToleration", "node(s) had untolerated taint {a: b}"): 2,
        ("PreFilterResult", SKIPPED_ENTRY["reasons"][0]): 2,
    }


def test_scores_totals_ties_and_the_best_nodes() -> None:
    attempt = _begin()
    rows = np.array([0, 1, 2, 3])
    attempt.feasible(NAMES, rows)
    fit = np.array([10, 30, 30, 20])
    taint = np.array([300, 300, 300, 300])
    attempt.scored(
        rows,
        {"TaintToleration": taint, "NodeResourcesFit": fit},
        fit + taint,
        {"NodeResourcesFit": np.array([1, 3, 3, 2])},
        np.array([2, 1]),
    )
    attempt.evaluated(4)
    attempt.scheduled("n1")
    record = _encoded(attempt)
    assert record["feasible"] == ["n1", "n2", "n3", "n4"] and record["ties"] == ["n1", "n4"]
    assert record["scores"]["n3"] == {"NodeResourcesFit": 10, "TaintToleration": 300}
    assert list(record["scores"]) == ["n3", "n1", "n4", "n2"]  # scoring order, as the cycle visited them
    assert record["total"] == {"n3": 310, "n1": 330, "n4": 330, "n2": 320}
    assert attempt.to_record().details["score"] == {"NodeResourcesFit": {"n3": 1, "n1": 3, "n4": 3, "n2": 2}}
    assert attempt.top_nodes(3) == [("n1", 330), ("n4", 330), ("n2", 320)]
    top = attempt.top_record(2)
    assert top.total == {"n1": 330, "n4": 330} and set(top.scores) == {"n1", "n4"}
    assert top.details["score"] == {"NodeResourcesFit": {"n1": 3, "n4": 3}}


def test_a_failure_after_scoring_clears_the_choices_but_keeps_the_verdicts() -> None:
    attempt = _begin()
    rows = np.array([0, 1])
    attempt.rejected(NAMES, np.array([2]), [_status("NodeName", "node(s) didn't match the requested node name")])
    attempt.feasible(NAMES, rows)
    attempt.scored(rows, {"NodeResourcesFit": np.array([5, 7])}, np.array([5, 7]), {}, np.array([1]))
    attempt.failed_at("reserve", "Gang", "gang incomplete")
    attempt.failed("Unschedulable", "0/4 nodes are available: 1 gang incomplete.", None)
    record = _encoded(attempt)
    assert (record["feasible"], record["scores"], record["total"], record["ties"]) == ([], {}, {}, [])
    assert set(record["filter"]) == {"n4"}
    assert attempt.to_record().details["reserve"] == {"Gang": "gang incomplete"}
    assert attempt.top_nodes(3) == [] and attempt.feasible_count() == 0


def test_extender_verdicts_are_streamed_as_the_record_shows_them() -> None:
    attempt = _begin()
    attempt.rejected_all(NAMES, _status("NodeName", "node(s) didn't match the requested node name"))
    attempt.extender_verdicts().setdefault("filter", {})["licence-check"] = "2 nodes dropped"
    attempt.failed("Unschedulable", "nope", None)
    assert _encoded(attempt)["extenders"] == {"filter": {"licence-check": "2 nodes dropped"}}


@settings(max_examples=80, deadline=None)
@given(
    # Totals from a narrow range tie often, from a wide one seldom.
    st.sampled_from([3, 1000]).flatmap(lambda top: st.lists(st.integers(0, top), min_size=1, max_size=150)),
    st.integers(1, 10),
    st.randoms(use_true_random=False),
)
def test_the_best_nodes_are_the_best_totals_then_names(totals: list[int], k: int, rnd: random.Random) -> None:
    """Whether or not the best total is shared by k nodes or more, and for few candidates or many,
    top_nodes is a plain sort's head."""
    names = np.array([f"n{i:02d}" for i in range(len(totals) + 3)], dtype=object)
    rows = np.array(rnd.sample(range(len(names)), len(totals)))
    attempt = _begin()
    attempt.feasible(names, rows)
    scores = np.array(totals, dtype=np.int64)
    attempt.scored(rows, {"NodeResourcesFit": scores}, scores, {}, rows[scores == scores.max()])
    attempt.scheduled(str(names[rows[0]]))
    want = sorted(zip(names[rows].tolist(), totals, strict=True), key=lambda p: (-p[1], p[0]))[:k]
    assert attempt.top_nodes(k) == want
    assert list(attempt.top_record(k).total.items()) == want


def test_smallest_gives_the_k_smallest_in_order() -> None:
    from kubesched.recording.attempt import _smallest, _smallest_values

    rng = np.random.default_rng(7)
    for n in (1, 3, 9, 50, 64, 65, 5000):
        values = rng.permutation(10 * n)[:n].astype(np.int64)
        for k in (1, 3, 8, 9, 12, 100):
            assert _smallest(values, k).tolist() == np.argsort(values)[:k].tolist()
            kept = values.copy()
            assert _smallest_values(values, k) == np.sort(values)[:k].tolist()
            assert values.tolist() == kept.tolist()  # not the caller's scratch: left as it was
            assert _smallest_values(kept, k, scratch=True) == np.sort(values)[:k].tolist()


def test_name_order_ranks_each_node_set_it_is_given() -> None:
    """The ranks are kept for the last name array, and made afresh when the snapshot replaces it."""
    from kubesched.recording.attempt import NameOrder

    order = NameOrder()
    first = np.array(["n3", "n1", "n2"], dtype=object)
    assert order.rank(first).tolist() == [2, 0, 1]
    assert order.rank(first) is order.rank(first)
    replaced = np.array(["n3", "n1", "n2", "n0"], dtype=object)
    assert order.rank(replaced).tolist() == [3, 1, 2, 0]
    assert order.ranked(replaced)[1] == ["n0", "n1", "n2", "n3"]
    assert order.rank(first).tolist() == [2, 0, 1]


def test_top_nodes_follow_the_node_set_each_attempt_was_decided_on() -> None:
    """One NameOrder across attempts on different node sets (a sink keeps one) ranks each set's names."""
    from kubesched.recording.attempt import NameOrder

    order = NameOrder()
    tops = []
    for names in (np.array(["b", "a", "c"], dtype=object), np.array(["b", "z", "c", "a"], dtype=object)):
        attempt = _begin()
        rows = np.arange(len(names))
        attempt.feasible(names, rows)
        scores = np.full(len(names), 7, dtype=np.int64)
        attempt.scored(rows, {"NodeResourcesFit": scores}, scores, {}, rows)
        attempt.scheduled("a")
        tops.append(attempt.top_nodes(2, order))
    assert tops == [[("a", 7), ("b", 7)], [("a", 7), ("b", 7)]]
