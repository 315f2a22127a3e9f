"""InterPodAffinity: tables after kube-scheduler's filtering and scoring tests, both versions' handling
of the incoming pod's namespace selectors, and a random comparison with a direct reading of the rules."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    NodeScore,
    PreFilterPlugin,
    PreScorePlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins import interpodaffinity
from kubesched.plugins.interpodaffinity import InterPodAffinity
from tests.factories import NO_HANDLE, make_node, make_snapshot
from tests.plugins.interpodaffinity_reference import (
    AFF,
    ALL_NAMESPACES,
    ANTI,
    EXIST,
    HOST,
    RACK,
    ZONE,
    affinity,
    listers_with,
    make_listers,
    nodes_of,
    plugin_for,
    pod,
    random_affinity,
    random_cluster,
    random_labels,
    ref_filter,
    ref_score,
    run_filter,
    run_score,
    term,
    verdict,
    weighted,
    zone_nodes,
)
from tests.plugins.queueing import V130
from tests.plugins.test_helper import check_filter_conformance, check_score_conformance, scenario_available


# -- plugin shape ----------------------------------------------------------------------------------------
def test_protocols_and_events() -> None:
    plugin = plugin_for(make_snapshot([]))
    for proto in (PreFilterPlugin, BatchFilterPlugin, PreScorePlugin, BatchScorePlugin):
        assert isinstance(plugin, proto)
    assert plugin.name == "InterPodAffinity"
    plugin.handle.features = V130.features  # v1.30's registrations; v1.34's: test_interpodaffinity_hints.py
    assert list(plugin.events_to_register()) == [
        ClusterEvent("Pod", ActionType.ALL),
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
    ]
    assert plugin.hard_pod_affinity_weight == 1 and not plugin.ignore_preferred_terms_of_existing_pods


def test_args_validated() -> None:
    with pytest.raises(ValueError, match="hardPodAffinityWeight"):
        interpodaffinity.new({"hardPodAffinityWeight": 101}, NO_HANDLE)


def test_missing_state_is_an_error() -> None:
    plugin = plugin_for(make_snapshot([make_node("n1")]))
    info = NodeInfo(make_node("n1"))
    status = plugin.filter(CycleState(), pod("p"), info)
    assert status is not None and status.code is Code.ERROR
    assert status.message == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'
    _, status = plugin.score(CycleState(), pod("p"), info)
    assert status is not None and status.code is Code.ERROR
    assert plugin.add_pod(CycleState(), pod("p"), pod("q"), info) is not None


# -- Filter tables -------------------------------------------------------------------------------------------
FILTER_CASES: list[tuple[str, Pod, list[Pod], Any]] = [
    ("no terms, no existing anti-affinity: skip", pod("p", {"a": "b"}), [pod("e", {"a": "b"}, node="n1")], "skip"),
    (
        "required affinity satisfied in the zone of a match",
        pod("p", aff=affinity(req=[term(ZONE, {"app": "db"})])),
        [pod("db", {"app": "db"}, node="n2")],
        [None, None, AFF, AFF],
    ),
    (
        "required affinity by hostname",
        pod("p", aff=affinity(req=[term(HOST, {"app": "db"})])),
        [pod("db", {"app": "db"}, node="n3")],
        [AFF, AFF, None, AFF],
    ),
    (
        "required affinity with no match anywhere and not self-matching",
        pod("p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "db"})])),
        [],
        [AFF, AFF, AFF, AFF],
    ),
    (
        "first pod of a self-affine group: nodes with the key",
        pod("p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "web"})])),
        [],
        [None, None, None, AFF],
    ),
    (
        "self-affine but a match exists elsewhere",
        pod("p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "web"})])),
        [pod("w", {"app": "web"}, node="n3")],
        [AFF, AFF, None, AFF],
    ),
    (
        "affinity counts pods matching ALL terms",
        pod("p", aff=affinity(req=[term(ZONE, {"app": "db"}), term(RACK, {"tier": "x"})])),
        [
            pod("a", {"app": "db"}, node="n1"),
            pod("b", {"tier": "x"}, node="n2"),
            pod("c", {"app": "db", "tier": "x"}, node="n3"),
        ],
        [AFF, AFF, None, AFF],
    ),
    (
        "affinity selector in another namespace does not match",
        pod("p", aff=affinity(req=[term(ZONE, {"app": "db"})])),
        [pod("db", {"app": "db"}, node="n1", ns="other")],
        [AFF, AFF, AFF, AFF],
    ),
    (
        "affinity via explicit namespaces",
        pod("p", aff=affinity(req=[term(ZONE, {"app": "db"}, namespaces=["other"])])),
        [pod("db", {"app": "db"}, node="n1", ns="other")],
        [None, None, AFF, AFF],
    ),
    (
        "affinity via namespaceSelector {} (all namespaces)",
        pod("p", aff=affinity(req=[term(ZONE, {"app": "db"}, ns_selector={})])),
        [pod("db", {"app": "db"}, node="n3", ns="x")],
        [AFF, AFF, None, AFF],
    ),
    (
        "affinity via namespaceSelector on namespace labels",
        pod("p", aff=affinity(req=[term(ZONE, {"app": "db"}, ns_selector={"matchLabels": {"team": "a"}})])),
        [pod("db1", {"app": "db"}, node="n3", ns="team-a"), pod("db2", {"app": "db"}, node="n1", ns="team-b")],
        [AFF, AFF, None, AFF],
    ),
    (
        "required anti-affinity by zone",
        pod("p", aff=affinity(anti=[term(ZONE, {"app": "db"})])),
        [pod("db", {"app": "db"}, node="n1")],
        [ANTI, ANTI, None, None],
    ),
    (
        "anti-affinity with a selector matching nothing",
        pod("p", aff=affinity(anti=[term(ZONE, {"app": "zz"})])),
        [pod("db", {"app": "db"}, node="n1")],
        [None, None, None, None],
    ),
    (
        "anti-affinity without labelSelector matches nothing",
        pod("p", aff=affinity(anti=[term(ZONE)])),
        [pod("db", {"app": "db"}, node="n1")],
        [None, None, None, None],
    ),
    (
        "anti-affinity with an empty labelSelector matches every pod of the namespace",
        pod("p", aff=affinity(anti=[term(HOST, {})])),
        [pod("x", {"k": "v"}, node="n2")],
        [None, ANTI, None, None],
    ),
    (
        "existing pod's anti-affinity repels the incoming pod (symmetry)",
        pod("p", {"app": "web"}),
        [pod("e", node="n3", aff=affinity(anti=[term(ZONE, {"app": "web"})]))],
        [None, None, EXIST, None],
    ),
    (
        "existing anti-affinity key missing on the existing pod's node counts nothing",
        pod("p", {"app": "web"}),
        [pod("e", node="n4", aff=affinity(anti=[term(ZONE, {"app": "web"})]))],
        "skip",
    ),
    (
        "existing anti-affinity not matching the incoming pod",
        pod("p", {"app": "api"}),
        [pod("e", node="n3", aff=affinity(anti=[term(ZONE, {"app": "web"})]))],
        "skip",
    ),
    (
        "existing pod's required affinity does not filter others",
        pod("p", {"app": "web"}),
        [pod("e", node="n3", aff=affinity(req=[term(ZONE, {"app": "web"})]))],
        "skip",
    ),
    (
        "existing anti-affinity with namespaceSelector on the incoming pod's namespace labels",
        pod("p", {"app": "web"}, ns="team-a"),
        [
            pod(
                "e",
                node="n1",
                aff=affinity(anti=[term(RACK, {"app": "web"}, ns_selector={"matchLabels": {"team": "a"}})]),
            )
        ],
        [EXIST, None, None, None],
    ),
    (
        "existing anti-affinity with namespaceSelector not matching",
        pod("p", {"app": "web"}, ns="team-b"),
        [
            pod(
                "e",
                node="n1",
                aff=affinity(anti=[term(RACK, {"app": "web"}, ns_selector={"matchLabels": {"team": "a"}})]),
            )
        ],
        "skip",
    ),
    (
        "checks run in order: affinity before anti-affinity before existing",
        pod("p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "db"})], anti=[term(RACK, {"app": "db"})])),
        [pod("db", {"app": "db"}, node="n1"), pod("e", node="n2", aff=affinity(anti=[term(HOST, {"app": "web"})]))],
        [ANTI, EXIST, AFF, AFF],
    ),
    (
        "anti-affinity to a key no node has",
        pod("p", aff=affinity(anti=[term("nope", {"app": "db"})])),
        [pod("db", {"app": "db"}, node="n1")],
        [None, None, None, None],
    ),
]


NOT_TEAM_A = {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]}
NO_TEAM = {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}
DB_PODS = [pod("db1", {"app": "db"}, node="n1", ns="team-a"), pod("db3", {"app": "db"}, node="n3", ns="team-b")]

# The incoming pod's namespaceSelector: v1.30 resolved it to the namespaces it selects; v1.34 also
# matches it against no labels, so one an unlabelled namespace satisfies selects every namespace.
NAMESPACE_SELECTOR_CASES: list[tuple[str, Pod, Any, Any]] = [
    (
        "anti-affinity NotIn",
        pod("p", aff=affinity(anti=[term(HOST, {"app": "db"}, ns_selector=NOT_TEAM_A)])),
        [None, None, ANTI, None],
        [ANTI, None, ANTI, None],
    ),
    (
        "affinity DoesNotExist",
        pod("p", aff=affinity(req=[term(HOST, {"app": "db"}, ns_selector=NO_TEAM)])),
        [AFF, AFF, AFF, AFF],
        [None, AFF, None, AFF],
    ),
    (
        "affinity In: unchanged",
        pod(
            "p",
            aff=affinity(
                req=[
                    term(
                        HOST,
                        {"app": "db"},
                        ns_selector={"matchExpressions": [{"key": "team", "operator": "In", "values": ["b"]}]},
                    )
                ]
            ),
        ),
        [AFF, AFF, None, AFF],
        [AFF, AFF, None, AFF],
    ),
    (
        "NotIn beside an Exists: unchanged",
        pod(
            "p",
            aff=affinity(
                anti=[
                    term(
                        HOST,
                        {"app": "db"},
                        ns_selector={
                            "matchExpressions": [*NOT_TEAM_A["matchExpressions"], {"key": "team", "operator": "Exists"}]
                        },
                    )
                ]
            ),
        ),
        [None, None, ANTI, None],
        [None, None, ANTI, None],
    ),
]


@pytest.mark.parametrize(
    ("name", "incoming", "want_130", "want_134"), NAMESPACE_SELECTOR_CASES, ids=[c[0] for c in NAMESPACE_SELECTOR_CASES]
)
def test_filter_incoming_namespace_selector_by_version(name: str, incoming: Pod, want_130: Any, want_134: Any) -> None:
    snapshot = make_snapshot(zone_nodes(), DB_PODS)
    listers = listers_with({"default": {}, "team-a": {"team": "a"}, "team-b": {"team": "b"}})
    assert run_filter(plugin_for(snapshot, listers, "1.30"), snapshot, incoming) == want_130
    assert run_filter(plugin_for(snapshot, listers, "1.34"), snapshot, incoming) == want_134


@pytest.mark.parametrize(
    ("version", "want"), [("1.30", ([0, 0, -5, 0], [100, 100, 0, 100])), ("1.34", ([-5, 0, -5, 0], [0, 100, 0, 100]))]
)
def test_score_incoming_namespace_selector_by_version(version: str, want: Any) -> None:
    snapshot = make_snapshot(zone_nodes(), DB_PODS)
    listers = listers_with({"default": {}, "team-a": {"team": "a"}, "team-b": {"team": "b"}})
    incoming = pod("p", aff=affinity(pref_anti=[weighted(5, term(HOST, {"app": "db"}, ns_selector=NOT_TEAM_A))]))
    assert run_score(plugin_for(snapshot, listers, version), snapshot, incoming) == want


@pytest.mark.parametrize(("name", "incoming", "existing", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(name: str, incoming: Pod, existing: list[Pod], want: Any) -> None:
    snapshot = make_snapshot(zone_nodes(), existing)
    listers = listers_with({"default": {}, "team-a": {"team": "a"}, "team-b": {"team": "b"}})
    assert run_filter(plugin_for(snapshot, listers), snapshot, incoming) == want


def test_add_and_remove_pod_update_state() -> None:
    nodes = zone_nodes()
    db = pod("db", {"app": "db"}, node="n1")
    snapshot = make_snapshot(nodes, [db])
    plugin = plugin_for(snapshot)
    incoming = pod("p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "db"})], anti=[term(HOST, {"app": "x"})]))
    state = CycleState()
    assert plugin.pre_filter(state, incoming) == (None, None)
    infos = snapshot.node_infos

    def verdicts(s: CycleState) -> list[tuple[str, str] | None]:
        per_node = [verdict(plugin.filter(s, incoming, info)) for info in infos]
        batch = plugin.filter_nodes(s, incoming, snapshot, np.arange(len(infos)))
        assert [None if i < 0 else verdict(batch.statuses[i]) for i in batch.status_index.tolist()] == per_node
        return per_node

    assert verdicts(state) == [None, None, AFF, AFF]
    clone = state.clone()
    assert plugin.add_pod(clone, incoming, pod("db2", {"app": "db"}, node="n3"), infos[2]) is None
    assert verdicts(clone) == [None, None, None, AFF]
    assert verdicts(state) == [None, None, AFF, AFF]  # the original is untouched
    assert plugin.add_pod(clone, incoming, pod("x", {"app": "x"}, node="n2"), infos[1]) is None
    assert verdicts(clone) == [None, ANTI, None, AFF]
    guard = pod("g", node="n3", aff=affinity(anti=[term(ZONE, {"app": "web"})]))
    assert plugin.add_pod(clone, incoming, guard, infos[2]) is None
    assert verdicts(clone) == [None, ANTI, EXIST, AFF]
    assert plugin.remove_pod(clone, incoming, db, infos[0]) is None
    assert plugin.remove_pod(clone, incoming, guard, infos[2]) is None
    assert verdicts(clone) == [AFF, AFF, None, AFF]  # z1 lost its only match


def test_remove_last_match_keeps_self_affine_rule_go_like() -> None:
    # Removing the only match empties the affinity counts, so a self-affine pod may go anywhere
    # with the key again (a preemption dry run sees the same).
    nodes = zone_nodes()
    other = pod("w", {"app": "web"}, node="n3")
    snapshot = make_snapshot(nodes, [other])
    plugin = plugin_for(snapshot)
    incoming = pod("p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "web"})]))
    state = CycleState()
    plugin.pre_filter(state, incoming)
    assert [verdict(plugin.filter(state, incoming, i)) for i in snapshot.node_infos] == [AFF, AFF, None, AFF]
    plugin.remove_pod(state, incoming, other, snapshot.node_infos[2])
    assert [verdict(plugin.filter(state, incoming, i)) for i in snapshot.node_infos] == [None, None, None, AFF]


# -- Score tables --------------------------------------------------------------------------------------------
SCORE_CASES: list[tuple[str, Pod, list[Pod], dict[str, Any], Any]] = [
    ("no terms anywhere: skip", pod("p", {"app": "web"}), [pod("e", {"app": "db"}, node="n1")], {}, "skip"),
    (
        "preferred affinity by zone",
        pod("p", aff=affinity(pref=[weighted(5, term(ZONE, {"app": "db"}))])),
        [pod("db", {"app": "db"}, node="n1")],
        {},
        ([5, 5, 0, 0], [100, 100, 0, 0]),
    ),
    (
        "preferred affinity and anti-affinity combine",
        pod(
            "p",
            aff=affinity(
                pref=[weighted(5, term(ZONE, {"app": "db"}))], pref_anti=[weighted(3, term(RACK, {"app": "db"}))]
            ),
        ),
        [pod("db", {"app": "db"}, node="n1"), pod("db2", {"app": "db"}, node="n3")],
        {},
        ([2, 5, 2, 0], [40, 100, 40, 0]),
    ),
    (
        "preferred affinity matching nothing: skip",
        pod("p", aff=affinity(pref=[weighted(5, term(ZONE, {"x": "y"}))])),
        [pod("db", {"app": "db"}, node="n1")],
        {},
        "skip",
    ),
    (
        "matches whose node lacks the key: skip",
        pod("p", aff=affinity(pref=[weighted(5, term(ZONE, {"app": "db"}))])),
        [pod("db", {"app": "db"}, node="n4")],
        {},
        "skip",
    ),
    (
        "contributions cancelling out still score (all equal)",
        pod(
            "p",
            aff=affinity(
                pref=[weighted(4, term(ZONE, {"app": "db"}))], pref_anti=[weighted(4, term(ZONE, {"app": "db"}))]
            ),
        ),
        [pod("db", {"app": "db"}, node="n1")],
        {},
        ([0, 0, 0, 0], [0, 0, 0, 0]),
    ),
    (
        "existing required affinity with hardPodAffinityWeight 1",
        pod("p", {"app": "web"}),
        [pod("e", node="n3", aff=affinity(req=[term(ZONE, {"app": "web"})]))],
        {},
        ([0, 0, 1, 0], [0, 0, 100, 0]),
    ),
    (
        "existing required affinity with hardPodAffinityWeight 0: skip",
        pod("p", {"app": "web"}),
        [pod("e", node="n3", aff=affinity(req=[term(ZONE, {"app": "web"})]))],
        {"hard": 0},
        "skip",
    ),
    (
        "hardPodAffinityWeight 100 beats preferred 10",
        pod("p", {"app": "web"}),
        [
            pod("e", node="n3", aff=affinity(req=[term(HOST, {"app": "web"})])),
            pod("f", node="n1", aff=affinity(pref=[weighted(10, term(HOST, {"app": "web"}))])),
        ],
        {"hard": 100},
        ([10, 0, 100, 0], [10, 0, 100, 0]),
    ),
    (
        "existing preferred anti-affinity pushes away",
        pod("p", {"app": "web"}),
        [pod("e", node="n2", aff=affinity(pref_anti=[weighted(7, term(RACK, {"app": "web"}))]))],
        {},
        ([0, -7, 0, 0], [100, 0, 100, 100]),
    ),
    (
        "ignorePreferredTermsOfExistingPods without own preferences: skip",
        pod("p", {"app": "web"}),
        [pod("e", node="n2", aff=affinity(pref=[weighted(7, term(RACK, {"app": "web"}))]))],
        {"ignore": True},
        "skip",
    ),
    (
        "ignorePreferredTermsOfExistingPods still counts them when the pod has preferences",
        pod("p", {"app": "web"}, aff=affinity(pref=[weighted(2, term(ZONE, {"app": "db"}))])),
        [
            pod("e", node="n2", aff=affinity(pref=[weighted(7, term(RACK, {"app": "web"}))])),
            pod("db", {"app": "db"}, node="n3"),
        ],
        {"ignore": True},
        ([0, 7, 2, 0], [0, 100, 28, 0]),
    ),
    (
        "existing terms use the incoming pod's namespace labels",
        pod("p", {"app": "web"}, ns="team-a"),
        [
            pod(
                "e",
                node="n1",
                aff=affinity(
                    pref=[weighted(9, term(HOST, {"app": "web"}, ns_selector={"matchLabels": {"team": "a"}}))]
                ),
            ),
            pod(
                "f",
                node="n2",
                aff=affinity(
                    pref=[weighted(9, term(HOST, {"app": "web"}, ns_selector={"matchLabels": {"team": "b"}}))]
                ),
            ),
        ],
        {},
        ([9, 0, 0, 0], [100, 0, 0, 0]),
    ),
    (
        "incoming namespaceSelector resolved through namespaces",
        pod(
            "p", aff=affinity(pref=[weighted(3, term(HOST, {"app": "db"}, ns_selector={"matchLabels": {"team": "b"}}))])
        ),
        [pod("a", {"app": "db"}, node="n1", ns="team-a"), pod("b", {"app": "db"}, node="n2", ns="team-b")],
        {},
        ([0, 3, 0, 0], [0, 100, 0, 0]),
    ),
    (
        "several pods on one node add up",
        pod("p", aff=affinity(pref=[weighted(2, term(HOST, {"app": "db"}))])),
        [pod("a", {"app": "db"}, node="n1"), pod("b", {"app": "db"}, node="n1"), pod("c", {"app": "db"}, node="n2")],
        {},
        ([4, 2, 0, 0], [100, 50, 0, 0]),
    ),
    (
        "normalisation truncates",
        pod("p", aff=affinity(pref=[weighted(1, term(HOST, {"app": "db"}))])),
        [
            pod("a", {"app": "db"}, node="n1"),
            pod("b", {"app": "db"}, node="n2"),
            pod("c", {"app": "db"}, node="n2"),
            pod("d", {"app": "db"}, node="n3"),
            pod("e", {"app": "db"}, node="n3"),
            pod("f", {"app": "db"}, node="n3"),
        ],
        {},
        ([1, 2, 3, 0], [33, 66, 100, 0]),
    ),
]


@pytest.mark.parametrize(("name", "incoming", "existing", "args", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score(name: str, incoming: Pod, existing: list[Pod], args: dict[str, Any], want: Any) -> None:
    snapshot = make_snapshot(zone_nodes(), existing)
    listers = listers_with({"default": {}, "team-a": {"team": "a"}, "team-b": {"team": "b"}})
    assert run_score(plugin_for(snapshot, listers, **args), snapshot, incoming) == want


def test_score_domains_counted_over_all_nodes_but_normalised_over_scored_ones() -> None:
    snapshot = make_snapshot(zone_nodes(), [pod("db", {"app": "db"}, node="n1")])
    incoming = pod("p", aff=affinity(pref=[weighted(5, term(ZONE, {"app": "db"}))]))
    assert run_score(plugin_for(snapshot), snapshot, incoming, rows=[1, 2]) == ([5, 0], [100, 0])
    assert run_score(plugin_for(snapshot), snapshot, incoming, rows=[1]) == ([5], [0])
    state = CycleState()
    assert plugin_for(snapshot).pre_score(state, incoming, snapshot.nodes(np.zeros(0, dtype=np.int64))) == Status(
        Code.SKIP
    )


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ([0, 0], [0, 0]),
        ([-5, -5, -5], [0, 0, 0]),
        ([-3, 0, 7], [0, 30, 100]),
        ([1, 2, 3, 4, 5, 6, 7], [0, 16, 33, 50, 66, 83, 100]),
        ([-10, 3], [0, 100]),
        ([], []),
    ],
)
def test_normalize_edge_cases(raw: list[int], want: list[int]) -> None:
    snapshot = make_snapshot(zone_nodes(), [pod("db", {"app": "db"}, node="n1")])
    plugin = plugin_for(snapshot)
    state = CycleState()
    incoming = pod("p", aff=affinity(pref=[weighted(5, term(ZONE, {"app": "db"}))]))
    assert plugin.pre_score(state, incoming, snapshot.all_nodes()) is None
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert plugin.normalize_score(state, incoming, scores) is None
    assert [s.score for s in scores] == want
    assert plugin.normalize_scores(state, incoming, np.asarray(raw, dtype=np.int64)).tolist() == want


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("seed", range(60))
def test_random_clusters_match_direct_reading(seed: int, version: str) -> None:
    rng = random.Random(seed)
    nodes, pods = random_cluster(rng)
    by_name = {n.name: n for n in nodes}
    snapshot = make_snapshot(nodes, pods)
    order = nodes_of(snapshot)
    placed = [(p, by_name[p.node_name]) for p in pods]
    for k in range(6):
        incoming = pod(f"in{k}", random_labels(rng), ns=rng.choice(ALL_NAMESPACES), aff=random_affinity(rng, 0.9))
        hard = rng.choice([0, 1, 5, 100])
        ignore = rng.random() < 0.3
        plugin = plugin_for(snapshot, make_listers(), version, hard=hard, ignore=ignore)
        assert run_filter(plugin, snapshot, incoming) == ref_filter(order, placed, incoming, version), (seed, k)
        rows = sorted(rng.sample(range(len(nodes)), rng.randint(1, len(nodes))))
        want = ref_score([order[r] for r in rows], placed, incoming, hard, ignore, version)
        assert run_score(plugin, snapshot, incoming, rows) == want, (seed, k)


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("seed", range(30))
def test_random_add_remove_pod_match_direct_reading(seed: int, version: str) -> None:
    rng = random.Random(1000 + seed)
    nodes, pods = random_cluster(rng)
    by_name = {n.name: n for n in nodes}
    snapshot = make_snapshot(nodes, pods)
    order = nodes_of(snapshot)
    infos = {info.name: info for info in snapshot.node_infos}
    placed = [(p, by_name[p.node_name]) for p in pods]
    for k in range(4):
        incoming = pod(f"in{k}", random_labels(rng), ns=rng.choice(ALL_NAMESPACES), aff=random_affinity(rng, 0.9))
        plugin = plugin_for(snapshot, make_listers(), version)
        state = CycleState()
        _, status = plugin.pre_filter(state, incoming)
        if status is not None:
            continue
        clone = state.clone()
        now = list(placed)
        for step in range(rng.randint(1, 4)):
            if now and rng.random() < 0.4:
                gone = now.pop(rng.randrange(len(now)))
                assert plugin.remove_pod(clone, incoming, gone[0], infos[gone[1].name]) is None
            else:
                node = rng.choice(nodes)
                extra = pod(
                    f"x{k}-{step}",
                    random_labels(rng),
                    node=node.name,
                    ns=rng.choice(ALL_NAMESPACES),
                    aff=random_affinity(rng, 0.6),
                )
                now.append((extra, node))
                assert plugin.add_pod(clone, incoming, extra, infos[node.name]) is None
        want = ref_filter(order, now, incoming, version)
        if want == "skip":  # the state exists, so verdicts are "all pass" for a direct reading
            want = [None] * len(nodes)
        got = [verdict(plugin.filter(clone, incoming, info)) for info in snapshot.node_infos]
        assert got == want, (seed, k)
        batch = plugin.filter_nodes(clone, incoming, snapshot, np.arange(len(nodes)))
        assert [None if i < 0 else verdict(batch.statuses[i]) for i in batch.status_index.tolist()] == got
        # the original state still describes the unchanged cluster
        assert run_filter_state(plugin, state, snapshot, incoming) == ref_filter(order, placed, incoming, version)


def run_filter_state(plugin: InterPodAffinity, state: CycleState, snapshot: Snapshot, incoming: Pod) -> list[Any]:
    return [verdict(plugin.filter(state, incoming, info)) for info in snapshot.node_infos]


# -- recorded decisions of kube-scheduler ----------------------------------------------------------------
IPA_SCENARIOS = [
    "ipa-existing-anti-affinity-symmetry",
    "ipa-hard-pod-affinity-weight",
    "ipa-preferred-weights",
    "ipa-required-affinity-hostname",
    "ipa-required-anti-affinity-hostname",
    "ipa-self-affinity-first-pod",
    "ipa-zone-affinity-anti-affinity",
]


def _conformance_plugin(scenario: str, version: str) -> Any:
    hard = 100 if scenario == "ipa-hard-pod-affinity-weight" else None
    return lambda snapshot: plugin_for(snapshot, version=version, hard=hard)


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("scenario", IPA_SCENARIOS)
def test_conformance_filter(scenario: str, version: str) -> None:
    if not scenario_available(scenario, version):
        pytest.skip(f"no recording of {scenario} by v{version}")
    assert check_filter_conformance(scenario, _conformance_plugin(scenario, version), "InterPodAffinity", version) > 0


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("scenario", IPA_SCENARIOS)
def test_conformance_score(scenario: str, version: str) -> None:
    if not scenario_available(scenario, version):
        pytest.skip(f"no recording of {scenario} by v{version}")
    # Default profile weight 2: a normalised 100 shows as 200.
    check_score_conformance(scenario, _conformance_plugin(scenario, version), "InterPodAffinity", 2, version)
