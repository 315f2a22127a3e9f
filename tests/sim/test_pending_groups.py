"""Pending pods grouped by the causes of their last attempt, node counts aside."""

from __future__ import annotations

from kubesched import simulate
from kubesched.sim.pending_groups import causes_of, diagnoses_of_result, diagnoses_of_trace, group
from tests.sim.scenarios import node, pod

FIT = {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu", "Insufficient memory"]}
TAINT = {
    "plugin": "TaintToleration",
    "code": "UnschedulableAndUnresolvable",
    "reasons": ["node(s) had untolerated taint {gpu: yes}"],
}


def _record(pod_name: str, result: str = "Unschedulable", **filters: dict) -> dict:
    return {"pod": pod_name, "attempt": 1, "result": result, "message": "0/2 nodes are available: …", "filter": filters}


def test_each_reason_of_a_node_counts_on_its_own() -> None:
    causes = causes_of(_record("a", n1=FIT, n2=FIT, n3=TAINT), "")
    assert causes == {
        ("NodeResourcesFit", "Insufficient cpu"): 2,
        ("NodeResourcesFit", "Insufficient memory"): 2,
        ("TaintToleration", "node(s) had untolerated taint {gpu: yes}"): 1,
    }


def test_pods_with_the_same_causes_group_whatever_the_node_counts() -> None:
    records = [
        _record("default/a", n1=FIT, n2=TAINT),
        _record("default/b", n1=FIT, n2=FIT),
        _record("default/c", n1=TAINT, n2=FIT),
        _record("default/d", result="Scheduled"),
    ]
    groups = group(diagnoses_of_trace(records))
    assert [[d.pod for d in g.pods] for g in groups] == [["default/a", "default/c"], ["default/b"]]
    assert groups[0].describe() == (
        "NodeResourcesFit: Insufficient cpu (1 node), Insufficient memory (1 node); "
        "TaintToleration: node(s) had untolerated taint {gpu: yes} (1 node)"
    )
    assert groups[1].describe() == "NodeResourcesFit: Insufficient cpu (2 nodes), Insufficient memory (2 nodes)"
    assert groups[1].to_dict()["causes"][0] == {
        "plugin": "NodeResourcesFit",
        "reason": "Insufficient cpu",
        "nodes": [2, 2],
    }


def test_a_later_attempt_that_scheduled_the_pod_takes_it_out() -> None:
    records = [_record("default/a", n1=FIT), _record("default/a", result="Scheduled")]
    assert diagnoses_of_trace(records) == []


def test_a_simulation_pending_pods_with_their_last_attempt_and_the_never_attempted() -> None:
    scenario = [node("n1", cpu="1"), pod("big", cpu="2"), pod("big-2", cpu="3"), pod("other", schedulerName="nobody")]
    result = simulate(scenario, record="full")
    diagnoses = {d.pod: d for d in diagnoses_of_result(result)}
    assert set(diagnoses) == {"default/big", "default/big-2", "default/other"}
    assert diagnoses["default/big"].record is not None and diagnoses["default/big"].attempts >= 1
    assert diagnoses["default/other"].record is None
    groups = group(diagnoses.values())
    assert [len(g.pods) for g in groups] == [2, 1]
    assert groups[1].plugins == set()
    assert groups[1].describe() == "never attempted: its schedulerName matches no profile"
