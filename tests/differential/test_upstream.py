"""The oracle's reading of watch events and budget status, without a control plane."""

from __future__ import annotations

from typing import Any

from testing.differential.upstream import _budget_current, _Follower
from testing.differential.verdict import BOUND, NONE, PREEMPTED, UNSCHEDULABLE, Verdict

TEXT = "0/2 nodes are available: 2 Insufficient cpu."


def _pod(
    name: str, node: str | None = None, condition: str | None = None, nominated: str | None = None, **meta: Any
) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if condition is not None:
        status["conditions"] = [
            {"type": "PodScheduled", "status": condition, **({"message": TEXT} if condition == "False" else {})}
        ]
    if nominated is not None:
        status["nominatedNodeName"] = nominated
    return {"metadata": {"name": name, **meta}, "spec": {"nodeName": node} if node else {}, "status": status}


def test_bound_at_first_attempt() -> None:
    follow = _Follower("p")
    follow.observe("ADDED", _pod("p"))
    assert not follow.finished and follow.first is None
    follow.observe("MODIFIED", _pod("p", "n1", "True"))
    assert follow.finished and follow.verdict() == Verdict(BOUND, "n1")


def test_unschedulable_is_deleted_then_done() -> None:
    follow = _Follower("p")
    follow.observe("MODIFIED", _pod("p", condition="False"))
    assert follow.wants_delete and not follow.finished
    follow.observe("DELETED", _pod("p", condition="False"))
    assert follow.finished and follow.verdict() == Verdict(UNSCHEDULABLE, None, TEXT)


def test_preemption_keeps_its_first_decision_and_collects_victims() -> None:
    follow = _Follower("p")
    follow.observe("MODIFIED", _pod("p", condition="False", nominated="n2"))
    assert not follow.wants_delete and not follow.finished
    follow.observe("MODIFIED", _pod("v1", "n2", deletionTimestamp="2025-06-01T00:00:00Z"))
    follow.observe("MODIFIED", _pod("p", "n2", "True", nominated="n2"))
    assert not follow.finished  # v1 is still terminating
    follow.observe("DELETED", _pod("v1", "n2"))
    follow.observe("DELETED", _pod("v0", "n2"))
    assert follow.finished
    assert follow.verdict() == Verdict(PREEMPTED, "n2", TEXT, ("v0", "v1"))


def test_no_decision() -> None:
    follow = _Follower("p")
    follow.observe("ADDED", _pod("p"))
    assert follow.verdict() == Verdict(NONE)


def test_deletions_without_a_preemption_are_noted() -> None:
    follow = _Follower("p")
    follow.observe("DELETED", _pod("stray", "n1"))
    follow.observe("MODIFIED", _pod("p", "n1", "True"))
    assert follow.verdict() == Verdict(BOUND, "n1")
    assert follow.notes == ["pods deleted without a preemption: ['stray']"]


def _ready(name: str, app: str, ready: bool = True, **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"app": app}, **meta},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def test_budget_is_current_when_its_counts_match_the_pods() -> None:
    pods = [
        _ready("a", "web"),
        _ready("b", "web", ready=False),
        _ready("c", "web", deletionTimestamp="t"),
        _ready("d", "db"),
    ]
    pdb: dict[str, Any] = {
        "metadata": {"generation": 1},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"observedGeneration": 1, "currentHealthy": 1, "expectedPods": 3},
    }
    assert _budget_current(pdb, pods)
    assert not _budget_current(pdb, pods[:1])  # one pod gone: expectedPods must follow
    assert not _budget_current({**pdb, "status": {**pdb["status"], "observedGeneration": 0}}, pods)
    unmanaged = {
        **pdb,
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"observedGeneration": 1, "currentHealthy": 1, "expectedPods": 0},
    }
    assert _budget_current(unmanaged, pods)  # bare pods: no expected count to compare
