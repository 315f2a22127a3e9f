"""Scores of NodeResourcesFit (three strategies) and NodeResourcesBalancedAllocation, hand-computed."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.config.features import feature_gates
from kubesched.config.pluginargs import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.noderesources import balanced_allocation, fit
from kubesched.plugins.noderesources.balanced_allocation import BalancedScorer
from kubesched.plugins.noderesources.least_allocated import LeastAllocatedScorer, least_requested_score
from kubesched.plugins.noderesources.most_allocated import MostAllocatedScorer
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    FunctionShapePoint,
    RequestedToCapacityRatioScorer,
    broken_linear_array,
    build_broken_linear_function,
    round_half_away,
)
from kubesched.plugins.noderesources.resource_allocation import ResourceAllocationScorer, weighted_node_score
from tests.factories import NO_HANDLE, make_snapshot
from tests.plugins.noderesources.builders import node, pod

GPU = "nvidia.com/gpu"


def _strategy(kind: str, *resources: tuple[str, int], shape: tuple[tuple[int, int], ...] = ()) -> NodeResourcesFitArgs:
    specs = tuple(ResourceSpec(n, w) for n, w in resources) or (ResourceSpec("cpu"), ResourceSpec("memory"))
    points = tuple(UtilizationShapePoint(u, s) for u, s in shape)
    rtcr = RequestedToCapacityRatioParam(points) if shape else None
    return NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(kind, specs, rtcr))


PluginArgs = NodeResourcesFitArgs | NodeResourcesBalancedAllocationArgs


@dataclass
class ScoreCase:
    name: str
    pod: Pod
    nodes: list[Node]
    want: list[int]
    existing: list[Pod] = field(default_factory=list)
    args: PluginArgs = field(default_factory=NodeResourcesFitArgs)


BINPACK = (("nvidia.com/gpu", 3), ("cpu", 1), ("memory", 1))
LINEAR = ((0, 0), (100, 10))

FIT_CASES = [
    # smoke: web-1 (500m, 1Gi) on node-small (2, 4Gi) and node-medium (4, 8Gi).
    ScoreCase(
        "least allocated, smoke web-1",
        pod("p", {"cpu": "500m", "memory": "1Gi"}),
        [node("small", "2", "4Gi"), node("medium", "4", "8Gi")],
        [75, 87],
    ),
    # cpu (16000-13000)*100/16000 = 18, memory (32-3)*100/32 = 90: (18*1 + 90*5) / 6 = 78.
    ScoreCase(
        "least allocated, weights",
        pod("p", {"cpu": "1", "memory": "1Gi"}),
        [node("n", "16", "32Gi")],
        [78],
        [pod("e", {"cpu": "12", "memory": "2Gi"}, node_name="n")],
        _strategy("LeastAllocated", ("cpu", 1), ("memory", 5)),
    ),
    ScoreCase(
        "least allocated, over-committed resource scores 0",
        pod("p", {"cpu": "3", "memory": "1Gi"}),
        [node("n", "2", "4Gi")],
        [37],
    ),
    # Missing requests count as 100m / 200Mi: cpu (4000-100)*100/4000 = 97, memory 8192-200 of 8192 -> 97.
    ScoreCase("least allocated, non-zero defaults for the pod", pod("p"), [node("n", "4", "8Gi")], [97]),
    ScoreCase(
        "least allocated, explicit zero stays zero",
        pod("p", {"cpu": "0", "memory": "0"}),
        [node("n", "4", "8Gi")],
        [100],
    ),
    # 20 best-effort pods count as 2 cpu / 4000Mi: cpu (4000-2100)/4000 -> 47, memory (8192-4200)/8192 -> 48.
    ScoreCase(
        "least allocated, non-zero defaults for existing pods",
        pod("p"),
        [node("n", "4", "8Gi")],
        [47],
        [pod(f"e{i}", node_name="n") for i in range(20)],
    ),
    ScoreCase(
        "scalar resource not requested is not scored",
        pod("p", {"cpu": "1", "memory": "2Gi"}),
        [node("n", "4", "8Gi", extra={GPU: "4"})],
        [75],
        args=_strategy("LeastAllocated", ("cpu", 1), ("memory", 1), (GPU, 7)),
    ),
    ScoreCase(
        "scalar resource absent from the node is not scored",
        pod("p", {"cpu": "1", "memory": "2Gi", GPU: "1"}),
        [node("n", "4", "8Gi")],
        [75],
        args=_strategy("LeastAllocated", ("cpu", 1), ("memory", 1), (GPU, 7)),
    ),
    # gpu (4-2)/4 -> 50 weight 2; cpu 75, memory 75: (100 + 75 + 75) / 4 = 62.
    ScoreCase(
        "scalar resource requested is scored",
        pod("p", {"cpu": "1", "memory": "2Gi", GPU: "2"}),
        [node("n", "4", "8Gi", extra={GPU: "4"})],
        [62],
        args=_strategy("LeastAllocated", ("cpu", 1), ("memory", 1), (GPU, 2)),
    ),
    ScoreCase(
        "no resource counted scores 0",
        pod("p", {GPU: "0"}),
        [node("n", "4", "8Gi")],
        [0],
        args=_strategy("LeastAllocated", (GPU, 1)),
    ),
    ScoreCase(
        "least allocated, ephemeral storage",
        pod("p", {"ephemeral-storage": "25"}),
        [node("n", extra={"ephemeral-storage": "100"})],
        [65],
        [pod("e", {"ephemeral-storage": "10"}, node_name="n")],
        _strategy("LeastAllocated", ("ephemeral-storage", 1)),
    ),
    ScoreCase(
        "most allocated, smoke web-1",
        pod("p", {"cpu": "500m", "memory": "1Gi"}),
        [node("small", "2", "4Gi"), node("medium", "4", "8Gi")],
        [25, 12],
        args=_strategy("MostAllocated"),
    ),
    ScoreCase(
        "most allocated caps at allocatable",
        pod("p", {"cpu": "3", "memory": "1Gi"}),
        [node("n", "2", "4Gi")],
        [62],
        args=_strategy("MostAllocated"),
    ),
    # (3+1)/4 gpus, 12+4 of 16 cpu, 48+16 of 64Gi: all 100% -> 100.
    ScoreCase(
        "rtcr full node",
        pod("p", {"cpu": "4", "memory": "16Gi", GPU: "1"}),
        [node("g", "16", "64Gi", extra={GPU: "4"})],
        [100],
        [pod("e", {"cpu": "12", "memory": "48Gi", GPU: "3"}, node_name="g")],
        _strategy("RequestedToCapacityRatio", *BINPACK, shape=LINEAR),
    ),
    # gpu 25% -> 25 (weight 3), cpu 50% -> 50: 125/4 = 31.25 -> 31.
    ScoreCase(
        "rtcr weighted mean rounds",
        pod("p", {"cpu": "8", "memory": "0", GPU: "1"}),
        [node("g", "16", "64Gi", extra={GPU: "4"})],
        [31],
        args=_strategy("RequestedToCapacityRatio", (GPU, 3), ("cpu", 1), ("memory", 1), shape=LINEAR),
    ),
    # 23 and 50: 36.5 rounds half away from zero.
    ScoreCase(
        "rtcr rounds halves up",
        pod("p", {"cpu": "23", "memory": "50Gi"}),
        [node("g", "100", "100Gi")],
        [37],
        args=_strategy("RequestedToCapacityRatio", shape=LINEAR),
    ),
    # memory utilisation 0 scores 0 and leaves the mean: only cpu's 50 counts.
    ScoreCase(
        "rtcr zero scores are left out",
        pod("p", {"cpu": "8", "memory": "0"}),
        [node("g", "16", "64Gi")],
        [50],
        args=_strategy("RequestedToCapacityRatio", shape=LINEAR),
    ),
    # shape 10 -> 5 -> 0: utilisation 36 -> 50 + trunc(-50*6/70) = 46 (floor division would say 45).
    ScoreCase(
        "rtcr decreasing shape truncates toward zero",
        pod("p", {"cpu": "36"}),
        [node("g", "100", "100Gi")],
        [46],
        args=_strategy("RequestedToCapacityRatio", ("cpu", 1), shape=((0, 10), (30, 5), (100, 0))),
    ),
    ScoreCase(
        "rtcr over-committed uses utilisation 100",
        pod("p", {"cpu": "200"}),
        [node("g", "100", "100Gi")],
        [20],
        args=_strategy("RequestedToCapacityRatio", ("cpu", 1), shape=((0, 0), (50, 8), (100, 2))),
    ),
]


def _scores(
    plugin: fit.NodeResourcesFit | balanced_allocation.NodeResourcesBalancedAllocation,
    case_pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    pre_score: bool = True,
) -> list[int]:
    snapshot = make_snapshot(nodes, existing)
    state = CycleState()
    all_nodes = snapshot.all_nodes()
    if pre_score:
        assert plugin.pre_score(state, case_pod, all_nodes) is None
    per_node = []
    by_name = {info.name: info for info in snapshot.node_infos}
    for n in nodes:
        score, status = plugin.score(state, case_pod, by_name[n.name])
        assert status is None
        per_node.append(score)
    batch = plugin.score_nodes(state, case_pod, all_nodes)
    assert batch.dtype == np.int64
    assert [batch[snapshot.index[n.name]] for n in nodes] == per_node
    assert plugin.normalize_scores(state, case_pod, batch) is None
    return per_node


@pytest.mark.parametrize("case", FIT_CASES, ids=lambda c: c.name)
def test_fit_score(case: ScoreCase) -> None:
    plugin = fit.new(case.args, NO_HANDLE)
    assert _scores(plugin, case.pod, case.nodes, case.existing) == case.want
    assert _scores(plugin, case.pod, case.nodes, case.existing, pre_score=False) == case.want


def _balanced(*resources: str) -> NodeResourcesBalancedAllocationArgs:
    return NodeResourcesBalancedAllocationArgs(tuple(ResourceSpec(r) for r in resources))


BALANCED_CASES = [
    ScoreCase("smoke web-1", pod("p", {"cpu": "500m", "memory": "1Gi"}), [node("m", "4", "8Gi")], [100]),
    # cpu 3000/4000 = .75, memory 5000/10000 = .5 -> std .125 -> 87.
    ScoreCase(
        "two resources",
        pod("p", {"cpu": "1", "memory": "2500"}),
        [node("n", "4", "10000")],
        [87],
        [pod("e", {"cpu": "2", "memory": "2500"}, node_name="n")],
    ),
    # .75, .5, .25 -> std sqrt(.125/3) = .2041 -> 79.
    ScoreCase(
        "three resources",
        pod("p", {"cpu": "3", "memory": "5000", "ephemeral-storage": "25"}),
        [node("n", "4", "10000", extra={"ephemeral-storage": "100"})],
        [79],
        args=_balanced("cpu", "memory", "ephemeral-storage"),
    ),
    ScoreCase(
        "resource the node lacks is left out",
        pod("p", {"cpu": "2", "memory": "5000", GPU: "1"}),
        [node("n", "4", "10000")],
        [100],
        args=_balanced("cpu", "memory", GPU),
    ),
    ScoreCase("fractions are capped at 1", pod("p", {"cpu": "8", "memory": "5000"}), [node("n", "4", "10000")], [75]),
    # Plain requests, not the 100m / 200Mi defaults: a small pod on busy best-effort nodes is balanced.
    ScoreCase(
        "plain requests",
        pod("p", {"cpu": "1", "memory": "2Gi"}),
        [node("n", "4", "8Gi")],
        [100],
        [pod(f"e{i}", node_name="n") for i in range(20)],
    ),
    ScoreCase("one resource", pod("p", {"cpu": "3"}), [node("n", "4", "8Gi")], [100], args=_balanced("cpu")),
    ScoreCase("single resource counted", pod("p", {"cpu": "1"}), [node("n", "4", "0")], [100]),
]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("case", BALANCED_CASES, ids=lambda c: c.name)
def test_balanced_allocation_score(case: ScoreCase, version: str) -> None:
    args = case.args if isinstance(case.args, NodeResourcesBalancedAllocationArgs) else _balanced("cpu", "memory")
    plugin = balanced_allocation.NodeResourcesBalancedAllocation(args, features=feature_gates(version))
    assert _scores(plugin, case.pod, case.nodes, case.existing) == case.want
    assert _scores(plugin, case.pod, case.nodes, case.existing, pre_score=False) == case.want


@pytest.mark.parametrize(
    ("case_pod", "resources", "skipped"),
    [
        pytest.param(pod("p"), ("cpu", "memory"), True, id="best effort"),
        pytest.param(pod("p", {"cpu": "0", "memory": "0"}), ("cpu", "memory"), True, id="explicit zeros"),
        pytest.param(
            pod("p", {"ephemeral-storage": "1Gi", GPU: "1"}),
            ("cpu", "memory"),
            True,
            id="only resources the plugin does not weigh",
        ),
        pytest.param(pod("p", {GPU: "1"}), ("cpu", "memory", GPU), False, id="a configured resource"),
        pytest.param(pod("p", overhead={"cpu": "10m"}), ("cpu", "memory"), False, id="overhead counts"),
        pytest.param(pod("p", {"memory": "1"}), ("cpu", "memory"), False, id="any amount"),
    ],
)
def test_balanced_allocation_skips_pods_requesting_nothing_from_v1_34(
    case_pod: Pod, resources: tuple[str, ...], skipped: bool
) -> None:
    """v1.34: PreScore skips a pod whose configured resources all request 0; Score without PreScore
    state gives it 0 everywhere. v1.30 scores it as any other pod."""
    nodes = [node("a", "4", "8Gi", extra={GPU: "2"}), node("b", "4", "8Gi")]
    existing = [pod("e", {"cpu": "3", "memory": "1Gi"}, node_name="a")]
    snapshot = make_snapshot(nodes, existing)
    for version in ("1.30", "1.34"):
        plugin = balanced_allocation.NodeResourcesBalancedAllocation(
            _balanced(*resources), features=feature_gates(version)
        )
        status = plugin.pre_score(CycleState(), case_pod, snapshot.all_nodes())
        skip = skipped and version == "1.34"
        assert (status is not None and status.code is Code.SKIP) == skip, version
        without_state = plugin.score_nodes(CycleState(), case_pod, snapshot.all_nodes()).tolist()
        assert (without_state == [0, 0]) == skip, version
        assert [plugin.score(CycleState(), case_pod, info)[0] for info in snapshot.node_infos] == without_state


def test_balanced_plugin_basics() -> None:
    plugin = balanced_allocation.new({"resources": [{"name": "cpu"}, {"name": "memory"}]}, NO_HANDLE)
    assert plugin.name == "NodeResourcesBalancedAllocation"
    assert plugin.score_extensions() is None
    assert not hasattr(plugin, "events_to_register")


def test_no_resources_is_an_error() -> None:
    scorer = ResourceAllocationScorer("x", (), LeastAllocatedScorer(()))
    snapshot = make_snapshot([node("n")])
    score, status = scorer.score(snapshot.node_infos[0], ())
    assert score == 0 and status is not None and status.code is Code.ERROR
    assert status.message == "resources not found"


# -- the strategies on their own ---------------------------------------------------------------------
def test_least_and_most_requested() -> None:
    least = LeastAllocatedScorer((1, 2))
    assert least([0, 0], [0, 0]) == 0
    assert least([50, 30], [100, 0]) == 50
    assert least([50, 130], [100, 100]) == (50 + 0) // 3
    most = MostAllocatedScorer((1, 2))
    assert most([50, 130], [100, 100]) == (50 + 200) // 3


def test_least_allocated_is_the_weighted_mean_of_least_requested_scores() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        k = rng.randint(1, 4)
        weights = tuple(rng.randint(1, 5) for _ in range(k))
        requested = [rng.randint(0, 1000) for _ in range(k)]
        allocatable = [rng.choice([0, rng.randint(1, 1000)]) for _ in range(k)]
        expected = weighted_node_score(least_requested_score, requested, allocatable, weights)
        assert LeastAllocatedScorer(weights)(requested, allocatable) == expected


def test_broken_linear_function() -> None:
    shape = [FunctionShapePoint(10, 1), FunctionShapePoint(20, 21), FunctionShapePoint(80, 1)]
    f = build_broken_linear_function(shape)
    points = list(range(-5, 101))
    # The falling segment divides a negative product: int64 division truncates it toward zero.
    expected = (
        [1] * 16
        + [1 + 2 * (p - 10) for p in range(11, 21)]
        + [21 - (20 * (p - 20)) // 60 for p in range(21, 81)]
        + [1] * 20
    )
    got = [f(p) for p in points]
    assert got == expected
    assert broken_linear_array(shape, np.array(points, dtype=np.int64)).tolist() == got


def test_round_half_away() -> None:
    assert [round_half_away(x) for x in (0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 36.5, -2.5)] == [
        0,
        0,
        1,
        2,
        3,
        37,
        -3,
    ]


def test_rtcr_scorer_direct() -> None:
    scorer = RequestedToCapacityRatioScorer((1,), (FunctionShapePoint(0, 0), FunctionShapePoint(100, 100)))
    assert scorer([5], [0]) == 0
    assert scorer([0], [10]) == 0
    assert scorer([7], [10]) == 70


def test_balanced_scorer_direct() -> None:
    scorer = BalancedScorer()
    assert scorer([], []) == 100
    assert scorer([1, 1], [3, 0]) == 100
    assert scorer([1, 2], [3, 3]) == int((1 - abs((1 / 3 - 2 / 3) / 2)) * 100)


def test_pre_score_state_is_kept_per_requests_mapping() -> None:
    """Pods of one spec share their requests mapping, so PreScore's state for them is one object;
    another pod gets its own requests."""
    plugin = fit.NodeResourcesFit(NodeResourcesFitArgs(), features=feature_gates("1.34"))
    balanced = balanced_allocation.NodeResourcesBalancedAllocation(_balanced("cpu", "memory"))
    snapshot = make_snapshot([node("a", "4", "8Gi")], [])
    first, second, other = pod("a", {"cpu": "1"}), pod("b", {"cpu": "1"}), pod("c", {"memory": "1Gi"})
    for p, key in ((plugin, fit.PRE_SCORE_STATE_KEY), (balanced, balanced_allocation.PRE_SCORE_STATE_KEY)):
        states = []
        for case_pod in (first, second, other):
            state = CycleState()
            assert p.pre_score(state, case_pod, snapshot.all_nodes()) is None
            states.append(state.read(key))
        assert states[0] is states[1]
        assert states[2].pod_requests == p.scorer.pod_requests(other)
    assert plugin.scorer.pod_requests(other) == (100, 1 << 30)  # the non-zero cpu default
    assert balanced.scorer.pod_requests(other) == (0, 1 << 30)
