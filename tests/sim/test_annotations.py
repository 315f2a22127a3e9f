"""Result annotations: kube-scheduler-simulator's keys and JSON shapes, built from attempt records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.recording.trace import AttemptRecord
from kubesched.sim.annotations import (
    BIND_RESULT,
    FILTER_RESULT,
    FINAL_SCORE_RESULT,
    POST_FILTER_RESULT,
    RESULT_DETAIL,
    RESULT_HISTORY,
    SCORE_RESULT,
    SELECTED_NODE,
    SIMULATOR_PREFIX,
    AnnotationRecorder,
    ProfilePlugins,
    annotate,
    attempt_annotations,
    filter_result,
    filter_verdict_counts,
    pod_annotations,
    score_result,
    simulator_attempt_annotations,
)
from kubesched.sim.output import profile_plugins
from kubesched.sim.simulate import simulate
from tests.factories import node_dict, pod_dict

FILTERS = ("NodeUnschedulable", "TaintToleration", "NodeResourcesFit")


def _rejected(plugin: str, *reasons: str, code: str = "Unschedulable") -> dict[str, Any]:
    return {"plugin": plugin, "code": code, "reasons": list(reasons)}


@pytest.mark.parametrize(
    ("feasible", "rejected", "want"),
    [
        pytest.param(["n1"], {}, {"n1": dict.fromkeys(FILTERS, "passed")}, id="feasible-node-passed-every-filter"),
        pytest.param(
            [],
            {"n2": _rejected("TaintToleration", "node(s) had untolerated taint {a: b}")},
            {"n2": {"NodeUnschedulable": "passed", "TaintToleration": "node(s) had untolerated taint {a: b}"}},
            id="plugins-after-the-rejecting-one-never-ran",
        ),
        pytest.param(
            [],
            {"n3": _rejected("NodeResourcesFit", "Insufficient cpu", "Insufficient memory")},
            {
                "n3": {
                    "NodeUnschedulable": "passed",
                    "TaintToleration": "passed",
                    "NodeResourcesFit": "Insufficient cpu, Insufficient memory",
                }
            },
            id="reasons-joined",
        ),
        pytest.param(
            [],
            {"n4": _rejected("NodeAffinity", "node(s) didn't match Pod's node affinity/selector")},
            {"n4": {"NodeAffinity": "node(s) didn't match Pod's node affinity/selector"}},
            id="prefilter-rejection-alone",
        ),
        pytest.param(
            [],
            {"n5": {"plugin": "PreFilterResult", "code": "Skipped"}},
            {"n5": {"PreFilterResult": "Skipped"}},
            id="excluded-by-prefilter-result-shows-code",
        ),
    ],
)
def test_filter_result(feasible: list[str], rejected: dict[str, Any], want: dict[str, Any]) -> None:
    record = AttemptRecord(pod="default/p", attempt=1, profile="default-scheduler", feasible=feasible, filter=rejected)
    assert filter_result(record, FILTERS) == want


def _scored_record(details: dict[str, Any] | None = None) -> AttemptRecord:
    return AttemptRecord(
        pod="default/p",
        attempt=1,
        profile="default-scheduler",
        result="Scheduled",
        node="n2",
        feasible=["n1", "n2"],
        scores={
            "n2": {"NodeResourcesFit": 100, "TaintToleration": 300},
            "n1": {"NodeResourcesFit": 50, "TaintToleration": 0},
        },
        total={"n2": 400, "n1": 50},
        ties=["n2"],
        details=details or {},
    )


WEIGHTS = ProfilePlugins(FILTERS, {"NodeResourcesFit": 1, "TaintToleration": 3})


@pytest.mark.parametrize(
    ("details", "want"),
    [
        pytest.param(
            {"score": {"NodeResourcesFit": {"n2": 81, "n1": 40}, "TaintToleration": {"n2": 0, "n1": 2}}},
            {
                "n1": {"NodeResourcesFit": "40", "TaintToleration": "2"},
                "n2": {"NodeResourcesFit": "81", "TaintToleration": "0"},
            },
            id="raw-scores-before-normalize-and-weight",
        ),
        pytest.param(
            {},
            {
                "n1": {"NodeResourcesFit": "50", "TaintToleration": "0"},
                "n2": {"NodeResourcesFit": "100", "TaintToleration": "100"},
            },
            id="no-raw-scores-falls-back-to-unweighted-normalised",
        ),
    ],
)
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
    failed = AttemptRecord(
        pod="default/p",
        attempt=1,
        profile="default-scheduler",
        result="Unschedulable",
        message="0/1 nodes are available: 1 Insufficient cpu.",
        filter={"n1": _rejected("NodeResourcesFit", "Insufficient cpu")},
        details={"postfilter": {"DefaultPreemption": "preemption: not helpful"}},
    )
    scheduled = AttemptRecord(
        pod="default/p",
        attempt=2,
        profile="default-scheduler",
        result="Scheduled",
        node="n1",
        feasible=["n1"],
        ties=["n1"],
    )
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
    filter=FILTERS,
    score_weights={"NodeResourcesFit": 1, "TaintToleration": 3},
    pre_filter=("NodeResourcesFit", "NodeAffinity"),
    post_filter=("DefaultPreemption",),
    pre_score=("TaintToleration",),
    reserve=("VolumeBinding",),
    permit=(),
    pre_bind=("VolumeBinding",),
    bind=("DefaultBinder",),
)


def _sim(record: AttemptRecord) -> dict[str, Any]:
    out = simulator_attempt_annotations(record, SIM_PROFILE)
    assert all(key.startswith(SIMULATOR_PREFIX) for key in out)
    return {
        key[len(SIMULATOR_PREFIX) :]: (value if key.endswith("selected-node") else json.loads(value))
        for key, value in out.items()
    }


def test_simulator_keys_for_a_scheduled_attempt() -> None:
    record = AttemptRecord(
        pod="default/p",
        attempt=1,
        profile="default-scheduler",
        result="Scheduled",
        node="n1",
        feasible=["n1", "n2"],
        scores={
            "n1": {"NodeResourcesFit": 80, "TaintToleration": 300},
            "n2": {"NodeResourcesFit": 40, "TaintToleration": 300},
        },
        details={"score": {"NodeResourcesFit": {"n1": 80, "n2": 40}, "TaintToleration": {"n1": 0, "n2": 0}}},
    )
    got = _sim(record)
    assert set(got) == {
        "prefilter-result-status",
        "prefilter-result",
        "filter-result",
        "postfilter-result",
        "prescore-result",
        "score-result",
        "finalscore-result",
        "reserve-result",
        "permit-result",
        "permit-result-timeout",
        "prebind-result",
        "bind-result",
        "selected-node",
    }
    assert got["prefilter-result-status"] == {"NodeResourcesFit": "success", "NodeAffinity": "success"}
    assert got["filter-result"]["n1"] == dict.fromkeys(FILTERS, "passed")
    assert got["prescore-result"] == {"TaintToleration": "success"}
    assert got["score-result"]["n2"] == {"NodeResourcesFit": "40", "TaintToleration": "0"}
    assert got["finalscore-result"]["n1"] == {"NodeResourcesFit": "80", "TaintToleration": "300"}
    assert got["reserve-result"] == {"VolumeBinding": "success"}
    assert got["bind-result"] == {"DefaultBinder": "success"}
    assert got["postfilter-result"] == {} and got["selected-node"] == "n1"


def test_simulator_keys_for_a_preempting_attempt_and_a_prefilter_rejection() -> None:
    preempting = AttemptRecord(
        pod="default/p",
        attempt=1,
        profile="default-scheduler",
        result="Unschedulable",
        filter={"n1": _rejected("NodeResourcesFit", "Insufficient cpu"), "n2": _rejected("TaintToleration", "taint")},
        nominated_node="n1",
        details={"postfilter": {"DefaultPreemption": "success"}},
    )
    got = _sim(preempting)
    assert got["postfilter-result"] == {"n1": {"DefaultPreemption": "preemption victim"}, "n2": {}}
    assert got["bind-result"] == {} and got["reserve-result"] == {} and got["selected-node"] == ""
    rejected = AttemptRecord(
        pod="default/p",
        attempt=1,
        profile="default-scheduler",
        result="Unschedulable",
        filter={n: _rejected("NodeAffinity", "node(s) didn't match") for n in ("n1", "n2")},
    )
    got = _sim(rejected)
    assert got["prefilter-result-status"] == {"NodeResourcesFit": "success", "NodeAffinity": "node(s) didn't match"}
    assert got["filter-result"] == {}


def test_result_history_under_any_prefix() -> None:
    records = [
        AttemptRecord(
            pod="default/p",
            attempt=i,
            profile="default-scheduler",
            result="Unschedulable",
            filter={"n1": _rejected("NodeResourcesFit", "Insufficient cpu")},
        )
        for i in (1, 2)
    ]
    sim = pod_annotations(records, {"default-scheduler": SIM_PROFILE}, SIMULATOR_PREFIX)
    history = json.loads(sim[SIMULATOR_PREFIX + "result-history"])
    assert len(history) == 2 and all(isinstance(v, str) for entry in history for v in entry.values())
    assert set(history[0]) == set(sim) - {SIMULATOR_PREFIX + "result-history"}
    ours = pod_annotations(records, {"default-scheduler": SIM_PROFILE}, "example.com/")
    assert set(ours) == {
        "example.com/" + k[len("kubesched.io/") :] for k in pod_annotations(records, {"default-scheduler": SIM_PROFILE})
    }


# -- big clusters: counts and the best nodes instead of every node ---------------------------------------
@pytest.mark.parametrize(
    ("counts", "feasible", "want"),
    [
        pytest.param({}, 7, {p: {"passed": 7} for p in FILTERS}, id="all-feasible"),
        pytest.param(
            {
                ("TaintToleration", "node(s) had untolerated taint {a: b}"): 2,
                ("NodeResourcesFit", "Insufficient cpu"): 3,
            },
            5,
            {
                "NodeUnschedulable": {"passed": 10},
                "TaintToleration": {"passed": 8, "node(s) had untolerated taint {a: b}": 2},
                "NodeResourcesFit": {"passed": 5, "Insufficient cpu": 3},
            },
            id="a-plugin-sees-the-nodes-no-earlier-plugin-rejected",
        ),
        pytest.param(
            {("NodeResourcesFit", "Insufficient cpu"): 4},
            0,
            {
                "NodeUnschedulable": {"passed": 4},
                "TaintToleration": {"passed": 4},
                "NodeResourcesFit": {"Insufficient cpu": 4},
            },
            id="nothing-feasible",
        ),
        pytest.param(
            {("NodeAffinity", "node(s) didn't satisfy plugin NodeAffinity"): 6},
            0,
            {"NodeAffinity": {"node(s) didn't satisfy plugin NodeAffinity": 6}},
            id="prefilter-rejection-alone",
        ),
    ],
)
def test_filter_verdict_counts(counts: dict[tuple[str, str], int], feasible: int, want: dict[str, Any]) -> None:
    assert filter_verdict_counts(counts, feasible, FILTERS) == want


def _big_cluster() -> list[dict[str, Any]]:
    nodes = [node_dict(f"n{i}", cpu=str(2 + i % 3)) for i in range(8)]
    nodes.append(node_dict("tainted", cpu="8", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]))
    return [*nodes, pod_dict("web", cpu="1"), pod_dict("huge", cpu="16")]


def test_annotations_above_the_node_limit_carry_counts_and_the_best_nodes() -> None:
    recorder = AnnotationRecorder(node_limit=5, top=3)
    result = simulate(_big_cluster(), tie_break="name", recorders=[recorder], record="full")
    plugins = profile_plugins(result)
    web = recorder.pod_annotations("default/web", plugins)
    record = next(r for r in result.records if r.pod == "default/web")
    best = sorted(record.total.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    assert list(json.loads(web[FINAL_SCORE_RESULT])) == sorted(n for n, _ in best)
    assert set(json.loads(web[SCORE_RESULT])) == {n for n, _ in best}
    counts = json.loads(web[FILTER_RESULT])
    assert counts["TaintToleration"] == {"passed": 8, "node(s) had untolerated taint(s)": 1}
    assert counts["NodeResourcesFit"] == {"passed": 8}
    assert "9 nodes" in web[RESULT_DETAIL] and "3 best-scoring" in web[RESULT_DETAIL]
    huge = json.loads(recorder.pod_annotations("default/huge", plugins)[FILTER_RESULT])
    assert huge["NodeResourcesFit"] == {"Insufficient cpu": 8}
    assert json.loads(recorder.pod_annotations("default/huge", plugins)[SCORE_RESULT]) == {}


def test_annotations_up_to_the_node_limit_equal_those_of_full_records() -> None:
    recorder = AnnotationRecorder(node_limit=100)
    result = simulate(_big_cluster(), tie_break="name", recorders=[recorder], record="full")
    plugins = profile_plugins(result)
    for pod in ("default/web", "default/huge"):
        want = pod_annotations([r for r in result.records if r.pod == pod], plugins)
        got = recorder.pod_annotations(pod, plugins)
        assert got == want and RESULT_DETAIL not in got
