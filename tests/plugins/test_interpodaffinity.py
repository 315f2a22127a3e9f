from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.snapshot import Snapshot
from kubesched.cluster.listers import Listers
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
from kubesched.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
)
from tests.factories import make_node, make_pod, make_snapshot
from tests.plugins.queueing import V130
from tests.plugins.test_helper import check_filter_conformance, check_score_conformance, scenario_available

HOST = "kubernetes.io/hostname"
ZONE = "zone"
RACK = "rack"

AFF = ("Unschedulable" + "AndUnresolvable", ERR_REASON_AFFINITY)
ANTI = ("Unschedulable", ERR_REASON_ANTI_AFFINITY)
EXIST = ("Unschedulable", ERR_REASON_EXISTING_ANTI_AFFINITY)


# -- helpers -------------------------------------------------------------------------------------------
@dataclass
class FakeHandle:
    snapshot: Snapshot
    listers: Listers = field(default_factory=Listers)


def listers_with(namespaces: Mapping[str, Mapping[str, str]]) -> Listers:
    listers = Listers()
    for name, labels in namespaces.items():
        listers.apply("ADDED", "Namespace", {"apiVersion": "v1", "kind": "Namespace",
                                             "metadata": {"name": name, "labels": dict(labels)}})
    return listers


def term(key: str, labels: Mapping[str, str] | None = None, *, exprs: list[dict[str, Any]] | None = None,
         namespaces: list[str] | None = None, ns_selector: dict[str, Any] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": key}
    if labels is not None or exprs is not None:
        sel: dict[str, Any] = {}
        if labels is not None:
            sel["matchLabels"] = dict(labels)
        if exprs is not None:
            sel["matchExpressions"] = exprs
        t["labelSelector"] = sel
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def affinity(*, req: list[dict[str, Any]] | None = None, anti: list[dict[str, Any]] | None = None,
             pref: list[dict[str, Any]] | None = None,
             pref_anti: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if req is not None or pref is not None:
        block: dict[str, Any] = {}
        if req is not None:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = req
        if pref is not None:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = pref
        out["podAffinity"] = block
    if anti is not None or pref_anti is not None:
        block = {}
        if anti is not None:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = anti
        if pref_anti is not None:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = pref_anti
        out["podAntiAffinity"] = block
    return out


def pod(name: str, labels: Mapping[str, str] | None = None, *, node: str = "", ns: str = "default",
        aff: dict[str, Any] | None = None) -> Pod:
    spec = {"affinity": aff} if aff else None
    return make_pod(name, namespace=ns, labels=labels, node_name=node, spec=spec)


def plugin_for(snapshot: Snapshot, listers: Listers | None = None, **args: Any) -> InterPodAffinity:
    raw = {k: v for k, v in (("hardPodAffinityWeight", args.get("hard")),
                             ("ignorePreferredTermsOfExistingPods", args.get("ignore"))) if v is not None}
    return interpodaffinity.new(raw or None, FakeHandle(snapshot, listers or Listers()))


def verdict(status: Status | None) -> tuple[str, str] | None:
    if status is None:
        return None
    return (status.code.label, status.message)


def run_filter(plugin: InterPodAffinity, snapshot: Snapshot, incoming: Pod) -> list[tuple[str, str] | None] | str:
    """Per-node verdicts (checked equal to the batch form), or "skip" when PreFilter skipped."""
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming)
    if status is not None:
        assert status.code is Code.SKIP
        return "skip"
    per_node = [verdict(plugin.filter(state, incoming, info)) for info in snapshot.node_infos]
    batch = plugin.filter_nodes(state, incoming, snapshot, np.arange(len(snapshot)))
    batch_v = [None if i < 0 else verdict(batch.statuses[i]) for i in batch.status_index.tolist()]
    assert batch_v == per_node
    return per_node


def run_score(plugin: InterPodAffinity, snapshot: Snapshot, incoming: Pod,
              rows: list[int] | None = None) -> tuple[list[int], list[int]] | str:
    """(raw, normalized) per node (per-node and batch forms checked equal), or "skip"."""
    state = CycleState()
    nodes = snapshot.nodes(np.arange(len(snapshot)) if rows is None else np.asarray(rows, dtype=np.int64))
    status = plugin.pre_score(state, incoming, nodes)
    if status is not None:
        assert status.code is Code.SKIP
        return "skip"
    raw = []
    for info in nodes:
        value, st = plugin.score(state, incoming, info)
        assert st is None
        raw.append(value)
    scores = [NodeScore(info.name, r) for info, r in zip(nodes, raw, strict=True)]
    assert plugin.normalize_score(state, incoming, scores) is None
    batch_raw = plugin.score_nodes(state, incoming, nodes)
    assert batch_raw.tolist() == raw
    batch_norm = plugin.normalize_scores(state, incoming, batch_raw.copy())
    assert batch_norm.tolist() == [s.score for s in scores]
    return raw, [s.score for s in scores]


def zone_nodes() -> list[Node]:
    return [
        make_node("n1", labels={ZONE: "z1", RACK: "r1"}),
        make_node("n2", labels={ZONE: "z1", RACK: "r2"}),
        make_node("n3", labels={ZONE: "z2", RACK: "r3"}),
        make_node("n4", labels={RACK: "r4"}),  # no zone
    ]


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
        interpodaffinity.new({"hardPodAffinityWeight": 101}, None)


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
    ("no terms, no existing anti-affinity: skip", pod("p", {"a": "b"}),
     [pod("e", {"a": "b"}, node="n1")], "skip"),
    ("required affinity satisfied in the zone of a match", pod("p", aff=affinity(req=[term(ZONE, {"app": "db"})])),
     [pod("db", {"app": "db"}, node="n2")], [None, None, AFF, AFF]),
    ("required affinity by hostname", pod("p", aff=affinity(req=[term(HOST, {"app": "db"})])),
     [pod("db", {"app": "db"}, node="n3")], [AFF, AFF, None, AFF]),
    ("required affinity with no match anywhere and not self-matching", pod(
        "p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "db"})])), [], [AFF, AFF, AFF, AFF]),
    ("first pod of a self-affine group: nodes with the key", pod(
        "p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "web"})])), [], [None, None, None, AFF]),
    ("self-affine but a match exists elsewhere", pod(
        "p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "web"})])),
     [pod("w", {"app": "web"}, node="n3")], [AFF, AFF, None, AFF]),
    ("affinity counts pods matching ALL terms", pod("p", aff=affinity(req=[
        term(ZONE, {"app": "db"}), term(RACK, {"tier": "x"})])),
     [pod("a", {"app": "db"}, node="n1"), pod("b", {"tier": "x"}, node="n2"),
      pod("c", {"app": "db", "tier": "x"}, node="n3")], [AFF, AFF, None, AFF]),
    ("affinity selector in another namespace does not match", pod(
        "p", aff=affinity(req=[term(ZONE, {"app": "db"})])), [pod("db", {"app": "db"}, node="n1", ns="other")],
     [AFF, AFF, AFF, AFF]),
    ("affinity via explicit namespaces", pod(
        "p", aff=affinity(req=[term(ZONE, {"app": "db"}, namespaces=["other"])])),
     [pod("db", {"app": "db"}, node="n1", ns="other")], [None, None, AFF, AFF]),
    ("affinity via namespaceSelector {} (all namespaces)", pod(
        "p", aff=affinity(req=[term(ZONE, {"app": "db"}, ns_selector={})])),
     [pod("db", {"app": "db"}, node="n3", ns="x")], [AFF, AFF, None, AFF]),
    ("affinity via namespaceSelector on namespace labels", pod(
        "p", aff=affinity(req=[term(ZONE, {"app": "db"}, ns_selector={"matchLabels": {"team": "a"}})])),
     [pod("db1", {"app": "db"}, node="n3", ns="team-a"), pod("db2", {"app": "db"}, node="n1", ns="team-b")],
     [AFF, AFF, None, AFF]),
    ("required anti-affinity by zone", pod("p", aff=affinity(anti=[term(ZONE, {"app": "db"})])),
     [pod("db", {"app": "db"}, node="n1")], [ANTI, ANTI, None, None]),
    ("anti-affinity with a selector matching nothing", pod("p", aff=affinity(anti=[term(ZONE, {"app": "zz"})])),
     [pod("db", {"app": "db"}, node="n1")], [None, None, None, None]),
    ("anti-affinity without labelSelector matches nothing", pod("p", aff=affinity(anti=[term(ZONE)])),
     [pod("db", {"app": "db"}, node="n1")], [None, None, None, None]),
    ("anti-affinity with an empty labelSelector matches every pod of the namespace",
     pod("p", aff=affinity(anti=[term(HOST, {})])), [pod("x", {"k": "v"}, node="n2")], [None, ANTI, None, None]),
    ("existing pod's anti-affinity repels the incoming pod (symmetry)", pod("p", {"app": "web"}),
     [pod("e", node="n3", aff=affinity(anti=[term(ZONE, {"app": "web"})]))], [None, None, EXIST, None]),
    ("existing anti-affinity key missing on the existing pod's node counts nothing", pod("p", {"app": "web"}),
     [pod("e", node="n4", aff=affinity(anti=[term(ZONE, {"app": "web"})]))], "skip"),
    ("existing anti-affinity not matching the incoming pod", pod("p", {"app": "api"}),
     [pod("e", node="n3", aff=affinity(anti=[term(ZONE, {"app": "web"})]))], "skip"),
    ("existing pod's required affinity does not filter others", pod("p", {"app": "web"}),
     [pod("e", node="n3", aff=affinity(req=[term(ZONE, {"app": "web"})]))], "skip"),
    ("existing anti-affinity with namespaceSelector on the incoming pod's namespace labels", pod(
        "p", {"app": "web"}, ns="team-a"),
     [pod("e", node="n1", aff=affinity(anti=[term(RACK, {"app": "web"}, ns_selector={
         "matchLabels": {"team": "a"}})]))], [EXIST, None, None, None]),
    ("existing anti-affinity with namespaceSelector not matching", pod("p", {"app": "web"}, ns="team-b"),
     [pod("e", node="n1", aff=affinity(anti=[term(RACK, {"app": "web"}, ns_selector={
         "matchLabels": {"team": "a"}})]))], "skip"),
    ("checks run in order: affinity before anti-affinity before existing", pod(
        "p", {"app": "web"}, aff=affinity(req=[term(ZONE, {"app": "db"})], anti=[term(RACK, {"app": "db"})])),
     [pod("db", {"app": "db"}, node="n1"),
      pod("e", node="n2", aff=affinity(anti=[term(HOST, {"app": "web"})]))], [ANTI, EXIST, AFF, AFF]),
    ("anti-affinity to a key no node has", pod("p", aff=affinity(anti=[term("nope", {"app": "db"})])),
     [pod("db", {"app": "db"}, node="n1")], [None, None, None, None]),
]


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
    ("preferred affinity by zone", pod("p", aff=affinity(pref=[weighted(5, term(ZONE, {"app": "db"}))])),
     [pod("db", {"app": "db"}, node="n1")], {}, ([5, 5, 0, 0], [100, 100, 0, 0])),
    ("preferred affinity and anti-affinity combine", pod("p", aff=affinity(
        pref=[weighted(5, term(ZONE, {"app": "db"}))], pref_anti=[weighted(3, term(RACK, {"app": "db"}))])),
     [pod("db", {"app": "db"}, node="n1"), pod("db2", {"app": "db"}, node="n3")], {},
     ([2, 5, 2, 0], [40, 100, 40, 0])),
    ("preferred affinity matching nothing: skip", pod("p", aff=affinity(pref=[weighted(5, term(ZONE, {"x": "y"}))])),
     [pod("db", {"app": "db"}, node="n1")], {}, "skip"),
    ("matches whose node lacks the key: skip", pod("p", aff=affinity(pref=[weighted(5, term(ZONE, {"app": "db"}))])),
     [pod("db", {"app": "db"}, node="n4")], {}, "skip"),
    ("contributions cancelling out still score (all equal)", pod("p", aff=affinity(
        pref=[weighted(4, term(ZONE, {"app": "db"}))], pref_anti=[weighted(4, term(ZONE, {"app": "db"}))])),
     [pod("db", {"app": "db"}, node="n1")], {}, ([0, 0, 0, 0], [0, 0, 0, 0])),
    ("existing required affinity with hardPodAffinityWeight 1", pod("p", {"app": "web"}),
     [pod("e", node="n3", aff=affinity(req=[term(ZONE, {"app": "web"})]))], {}, ([0, 0, 1, 0], [0, 0, 100, 0])),
    ("existing required affinity with hardPodAffinityWeight 0: skip", pod("p", {"app": "web"}),
     [pod("e", node="n3", aff=affinity(req=[term(ZONE, {"app": "web"})]))], {"hard": 0}, "skip"),
    ("hardPodAffinityWeight 100 beats preferred 10", pod("p", {"app": "web"}),
     [pod("e", node="n3", aff=affinity(req=[term(HOST, {"app": "web"})])),
      pod("f", node="n1", aff=affinity(pref=[weighted(10, term(HOST, {"app": "web"}))]))], {"hard": 100},
     ([10, 0, 100, 0], [10, 0, 100, 0])),
    ("existing preferred anti-affinity pushes away", pod("p", {"app": "web"}),
     [pod("e", node="n2", aff=affinity(pref_anti=[weighted(7, term(RACK, {"app": "web"}))]))], {},
     ([0, -7, 0, 0], [100, 0, 100, 100])),
    ("ignorePreferredTermsOfExistingPods without own preferences: skip", pod("p", {"app": "web"}),
     [pod("e", node="n2", aff=affinity(pref=[weighted(7, term(RACK, {"app": "web"}))]))], {"ignore": True}, "skip"),
    ("ignorePreferredTermsOfExistingPods still counts them when the pod has preferences", pod(
        "p", {"app": "web"}, aff=affinity(pref=[weighted(2, term(ZONE, {"app": "db"}))])),
     [pod("e", node="n2", aff=affinity(pref=[weighted(7, term(RACK, {"app": "web"}))])),
      pod("db", {"app": "db"}, node="n3")], {"ignore": True}, ([0, 7, 2, 0], [0, 100, 28, 0])),
    ("existing terms use the incoming pod's namespace labels", pod("p", {"app": "web"}, ns="team-a"),
     [pod("e", node="n1", aff=affinity(pref=[weighted(9, term(HOST, {"app": "web"}, ns_selector={
         "matchLabels": {"team": "a"}}))])),
      pod("f", node="n2", aff=affinity(pref=[weighted(9, term(HOST, {"app": "web"}, ns_selector={
          "matchLabels": {"team": "b"}}))]))], {}, ([9, 0, 0, 0], [100, 0, 0, 0])),
    ("incoming namespaceSelector resolved through namespaces", pod(
        "p", aff=affinity(pref=[weighted(3, term(HOST, {"app": "db"}, ns_selector={"matchLabels": {"team": "b"}}))])),
     [pod("a", {"app": "db"}, node="n1", ns="team-a"), pod("b", {"app": "db"}, node="n2", ns="team-b")], {},
     ([0, 3, 0, 0], [0, 100, 0, 0])),
    ("several pods on one node add up", pod("p", aff=affinity(pref=[weighted(2, term(HOST, {"app": "db"}))])),
     [pod("a", {"app": "db"}, node="n1"), pod("b", {"app": "db"}, node="n1"), pod("c", {"app": "db"}, node="n2")],
     {}, ([4, 2, 0, 0], [100, 50, 0, 0])),
    ("normalisation truncates", pod("p", aff=affinity(pref=[weighted(1, term(HOST, {"app": "db"}))])),
     [pod("a", {"app": "db"}, node="n1"), pod("b", {"app": "db"}, node="n2"), pod("c", {"app": "db"}, node="n2"),
      pod("d", {"app": "db"}, node="n3"), pod("e", {"app": "db"}, node="n3"), pod("f", {"app": "db"}, node="n3")],
     {}, ([1, 2, 3, 0], [33, 66, 100, 0])),
]


@pytest.mark.parametrize(("name", "incoming", "existing", "args", "want"), SCORE_CASES,
                         ids=[c[0] for c in SCORE_CASES])
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
    assert plugin_for(snapshot).pre_score(state, incoming, snapshot.nodes(np.zeros(0, dtype=np.int64))) \
        == Status(Code.SKIP)


@pytest.mark.parametrize(("raw", "want"), [
    ([0, 0], [0, 0]),
    ([-5, -5, -5], [0, 0, 0]),
    ([-3, 0, 7], [0, 30, 100]),
    ([1, 2, 3, 4, 5, 6, 7], [0, 16, 33, 50, 66, 83, 100]),
    ([-10, 3], [0, 100]),
    ([], []),
])
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


# -- randomised comparison with a direct reading of the rules ------------------------------------------------
NAMESPACES = {"default": {"team": "a", "env": "prod"}, "ns1": {"team": "b", "env": "prod"},
              "ns2": {"team": "a"}}
ALL_NAMESPACES = (*NAMESPACES, "ghost")  # ghost: pods live there but the listers do not know it
KEYS = (HOST, ZONE, RACK, "missing")


def random_selector(rng: random.Random) -> dict[str, Any] | None:
    roll = rng.random()
    if roll < 0.08:
        return None
    if roll < 0.15:
        return {}
    if roll < 0.65:
        return {"matchLabels": {"app": rng.choice("abc")}}
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    key = rng.choice(["app", "tier"])
    expr: dict[str, Any] = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = rng.sample(["a", "b", "c", "x", "y"], rng.randint(1, 2))
    sel: dict[str, Any] = {"matchExpressions": [expr]}
    if rng.random() < 0.3:
        sel["matchLabels"] = {"tier": rng.choice("xy")}
    return sel


def random_term(rng: random.Random) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": rng.choice(KEYS)}
    sel = random_selector(rng)
    if sel is not None:
        t["labelSelector"] = sel
    roll = rng.random()
    if roll < 0.15:
        t["namespaces"] = rng.sample(ALL_NAMESPACES, rng.randint(1, 2))
    elif roll < 0.25:
        t["namespaceSelector"] = {}
    elif roll < 0.4:
        t["namespaceSelector"] = rng.choice([{"matchLabels": {"team": "a"}}, {"matchLabels": {"env": "prod"}},
                                             {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}])
        if rng.random() < 0.3:
            t["namespaces"] = [rng.choice(ALL_NAMESPACES)]
    return t


def random_affinity(rng: random.Random, p: float) -> dict[str, Any] | None:
    if rng.random() > p:
        return None

    def terms(n_max: int) -> list[dict[str, Any]] | None:
        n = rng.choice([0, 0, 1, 1, 2][: n_max + 1])
        return [random_term(rng) for _ in range(n)] if n else None

    def weighted_terms() -> list[dict[str, Any]] | None:
        n = rng.choice([0, 0, 1, 2])
        return [weighted(rng.randint(1, 100), random_term(rng)) for _ in range(n)] if n else None

    out = affinity(req=terms(4), anti=terms(4), pref=weighted_terms(), pref_anti=weighted_terms())
    if out and rng.random() < 0.1:  # a pod carrying the same term twice
        block = out.get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if block:
            block.append(dict(block[0]))
    return out or {"podAffinity": {}}


def random_labels(rng: random.Random) -> dict[str, str]:
    labels = {}
    if rng.random() < 0.8:
        labels["app"] = rng.choice("abc")
    if rng.random() < 0.5:
        labels["tier"] = rng.choice("xy")
    return labels


def random_cluster(rng: random.Random) -> tuple[list[Node], list[Pod]]:
    nodes = []
    for i in range(rng.randint(3, 14)):
        labels = {}
        if rng.random() < 0.8:
            labels[ZONE] = f"z{rng.randint(1, 3)}"
        if rng.random() < 0.7:
            labels[RACK] = f"r{rng.randint(1, 5)}"
        nodes.append(make_node(f"node-{i}", labels=labels))
    pods = []
    for j in range(rng.randint(0, 25)):
        pods.append(pod(f"e{j}", random_labels(rng), node=rng.choice(nodes).name, ns=rng.choice(ALL_NAMESPACES),
                        aff=random_affinity(rng, 0.6)))
    return nodes, pods


@dataclass(frozen=True)
class RefTerm:
    namespaces: frozenset[str] | None
    selector: Any
    key: str

    def matches(self, p: Pod) -> bool:
        if self.namespaces is not None and p.namespace not in self.namespaces:
            return False
        return self.selector is not None and self.selector.matches(p.labels)


def ref_resolve(t: Any) -> RefTerm:
    """The incoming pod's term with its namespaceSelector unrolled over the known namespaces."""
    if t.namespace_selector is not None and not t.namespace_selector.requirements:
        return RefTerm(None, t.selector, t.topology_key)
    namespaces = set(t.namespaces)
    if t.namespace_selector is not None:
        namespaces |= {ns for ns, labels in NAMESPACES.items() if t.namespace_selector.matches(labels)}
    return RefTerm(frozenset(namespaces), t.selector, t.topology_key)


def ref_filter(nodes: list[Node], placed: list[tuple[Pod, Node]], incoming: Pod) -> list[Any] | str:
    """kube-scheduler's PreFilter + Filter, read directly: every pod on every node."""
    ns_labels = NAMESPACES.get(incoming.namespace)
    req = [ref_resolve(t) for t in incoming.pod_affinity.required_affinity]
    anti = [ref_resolve(t) for t in incoming.pod_affinity.required_anti_affinity]
    existing: Counter[tuple[str, str]] = Counter()
    aff_counts: Counter[tuple[str, str]] = Counter()
    anti_counts: Counter[tuple[str, str]] = Counter()
    for other, node in placed:
        for own in other.pod_affinity.required_anti_affinity:
            if own.matches(incoming, ns_labels) and own.topology_key in node.labels:
                existing[(own.topology_key, node.labels[own.topology_key])] += 1
        if req and all(t.matches(other) for t in req):
            for t in req:
                if t.key in node.labels:
                    aff_counts[(t.key, node.labels[t.key])] += 1
        for t in anti:
            if t.matches(other) and t.key in node.labels:
                anti_counts[(t.key, node.labels[t.key])] += 1
    if not existing and not req and not anti:
        return "skip"
    self_match = bool(req) and all(t.matches(incoming) for t in req)
    out: list[Any] = []
    for node in nodes:
        labels = node.labels
        ok = all(t.key in labels for t in req)
        exist = all(t.key in labels and aff_counts[(t.key, labels[t.key])] > 0 for t in req)
        if not (ok and (exist or (not aff_counts and self_match))):
            out.append(AFF)
        elif any(t.key in labels and anti_counts[(t.key, labels[t.key])] > 0 for t in anti):
            out.append(ANTI)
        elif any(existing[(k, v)] > 0 for k, v in labels.items()):
            out.append(EXIST)
        else:
            out.append(None)
    return out


def ref_score(nodes: list[Node], placed: list[tuple[Pod, Node]], incoming: Pod, hard: int,
              ignore: bool) -> tuple[list[int], list[int]] | str:
    """kube-scheduler's PreScore + Score + NormalizeScore, read directly."""
    aff = incoming.pod_affinity
    has_constraints = bool(aff.preferred_affinity or aff.preferred_anti_affinity)
    if ignore and not has_constraints:
        return "skip"
    ns_labels = NAMESPACES.get(incoming.namespace)
    pref = [(ref_resolve(w.term), w.weight) for w in aff.preferred_affinity]
    pref_anti = [(ref_resolve(w.term), w.weight) for w in aff.preferred_anti_affinity]
    topo: dict[str, dict[str, int]] = {}

    def add(key: str, node: Node, amount: int) -> None:
        if key in node.labels:
            per = topo.setdefault(key, {})
            per[node.labels[key]] = per.get(node.labels[key], 0) + amount

    for other, node in placed:
        if not has_constraints and not other.pod_affinity.declared:
            continue
        for t, w in pref:
            if t.matches(other):
                add(t.key, node, w)
        for t, w in pref_anti:
            if t.matches(other):
                add(t.key, node, -w)
        if hard > 0:
            for term_ in other.pod_affinity.required_affinity:
                if term_.matches(incoming, ns_labels):
                    add(term_.topology_key, node, hard)
        for wt in other.pod_affinity.preferred_affinity:
            if wt.term.matches(incoming, ns_labels):
                add(wt.term.topology_key, node, wt.weight)
        for wt in other.pod_affinity.preferred_anti_affinity:
            if wt.term.matches(incoming, ns_labels):
                add(wt.term.topology_key, node, -wt.weight)
    if not topo:
        return "skip"
    raw = [sum(per.get(n.labels[k], 0) for k, per in topo.items() if k in n.labels) for n in nodes]
    low, high = min(raw), max(raw)
    norm = [int(100.0 * (float(r - low) / float(high - low))) if high > low else 0 for r in raw]
    return raw, norm


def nodes_of(snapshot: Snapshot) -> list[Node]:
    return [info.node for info in snapshot.node_infos if info.node is not None]


def make_listers() -> Listers:
    return listers_with(NAMESPACES)


@pytest.mark.parametrize("seed", range(60))
def test_random_clusters_match_direct_reading(seed: int) -> None:
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
        plugin = plugin_for(snapshot, make_listers(), hard=hard, ignore=ignore)
        assert run_filter(plugin, snapshot, incoming) == ref_filter(order, placed, incoming), (seed, k)
        rows = sorted(rng.sample(range(len(nodes)), rng.randint(1, len(nodes))))
        want = ref_score([order[r] for r in rows], placed, incoming, hard, ignore)
        assert run_score(plugin, snapshot, incoming, rows) == want, (seed, k)


@pytest.mark.parametrize("seed", range(30))
def test_random_add_remove_pod_match_direct_reading(seed: int) -> None:
    rng = random.Random(1000 + seed)
    nodes, pods = random_cluster(rng)
    by_name = {n.name: n for n in nodes}
    snapshot = make_snapshot(nodes, pods)
    order = nodes_of(snapshot)
    infos = {info.name: info for info in snapshot.node_infos}
    placed = [(p, by_name[p.node_name]) for p in pods]
    for k in range(4):
        incoming = pod(f"in{k}", random_labels(rng), ns=rng.choice(ALL_NAMESPACES), aff=random_affinity(rng, 0.9))
        plugin = plugin_for(snapshot, make_listers())
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
                extra = pod(f"x{k}-{step}", random_labels(rng), node=node.name, ns=rng.choice(ALL_NAMESPACES),
                            aff=random_affinity(rng, 0.6))
                now.append((extra, node))
                assert plugin.add_pod(clone, incoming, extra, infos[node.name]) is None
        want = ref_filter(order, now, incoming)
        if want == "skip":  # the state exists, so verdicts are "all pass" for a direct reading
            want = [None] * len(nodes)
        got = [verdict(plugin.filter(clone, incoming, info)) for info in snapshot.node_infos]
        assert got == want, (seed, k)
        batch = plugin.filter_nodes(clone, incoming, snapshot, np.arange(len(nodes)))
        assert [None if i < 0 else verdict(batch.statuses[i]) for i in batch.status_index.tolist()] == got
        # the original state still describes the unchanged cluster
        assert run_filter_state(plugin, state, snapshot, incoming) == ref_filter(order, placed, incoming)


def run_filter_state(plugin: InterPodAffinity, state: CycleState, snapshot: Snapshot, incoming: Pod) -> list[Any]:
    return [verdict(plugin.filter(state, incoming, info)) for info in snapshot.node_infos]


# -- recorded decisions of kube-scheduler ----------------------------------------------------------------
IPA_SCENARIOS = [
    "ipa-existing-anti-affinity-symmetry", "ipa-hard-pod-affinity-weight", "ipa-preferred-weights",
    "ipa-required-affinity-hostname", "ipa-required-anti-affinity-hostname", "ipa-self-affinity-first-pod",
    "ipa-zone-affinity-anti-affinity",
]


def _conformance_plugin(scenario: str) -> Any:
    hard = 100 if scenario == "ipa-hard-pod-affinity-weight" else None
    return lambda snapshot: plugin_for(snapshot, hard=hard)


@pytest.mark.parametrize("scenario", IPA_SCENARIOS)
def test_conformance_filter(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    assert check_filter_conformance(scenario, _conformance_plugin(scenario), "InterPodAffinity") > 0


@pytest.mark.parametrize("scenario", IPA_SCENARIOS)
def test_conformance_score(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    # Default profile weight 2: a normalised 100 shows as 200.
    check_score_conformance(scenario, _conformance_plugin(scenario), "InterPodAffinity", 2)
