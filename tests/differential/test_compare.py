"""The comparison rules: tie membership for placements, exact node and victims for preemptions."""

from __future__ import annotations

from typing import Any

import pytest

from testing.differential.compare import AGREE, DISAGREE, EXPECTED, SKIPPED, compare
from testing.differential.verdict import BOUND, NONE, PREEMPTED, UNSCHEDULABLE, Verdict

STATE: list[dict[str, Any]] = [
    {"kind": "Node", "metadata": {"name": n}, "status": {"allocatable": {"cpu": "4"}}} for n in ("n1", "n2", "n3")
]
POD = {
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]},
}
BEST_EFFORT = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": [{}]}}
SCORES = {
    "n1": {"NodeResourcesFit": 90, "NodeResourcesBalancedAllocation": 90},
    "n2": {"NodeResourcesFit": 95, "NodeResourcesBalancedAllocation": 50},
}
TEXT = "0/3 nodes are available: 3 Insufficient cpu."

CASES: list[tuple[str, Verdict, Verdict, dict[str, Any], str, str | None]] = [
    ("bound on one of the best nodes", Verdict(BOUND, "n2"), Verdict(BOUND, "n1", ties=("n1", "n2")), POD, AGREE, None),
    ("bound elsewhere", Verdict(BOUND, "n3"), Verdict(BOUND, "n1", ties=("n1", "n2")), POD, DISAGREE, None),
    (
        "bound where v1.34 scores a zero-request pod best",
        Verdict(BOUND, "n2"),
        Verdict(BOUND, "n1", ties=("n1",), scores=SCORES),
        BEST_EFFORT,
        EXPECTED,
        None,
    ),
    (
        "... but not for a pod that requests something",
        Verdict(BOUND, "n2"),
        Verdict(BOUND, "n1", ties=("n1",), scores=SCORES),
        POD,
        DISAGREE,
        None,
    ),
    (
        "bound by one, unschedulable for the other",
        Verdict(BOUND, "n1"),
        Verdict(UNSCHEDULABLE, message=TEXT),
        POD,
        DISAGREE,
        None,
    ),
    (
        "unschedulable for both, same words",
        Verdict(UNSCHEDULABLE, message=TEXT),
        Verdict(UNSCHEDULABLE, message=TEXT),
        POD,
        AGREE,
        AGREE,
    ),
    (
        "unschedulable for both, other words",
        Verdict(UNSCHEDULABLE, message=TEXT),
        Verdict(UNSCHEDULABLE, message="0/3 nodes are available: 2 Insufficient cpu."),
        POD,
        AGREE,
        DISAGREE,
    ),
    (
        "the same preemption",
        Verdict(PREEMPTED, "n1", TEXT, ("a", "b")),
        Verdict(PREEMPTED, "n1", TEXT, ("b", "a")),
        POD,
        AGREE,
        AGREE,
    ),
    (
        "another victim",
        Verdict(PREEMPTED, "n1", TEXT, ("a",)),
        Verdict(PREEMPTED, "n1", TEXT, ("b",)),
        POD,
        DISAGREE,
        AGREE,
    ),
    (
        "another node",
        Verdict(PREEMPTED, "n1", TEXT, ("a",)),
        Verdict(PREEMPTED, "n2", TEXT, ("a",)),
        POD,
        DISAGREE,
        AGREE,
    ),
    (
        "preemption against no preemption",
        Verdict(PREEMPTED, "n1", TEXT, ("a",)),
        Verdict(UNSCHEDULABLE, message=TEXT),
        POD,
        DISAGREE,
        None,
    ),
    ("upstream never decided", Verdict(NONE), Verdict(BOUND, "n1", ties=("n1",)), POD, SKIPPED, None),
    ("kubesched never decided", Verdict(BOUND, "n1"), Verdict(NONE), POD, DISAGREE, None),
]


@pytest.mark.parametrize(
    ("upstream", "kubesched", "pod", "decision", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_compare(
    upstream: Verdict, kubesched: Verdict, pod: dict[str, Any], decision: str, message: str | None
) -> None:
    result = compare(1, 0, upstream, kubesched, STATE, pod)
    assert (result.decision, result.message) == (decision, message)
    assert result.agrees == (decision == AGREE and message in (AGREE, None))


def test_nothing_is_expected_when_kubesched_emulates_the_oracle_version() -> None:
    upstream, kubesched = Verdict(BOUND, "n2"), Verdict(BOUND, "n1", ties=("n1",), scores=SCORES)
    assert compare(1, 0, upstream, kubesched, STATE, BEST_EFFORT).decision == EXPECTED
    assert compare(1, 0, upstream, kubesched, STATE, BEST_EFFORT, explain=False).decision == DISAGREE
    taints = (
        Verdict(UNSCHEDULABLE, message="0/1 nodes are available: 1 node(s) had untolerated taint(s)."),
        Verdict(UNSCHEDULABLE, message="0/1 nodes are available: 1 node(s) had untolerated taint {a: b}."),
    )
    assert compare(1, 0, *taints, STATE, POD).message == EXPECTED
    assert compare(1, 0, *taints, STATE, POD, explain=False).message == DISAGREE


def test_verdict_round_trips_through_json_shape() -> None:
    verdict = Verdict(PREEMPTED, "n1", TEXT, ("a", "b"))
    assert Verdict.from_dict(verdict.to_dict()) == verdict
    assert str(verdict) == f"preempted on n1, victims [a, b]: {TEXT}"
