"""The v1.30 → v1.34 explanations, on message pairs recorded from upstream v1.34.4 and kubesched (v1.30)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

import pytest

from testing.differential.catalogue import (
    ABSENT_NODES,
    BALANCED_SKIP,
    DRA_POSTFILTER,
    FIT_UNRESOLVABLE,
    RWOP_TEXT,
    TAINT_TEXT,
    VOLUME_AFFINITY_TEXT,
    VOLUME_PREFILTER,
    FitMessage,
    PodFacts,
    explain_message,
    explain_placement,
    parse_fit_message,
    parse_quantity,
    pod_facts,
)

PLAIN = PodFacts()
GPU_TOO_BIG = PodFacts(unresolvable_nodes=frozenset({"n0", "n1", "n2", "n3"}))
LOCAL = PodFacts(local_volume_nodes=frozenset({"n1"}))


def test_parse_splits_histogram_and_preemption() -> None:
    parsed = parse_fit_message(
        "0/6 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), "
        "4 Insufficient example.com/gpu. no new claims to deallocate, preemption: 0/6 nodes "
        "are available: 1 node(s) didn't match pod topology spread constraints, "
        "5 Preemption is not helpful for scheduling."
    )
    assert parsed == FitMessage(
        6,
        Counter({"Insufficient cpu": 1, "node(s) had untolerated taint(s)": 1, "Insufficient example.com/gpu": 4}),
        post="no new claims to deallocate, preemption: 0/6 nodes are available: 1 node(s) "
        "didn't match pod topology spread constraints, 5 Preemption is not helpful "
        "for scheduling.",
    )


def test_parse_prefilter_message_and_preemption_text() -> None:
    parsed = parse_fit_message(
        '0/5 nodes are available: persistentvolumeclaim "missing" not found. preemption: '
        "not eligible due to preemptionPolicy=Never."
    )
    assert parsed == FitMessage(
        5,
        prefilter='persistentvolumeclaim "missing" not found',
        post="preemption: not eligible due to preemptionPolicy=Never.",
    )
    assert parse_fit_message("0/1 nodes are available: 1 Insufficient cpu.") == FitMessage(
        1, Counter({"Insufficient cpu": 1})
    )
    assert parse_fit_message('running PreBind plugin "VolumeBinding": timed out') is None


EXPLAINED: list[tuple[str, str, str, PodFacts, list[str] | None]] = [
    (
        "equal texts need no explanation",
        "0/1 nodes are available: 1 Insufficient cpu.",
        "0/1 nodes are available: 1 Insufficient cpu.",
        PLAIN,
        [],
    ),
    (
        "taints are no longer named, and merge into one count",
        "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) had untolerated taint(s). no new claims to deallocate, "
        "preemption: not eligible due to preemptionPolicy=Never.",
        "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {a: b}, 2 node(s) had "
        "untolerated taint {c: d}. preemption: not eligible due to preemptionPolicy=Never.",
        PLAIN,
        [DRA_POSTFILTER, TAINT_TEXT],
    ),
    (
        "a PreFilter rejection stops the PostFilters at DynamicResources' missing state",
        '0/6 nodes are available: persistentvolumeclaim "missing" not found. not found',
        '0/6 nodes are available: persistentvolumeclaim "missing" not found. preemption: 0/6 nodes are available: '
        "6 Preemption is not helpful for scheduling.",
        PLAIN,
        [DRA_POSTFILTER],
    ),
    (
        "... where v1.30's preemption first refuses a Never pod",
        "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found",
        "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: not eligible due to "
        "preemptionPolicy=Never.",
        PodFacts(preemption_never=True),
        [DRA_POSTFILTER],
    ),
    (
        "a Never pod's text is not explained for a pod that may preempt",
        "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found",
        "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: not eligible due to "
        "preemptionPolicy=Never.",
        PLAIN,
        None,
    ),
    (
        "nodes outside NodeAffinity's PreFilterResult are counted",
        "0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 node(s) didn't satisfy plugin(s) "
        "[NodeAffinity]. no new claims to deallocate, preemption: 0/5 nodes are available: 5 Preemption is not helpful "
        "for scheduling.",
        "0/5 nodes are available: 1 node(s) had untolerated taint {gpu-only: a}. preemption: 0/5 nodes are available: "
        "5 Preemption is not helpful for scheduling.",
        PLAIN,
        [ABSENT_NODES, DRA_POSTFILTER, TAINT_TEXT],
    ),
    (
        "requests above allocatable leave nodes out of the dry run",
        "0/4 nodes are available: 3 Insufficient cpu, 4 Insufficient example.com/gpu. no new claims to deallocate, "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
        "0/4 nodes are available: 3 Insufficient cpu, 4 Insufficient example.com/gpu. preemption: 0/4 nodes are "
        "available: 2 Insufficient cpu, 4 Insufficient example.com/gpu.",
        GPU_TOO_BIG,
        [DRA_POSTFILTER, FIT_UNRESOLVABLE],
    ),
    (
        "... but only as many nodes as exceed it",
        "0/4 nodes are available: 4 Insufficient cpu. no new claims to deallocate, preemption: 0/4 nodes are "
        "available: 4 Preemption is not helpful for scheduling.",
        "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims "
        "found for incoming pod.",
        PodFacts(unresolvable_nodes=frozenset({"n0"})),
        None,
    ),
    (
        "... and a dry run's other reasons must match",
        "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are "
        "available: 1 node(s) didn't have free ports for the requested pod ports, 2 Preemption is not helpful for "
        "scheduling.",
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims "
        "found for incoming pod.",
        GPU_TOO_BIG,
        None,
    ),
    (
        "renamed volume reasons, and a local volume that narrowed v1.30's nodes",
        "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) had no available volume zone, 2 node(s) didn't match "
        "PersistentVolume's node affinity. no new claims to deallocate, preemption: not eligible due to "
        "preemptionPolicy=Never.",
        "0/4 nodes are available: 1 node(s) had no available volume zone. preemption: not eligible due to "
        "preemptionPolicy=Never.",
        LOCAL,
        [DRA_POSTFILTER, VOLUME_PREFILTER, VOLUME_AFFINITY_TEXT],
    ),
    (
        "a local volume and node names whose narrowings do not meet",
        "0/7 nodes are available: 1 node(s) were unschedulable, 6 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "no new claims to deallocate, preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.",
        "0/7 nodes are available: node(s) didn't satisfy plugin(s) [NodeAffinity VolumeBinding] simultaneously. "
        "preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.",
        LOCAL,
        [ABSENT_NODES, DRA_POSTFILTER, VOLUME_PREFILTER],
    ),
    (
        "without a local volume, missing nodes are not explained",
        "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) had no available volume zone.",
        "0/4 nodes are available: 1 node(s) had no available volume zone.",
        PLAIN,
        None,
    ),
    (
        "the ReadWriteOncePod conflict's new words",
        "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod.",
        "0/2 nodes are available: 2 node(s) has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode.",
        PLAIN,
        None,
    ),
    (
        "... as v1.30 words them",
        "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod.",
        "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
        "access mode.",
        PLAIN,
        [RWOP_TEXT],
    ),
    (
        "a count that differs is a disagreement",
        "0/3 nodes are available: 2 Insufficient cpu.",
        "0/3 nodes are available: 3 Insufficient cpu.",
        PLAIN,
        None,
    ),
]


@pytest.mark.parametrize(
    ("upstream", "kubesched", "facts", "tags"), [row[1:] for row in EXPLAINED], ids=[row[0] for row in EXPLAINED]
)
def test_explain_message(upstream: str, kubesched: str, facts: PodFacts, tags: list[str] | None) -> None:
    assert explain_message(upstream, kubesched, facts) == (sorted(tags) if tags is not None else None)


SCORES = {
    "n4": {"InterPodAffinity": 200, "NodeResourcesBalancedAllocation": 67, "NodeResourcesFit": 54},
    "n6": {"InterPodAffinity": 152, "NodeResourcesBalancedAllocation": 98, "NodeResourcesFit": 93},
}


def test_explain_placement_without_balanced_allocation_for_zero_request_pods() -> None:
    zero = PodFacts(zero_requests=True)
    assert explain_placement("n4", SCORES, zero) == [BALANCED_SKIP]  # 254 > 245 without the 67 and 98
    assert explain_placement("n6", SCORES, zero) is None
    assert explain_placement("n4", SCORES, PLAIN) is None  # the pod requests something: scored as in v1.30


def _node(name: str, **allocatable: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": allocatable}}


def _pod(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": containers, **spec}}


def test_pod_facts() -> None:
    state = [
        _node("small", cpu="2", memory="4Gi"),
        _node("big", cpu="8", memory="16Gi", **{"example.com/gpu": "4"}),
        {
            "kind": "PersistentVolume",
            "metadata": {"name": "pv"},
            "spec": {
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["big", "gone"]}
                                ]
                            }
                        ]
                    }
                }
            },
        },
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "ns", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"volumeName": "pv"},
        },
    ]
    pod = _pod(
        [{"resources": {"requests": {"cpu": "1500m", "example.com/gpu": "1"}}}],
        initContainers=[{"resources": {"requests": {"cpu": "3"}}}],
        volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
        preemptionPolicy="Never",
    )
    facts = pod_facts(state, pod)
    assert facts.unresolvable_nodes == {"small"}  # cpu 3 (the init container) and the GPU it lacks
    assert not facts.zero_requests and facts.preemption_never
    assert facts.local_volume_nodes == {"big", "gone"}
    best_effort = pod_facts(state, _pod([{"resources": {"requests": {"example.com/gpu": "1"}}}]))
    assert best_effort.zero_requests and best_effort.local_volume_nodes is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("250m", "0.25"),
        ("2", "2"),
        ("1.5", "1.5"),
        ("3840Mi", 3840 * 2**20),
        ("1G", 10**9),
        ("100Gi", 100 * 2**30),
        ("1e3", "1000"),
    ],
)
def test_parse_quantity(text: str, value: Any) -> None:
    assert parse_quantity(text) == Decimal(value)


def test_parse_quantity_refuses_what_it_does_not_know() -> None:
    with pytest.raises(ValueError, match="unsupported quantity"):
        parse_quantity("12parsecs")
