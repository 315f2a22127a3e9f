"""Result annotations: kube-scheduler-simulator's keys and JSON shapes, built from attempt records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.sim.annotations import (
    BIND_RESULT,
    FILTER_RESULT,
    FINAL_SCORE_RESULT,
    POST_FILTER_RESULT,
    RESULT_HISTORY,
    SCORE_RESULT,
    SELECTED_NODE,
    ProfilePlugins,
    annotate,
    attempt_annotations,
    filter_result,
    pod_annotations,
    score_result,
)
from kubesched.trace import AttemptRecord

FILTERS = ("NodeUnschedulable", "TaintToleration", "NodeResourcesFit")


def _rejected(plugin: str, *reasons: str, code: str = "Unschedulable") -> dict[str, Any]:
    return {"plugin": plugin, "code": code, "reasons": list(reasons)}


@pytest.mark.parametrize(("feasible", "rejected", "want"), [
    pytest.param(["n1"], {}, {"n1": dict.fromkeys(FILTERS, "passed")}, id="feasible-node-passed-every-filter"),
    pytest.param([], {"n2": _rejected("TaintToleration", "node(s) had untolerated taint {a: b}")},
                 {"n2": {"NodeUnschedulable": "passed",
                         "TaintToleration": "node(s) had untolerated taint {a: b}"}},
                 id="plugins-after-the-rejecting-one-never-ran"),
    pytest.param([], {"n3": _rejected("NodeResourcesFit", "Insufficient cpu", "Insufficient memory")},
                 {"n3": {"NodeUnschedulable": "passed", "TaintToleration": "passed",
                         "NodeResourcesFit": "Insufficient cpu, Insufficient memory"}},
                 id="reasons-joined"),
    pytest.param([], {"n4": _rejected("NodeAffinity", "node(s) didn't match Pod's node affinity/selector")},
                 {"n4": {"NodeAffinity": "node(s) didn't match Pod's node affinity/selector"}},
                 id="prefilter-rejection-alone"),
    pytest.param([], {"n5": {"plugin": "PreFilterResult", "code": "Skipped"}},
                 {"n5": {"PreFilterResult": "Skipped"}}, id="excluded-by-prefilter-result-shows-code"),
])
def test_filter_result(feasible: list[str], rejected: dict[str, Any], want: dict[str, Any]) -> None:
    record = AttemptRecord(pod="default/p", attempt=1, profile="default-scheduler",
                           feasible=feasible, filter=rejected)
    assert filter_result(record, FILTERS) == want


def _scored_record(details: dict[str, Any] | None = None) -> AttemptRecord:
    return AttemptRecord(
        pod="default/p", attempt=1, profile="default-scheduler", result="Scheduled", node="n2",
        feasible=["n1", "n2"],
        scores={"n2": {"NodeResourcesFit": 100, "TaintToleration": 300},
                "n1": {"NodeResourcesFit": 50, "TaintToleration": 0}},
        total={"n2": 400, "n1": 50}, ties=["n2"], details=details or {},
    )


WEIGHTS = ProfilePlugins(FILTERS, {"NodeResourcesFit": 1, "TaintToleration": 3})


@pytest.mark.parametrize(("details", "want"), [
    pytest.param({"score": {"NodeResourcesFit": {"n2": 81, "n1": 40}, "TaintToleration": {"n2": 0, "n1": 2}}},
                 {"n1": {"NodeResourcesFit": "40", "TaintToleration": "2"},
                  "n2": {"NodeResourcesFit": "81", "TaintToleration": "0"}},
                 id="raw-scores-before-normalize-and-weight"),
    pytest.param({}, {"n1": {"NodeResourcesFit": "50", "TaintToleration": "0"},
                      "n2": {"NodeResourcesFit": "100", "TaintToleration": "100"}},
                 id="no-raw-scores-falls-back-to-unweighted-normalised"),
])
def test_score_result(details: dict[str, Any], want: dict[str, Any]) -> None:
    assert score_result(_scored_record(details), WEIGHTS.score_weights) == want


def test_attempt_annotations_are_json_strings_with_the_simulator_shapes() -> None:
    record = _scored_record()
    record.details["bind"] = {"DefaultBinder": "binding rejected"}
    got = attempt_annotations(record, WEIGHTS)
    assert got[SELECTED_NODE] == "n2"
    assert json.loads(got[FINAL_SCORE_RESULT]) == {
        "n1": {"NodeResourcesFit": "50", "TaintToleration": "0"},
        "n2": {"NodeResourcesFit": "100", "TaintToleration": "300"},
    }
    assert json.loads(got[FILTER_RESULT]) == {n: dict.fromkeys(FILTERS, "passed") for n in ("n1", "n2")}
    assert json.loads(got[POST_FILTER_RESULT]) == {}
    assert json.loads(got[BIND_RESULT]) == {"DefaultBinder": "binding rejected"}
    assert all(isinstance(v, str) for v in got.values())


def test_pod_annotations_keep_the_last_attempt_on_top_and_every_attempt_in_history() -> None:
    failed = AttemptRecord(pod="default/p", attempt=1, profile="default-scheduler", result="Unschedulable",
                           message="0/1 nodes are available: 1 Insufficient cpu.",
                           filter={"n1": _rejected("NodeResourcesFit", "Insufficient cpu")},
                           details={"postfilter": {"DefaultPreemption": "preemption: not helpful"}})
    scheduled = AttemptRecord(pod="default/p", attempt=2, profile="default-scheduler", result="Scheduled",
                              node="n1", feasible=["n1"], ties=["n1"])
    got = pod_annotations([failed, scheduled], {"default-scheduler": WEIGHTS})
    assert got[SELECTED_NODE] == "n1"
    history = json.loads(got[RESULT_HISTORY])
    assert [h[SELECTED_NODE] for h in history] == ["", "n1"]
    assert json.loads(history[0][POST_FILTER_RESULT]) == {"DefaultPreemption": "preemption: not helpful"}
    assert json.loads(history[0][FILTER_RESULT])["n1"]["NodeResourcesFit"] == "Insufficient cpu"
    assert json.loads(got[SCORE_RESULT]) == {}  # one feasible node: nothing was scored


def test_pod_without_attempts_gets_no_annotations() -> None:
    assert pod_annotations([], {}) == {}


def test_annotate_keeps_existing_annotations() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "p", "annotations": {"team": "web"}}}
    annotate(pod, {SELECTED_NODE: "n1"})
    assert pod["metadata"]["annotations"] == {"team": "web", SELECTED_NODE: "n1"}
