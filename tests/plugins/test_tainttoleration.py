from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    NodeScore,
    PreScorePlugin,
)
from kubesched.framework.status import Code
from kubesched.plugins import tainttoleration
from tests.factories import NO_HANDLE, make_node, make_pod, make_snapshot
from tests.plugins.queueing import V130
from tests.plugins.test_helper import (
    check_filter_conformance,
    check_score_conformance,
    handle_for,
    random_nodes,
    scenario_available,
)

NAME = "TaintToleration"


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def tol(key: str = "", op: str = "Equal", value: str = "", effect: str = "") -> dict[str, str]:
    return {"key": key, "operator": op, "value": value, "effect": effect}


@pytest.mark.parametrize(
    ("name", "tolerations", "taints", "want"),
    [
        ("no taints", [], [], None),
        (
            "untolerated NoSchedule",
            [],
            [taint("dedicated", "user1")],
            "node(s) had untolerated taint {dedicated: user1}",
        ),
        ("tolerated by Equal", [tol("dedicated", "Equal", "user1", "NoSchedule")], [taint("dedicated", "user1")], None),
        (
            "wrong value",
            [tol("dedicated", "Equal", "user2", "NoSchedule")],
            [taint("dedicated", "user1")],
            "node(s) had untolerated taint {dedicated: user1}",
        ),
        ("Exists on the key", [tol("foo", "Exists", effect="NoSchedule")], [taint("foo", "bar")], None),
        ("Exists everything", [tol(op="Exists")], [taint("a", "1"), taint("b", "", "NoExecute")], None),
        ("empty value shown empty", [], [taint("nvidia.com/gpu")], "node(s) had untolerated taint {nvidia.com/gpu: }"),
        ("PreferNoSchedule is ignored", [], [taint("x", "1", "PreferNoSchedule")], None),
        (
            "first untolerated taint reported",
            [tol("a", "Equal", "1")],
            [taint("a", "1"), taint("b", "2", "NoExecute"), taint("c", "3")],
            "node(s) had untolerated taint {b: 2}",
        ),
        (
            "effect mismatch",
            [tol("dedicated", "Equal", "ml", "NoExecute")],
            [taint("dedicated", "ml")],
            "node(s) had untolerated taint {dedicated: ml}",
        ),
    ],
)
@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_filter(
    name: str, tolerations: list[dict[str, str]], taints: list[dict[str, str]], want: str | None, version: str
) -> None:
    # v1.30 names the first untolerated taint; v1.34 says the same words for every taint.
    if want is not None and version == "1.34":
        want = tainttoleration.ERR_REASON_UNTOLERATED
    plugin = tainttoleration.new(None, handle_for(version))
    pod = make_pod("p", spec={"tolerations": tolerations})
    node = make_node("n", taints=taints)
    status = plugin.filter(CycleState(), pod, NodeInfo(node))
    if want is None:
        assert status is None
    else:
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (want,)
    batch = plugin.filter_nodes(CycleState(), pod, make_snapshot([node]), np.array([0]))
    got = None if batch.status_index[0] < 0 else batch.statuses[batch.status_index[0]]
    assert got == status


def test_v1_34_nodes_with_different_taints_share_one_status() -> None:
    plugin = tainttoleration.new(None, handle_for("1.34"))
    nodes = [make_node("a", taints=[taint("x", "1")]), make_node("b", taints=[taint("y", "2")]), make_node("c")]
    batch = plugin.filter_nodes(CycleState(), make_pod("p"), make_snapshot(nodes), np.arange(3))
    assert batch.status_index.tolist() == [0, 0, -1]
    assert [s.reasons for s in batch.statuses] == [(tainttoleration.ERR_REASON_UNTOLERATED,)]
    assert (
        tainttoleration.new(None, NO_HANDLE).filter(CycleState(), make_pod("p"), NodeInfo(nodes[0]))
        == batch.statuses[0]
    )  # no handle: the default version, 1.34


@pytest.mark.parametrize(
    ("name", "tolerations", "node_taints", "want"),
    [
        # Normalised reverse over the nodes: fewer intolerable PreferNoSchedule taints is better.
        ("all clean", [], [[], []], [100, 100]),
        ("one vs none", [], [[], [taint("x", "1", "PreferNoSchedule")]], [100, 0]),
        (
            "zero, one, two",
            [],
            [
                [],
                [taint("x", "1", "PreferNoSchedule")],
                [taint("x", "1", "PreferNoSchedule"), taint("y", "1", "PreferNoSchedule")],
            ],
            [100, 50, 0],
        ),
        (
            "tolerated with PreferNoSchedule effect",
            [tol("x", "Equal", "1", "PreferNoSchedule")],
            [[taint("x", "1", "PreferNoSchedule")], [taint("y", "1", "PreferNoSchedule")]],
            [100, 0],
        ),
        (
            "tolerated with empty effect",
            [tol("x", "Exists")],
            [[taint("x", "1", "PreferNoSchedule")], [taint("y", "1", "PreferNoSchedule")]],
            [100, 0],
        ),
        (
            "NoSchedule toleration does not count",
            [tol("x", "Exists", effect="NoSchedule")],
            [[taint("x", "1", "PreferNoSchedule")], []],
            [0, 100],
        ),
        ("hard taints are not scored", [], [[taint("x", "1")], []], [100, 100]),
    ],
)
def test_score(
    name: str, tolerations: list[dict[str, str]], node_taints: list[list[dict[str, str]]], want: list[int]
) -> None:
    plugin = tainttoleration.new(None, NO_HANDLE)
    pod = make_pod("p", spec={"tolerations": tolerations})
    snap = make_snapshot([make_node(f"n{i}", taints=t) for i, t in enumerate(node_taints)])
    nodes = snap.all_nodes()
    state = CycleState()
    assert plugin.pre_score(state, pod, nodes) is None
    scores = [NodeScore(info.name, plugin.score(state, pod, info)[0]) for info in nodes]
    ext = plugin.score_extensions()
    assert ext is not None
    ext.normalize_score(state, pod, scores)
    assert [s.score for s in scores] == want
    assert plugin.normalize_scores(state, pod, plugin.score_nodes(state, pod, nodes)).tolist() == want


def test_pre_score_state_is_kept_per_parsed_tolerations() -> None:
    """Pods of one spec share their parsed tolerations, and so PreScore's state; others get their own."""
    plugin = tainttoleration.TaintToleration()
    nodes = make_snapshot([make_node("n")]).all_nodes()
    prefer = [tol("x", "Exists", effect="PreferNoSchedule"), tol("y", "Exists", effect="NoSchedule")]
    pods = [make_pod(name, spec={"tolerations": prefer}) for name in ("a", "b")] + [make_pod("c")]
    states = []
    for pod in pods:
        state = CycleState()
        assert plugin.pre_score(state, pod, nodes) is None
        states.append(state.read(tainttoleration.PRE_SCORE_STATE_KEY))
    assert states[0] is states[1] and [t.key for t in states[0].tolerations] == ["x"]
    assert states[2].tolerations == ()


def test_score_without_pre_score_computes_on_the_fly() -> None:
    plugin = tainttoleration.TaintToleration()
    pod = make_pod("p")
    info = NodeInfo(make_node("n", taints=[taint("x", "1", "PreferNoSchedule")]))
    assert plugin.score(CycleState(), pod, info) == (1, None)


def test_protocols_and_events() -> None:
    plugin = tainttoleration.new(None, NO_HANDLE)
    assert isinstance(plugin, BatchFilterPlugin)
    assert isinstance(plugin, BatchScorePlugin)
    assert isinstance(plugin, PreScorePlugin)
    # v1.30's registrations (v1.34's, with hints: test_tainttoleration_hints.py)
    assert tuple(tainttoleration.new(None, V130).events_to_register()) == (
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),
    )


def test_kept_group_answers_follow_the_snapshot_and_the_pod() -> None:
    """Filter's and Score's per-group answers are kept for one group list and one tolerations tuple:
    another snapshot or another pod gets its own."""
    plugin = tainttoleration.TaintToleration()
    plain = make_snapshot([make_node("a"), make_node("b")])
    tainted = make_snapshot(
        [make_node("a", taints=[taint("x", "1")]), make_node("b", taints=[taint("y", "1", "PreferNoSchedule")])]
    )
    pod, tolerant = make_pod("p"), make_pod("q", spec={"tolerations": [tol(op="Exists")]})

    def verdicts(snap: Any, p: Any) -> tuple[list[int], list[int]]:
        state = CycleState()
        plugin.pre_score(state, p, snap.all_nodes())
        index = plugin.filter_nodes(state, p, snap, np.arange(2)).status_index.tolist()
        return index, plugin.score_nodes(state, p, snap.all_nodes()).tolist()

    for _ in range(2):
        assert verdicts(plain, pod) == ([-1, -1], [0, 0])
        assert verdicts(tainted, pod) == ([0, -1], [0, 1])
        assert verdicts(tainted, tolerant) == ([-1, -1], [0, 0])


def test_batch_equals_per_node_on_random_clusters() -> None:
    rng = random.Random(11)
    tol_choices: list[dict[str, Any]] = [
        tol("dedicated", "Equal", "ml", "NoSchedule"),
        tol("gpu", "Exists"),
        tol("spot", "Exists"),
        tol("old", "Exists", effect="PreferNoSchedule"),
        tol("evict", "Equal", "1", "NoExecute"),
        tol(op="Exists", effect="PreferNoSchedule"),
    ]
    for trial in range(40):
        snap = make_snapshot(random_nodes(rng, rng.randint(1, 30)))
        pod = make_pod(f"p{trial}", spec={"tolerations": rng.sample(tol_choices, rng.randint(0, 3))})
        plugin = tainttoleration.TaintToleration(handle_for(rng.choice(["1.30", "1.34"])))
        rows = np.array(sorted(rng.sample(range(len(snap)), rng.randint(1, len(snap)))))
        state = CycleState()
        batch = plugin.filter_nodes(state, pod, snap, rows)
        for k, row in enumerate(rows.tolist()):
            want = plugin.filter(state, pod, snap.node_infos[row])
            idx = int(batch.status_index[k])
            assert (None if idx < 0 else batch.statuses[idx]) == want
        nodes = snap.nodes(rows)
        plugin.pre_score(state, pod, nodes)
        per_node = [NodeScore(i.name, plugin.score(state, pod, i)[0]) for i in nodes]
        raw = plugin.score_nodes(state, pod, nodes)
        assert raw.tolist() == [s.score for s in per_node]
        plugin.normalize_score(state, pod, per_node)
        assert plugin.normalize_scores(state, pod, raw).tolist() == [s.score for s in per_node]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize(
    "scenario",
    [
        "taint-noschedule-operators",
        "taint-prefer-noschedule-score",
        "smoke",
        "node-unschedulable",
        "msg-taint-untolerated",
    ],
)
def test_conformance_filter(scenario: str, version: str) -> None:
    if not scenario_available(scenario, version):
        pytest.skip(f"no recording of {scenario} by v{version}")
    handle = handle_for(version)
    assert check_filter_conformance(scenario, lambda _: tainttoleration.new(None, handle), NAME, version) > 0


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("scenario", ["taint-prefer-noschedule-score", "smoke", "taint-noschedule-operators"])
def test_conformance_score(scenario: str, version: str) -> None:
    if not scenario_available(scenario, version):
        pytest.skip(f"no recording of {scenario} by v{version}")
    handle = handle_for(version)
    # Default weight 3: e.g. the untainted node's normalised 100 shows as 300.
    assert check_score_conformance(scenario, lambda _: tainttoleration.new(None, handle), NAME, 3, version) > 0
