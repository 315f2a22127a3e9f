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
    SIMULATOR_PREFIX,
    ProfilePlugins,
    annotate,
    attempt_annotations,
    filter_result,
    pod_annotations,
    score_result,
    simulator_attempt_annotations,
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


# -- kube-scheduler-simulator's own keys (--annotation-prefix kube-scheduler-simulator.sigs.k8s.io/) -------

SIM_PROFILE = ProfilePlugins(
    filter=FILTERS, score_weights={"NodeResourcesFit": 1, "TaintToleration": 3},
    pre_filter=("NodeResourcesFit", "NodeAffinity"), post_filter=("DefaultPreemption",),
    pre_score=("TaintToleration",), reserve=("VolumeBinding",), permit=(), pre_bind=("VolumeBinding",),
    bind=("DefaultBinder",))


def _sim(record: AttemptRecord) -> dict[str, Any]:
    out = simulator_attempt_annotations(record, SIM_PROFILE)
    assert all(key.startswith(SIMULATOR_PREFIX) for key in out)
    return {key[len(SIMULATOR_PREFIX):]: (value if key.endswith("selected-node") else json.loads(value))
            for key, value in out.items()}


def test_simulator_keys_for_a_scheduled_attempt() -> None:
    record = AttemptRecord(pod="default/p", attempt=1, profile="default-scheduler", result="Scheduled", node="n1",
                           feasible=["n1", "n2"], scores={"n1": {"NodeResourcesFit": 80, "TaintToleration": 300},
                                                         "n2": {"NodeResourcesFit": 40, "TaintToleration": 300}},
                           details={"score": {"NodeResourcesFit": {"n1": 80, "n2": 40},
                                              "TaintToleration": {"n1": 0, "n2": 0}}})
    got = _sim(record)
    assert set(got) == {"prefilter-result-status", "prefilter-result", "filter-result", "postfilter-result",
                        "prescore-result", "score-result", "finalscore-result", "reserve-result", "permit-result",
                        "permit-result-timeout", "prebind-result", "bind-result", "selected-node"}
    assert got["prefilter-result-status"] == {"NodeResourcesFit": "success", "NodeAffinity": "success"}
    assert got["filter-result"]["n1"] == dict.fromkeys(FILTERS, "passed")
    assert got["prescore-result"] == {"TaintToleration": "success"}
    assert got["score-result"]["n2"] == {"NodeResourcesFit": "40", "TaintToleration": "0"}
    assert got["finalscore-result"]["n1"] == {"NodeResourcesFit": "80", "TaintToleration": "300"}
    assert got["reserve-result"] == {"VolumeBinding": "success"}
    assert got["bind-result"] == {"DefaultBinder": "success"}
    assert got["postfilter-result"] == {} and got["selected-node"] == "n1"


def test_simulator_keys_for_a_preempting_attempt_and_a_prefilter_rejection() -> None:
    preempting = AttemptRecord(pod="default/p", attempt=1, profile="default-scheduler", result="Unschedulable",
                               filter={"n1": _rejected("NodeResourcesFit", "Insufficient cpu"),
                                       "n2": _rejected("TaintToleration", "taint")},
                               nominated_node="n1", details={"postfilter": {"DefaultPreemption": "success"}})
    got = _sim(preempting)
    assert got["postfilter-result"] == {"n1": {"DefaultPreemption": "preemption victim"}, "n2": {}}
    assert got["bind-result"] == {} and got["reserve-result"] == {} and got["selected-node"] == ""
    rejected = AttemptRecord(pod="default/p", attempt=1, profile="default-scheduler", result="Unschedulable",
                             filter={n: _rejected("NodeAffinity", "node(s) didn't match") for n in ("n1", "n2")})
    got = _sim(rejected)
    assert got["prefilter-result-status"] == {"NodeResourcesFit": "success", "NodeAffinity": "node(s) didn't match"}
    assert got["filter-result"] == {}


def test_result_history_under_any_prefix() -> None:
    records = [AttemptRecord(pod="default/p", attempt=i, profile="default-scheduler", result="Unschedulable",
                             filter={"n1": _rejected("NodeResourcesFit", "Insufficient cpu")}) for i in (1, 2)]
    sim = pod_annotations(records, {"default-scheduler": SIM_PROFILE}, SIMULATOR_PREFIX)
    history = json.loads(sim[SIMULATOR_PREFIX + "result-history"])
    assert len(history) == 2 and all(isinstance(v, str) for entry in history for v in entry.values())
    assert set(history[0]) == set(sim) - {SIMULATOR_PREFIX + "result-history"}
    ours = pod_annotations(records, {"default-scheduler": SIM_PROFILE}, "example.com/")
    assert set(ours) == {"example.com/" + k[len("kubesched.io/"):]
                         for k in pod_annotations(records, {"default-scheduler": SIM_PROFILE})}
