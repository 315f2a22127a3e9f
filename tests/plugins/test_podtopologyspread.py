"""PodTopologySpread: tables after kube-scheduler's filtering/scoring tests, quirks, and a random cross-check.

The random test compares the plugin (batch and per-node forms) with a direct reading of the Go code
written below: walk every node and every pod, build the topology-pair maps, critical paths and
scores the way kube-scheduler does.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from kubesched.api.labels import LabelSelector
from kubesched.api.objects import Node, Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.cache.snapshot import Snapshot
from kubesched.cluster.listers import Listers
from kubesched.config.errors import ConfigError
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
from kubesched.plugins import podtopologyspread as pts
from kubesched.plugins.nodeaffinity import RequiredNodeAffinity
from kubesched.plugins.tainttoleration import DO_NOT_SCHEDULE_EFFECTS
from tests.factories import make_snapshot, node_dict, pod_dict
from tests.plugins.queueing import V130
from tests.plugins.test_helper import check_filter_conformance, check_score_conformance, scenario_available

HOST = "kubernetes.io/hostname"
ZONE = "zone"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
MISSING = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, pts.ERR_REASON_NODE_LABEL_NOT_MATCH)
SKEW = (Code.UNSCHEDULABLE, pts.ERR_REASON_CONSTRAINTS_NOT_MATCH)


# -- builders -------------------------------------------------------------------------------------------
def node(name: str, labels: Mapping[str, str] | None = None, *, hostname: bool = True,
         taints: Sequence[Mapping[str, str]] = ()) -> Node:
    raw = node_dict(name, labels=labels, taints=taints)
    if not hostname:
        del raw["metadata"]["labels"][HOST]
    return Node.from_dict(raw)


def pod(name: str, labels: Mapping[str, str] | None = None, *, on: str = "", ns: str = "default",
        terminating: bool = False, spread: Sequence[Mapping[str, Any]] = (),
        node_selector: Mapping[str, str] | None = None, affinity: Mapping[str, Any] | None = None,
        tolerations: Sequence[Mapping[str, str]] = (), owner: Mapping[str, Any] | None = None) -> Pod:
    spec: dict[str, Any] = {}
    if spread:
        spec["topologySpreadConstraints"] = [dict(c) for c in spread]
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = dict(affinity)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    raw = pod_dict(name, namespace=ns, node_name=on, labels=labels, spec=spec)
    if terminating:
        raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner is not None:
        raw["metadata"]["ownerReferences"] = [dict(owner)]
    return Pod.from_dict(raw)


def spread(max_skew: int, key: str, when: str, selector: Mapping[str, Any] | None = None, *,
           min_domains: int | None = None, affinity_policy: str | None = None, taints_policy: str | None = None,
           match_label_keys: Sequence[str] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = dict(selector)
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    if match_label_keys is not None:
        c["matchLabelKeys"] = list(match_label_keys)
    return c


class FakeHandle:
    def __init__(self, snapshot: Snapshot, listers: Listers | None = None) -> None:
        self.snapshot = snapshot
        self.listers = listers if listers is not None else Listers()


def make_plugin(snapshot: Snapshot, args: Any = None, listers: Listers | None = None) -> pts.PodTopologySpread:
    return pts.new(args, FakeHandle(snapshot, listers))


def listers_with(*objs: Mapping[str, Any]) -> Listers:
    listers = Listers()
    for obj in objs:
        listers.apply("ADDED", str(obj["kind"]), obj)
    return listers


def service(name: str, selector: Mapping[str, str] | None, ns: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {} if selector is None else {"selector": dict(selector)}
    return {"kind": "Service", "apiVersion": "v1", "metadata": {"name": name, "namespace": ns}, "spec": spec}


Verdict = tuple[Code, str] | None


def status_tuple(status: Status | None) -> Verdict:
    return None if status is None else (status.code, status.message)


def run_filter(plugin: pts.PodTopologySpread, incoming: Pod, snapshot: Snapshot,
               state: CycleState | None = None) -> dict[str, Verdict] | Status:
    """Per-node verdicts (after PreFilter unless a state is given), asserting batch == per-node."""
    if state is None:
        state = CycleState()
        _, status = plugin.pre_filter(state, incoming)
        if status is not None:
            return status
    rows = np.arange(len(snapshot))
    batch = plugin.filter_nodes(state, incoming, snapshot, rows)
    out: dict[str, Verdict] = {}
    for k, info in enumerate(snapshot.node_infos):
        per_node = status_tuple(plugin.filter(state, incoming, info))
        idx = int(batch.status_index[k])
        assert status_tuple(None if idx < 0 else batch.statuses[idx]) == per_node, info.name
        out[info.name] = per_node
    return out


def run_score(plugin: pts.PodTopologySpread, incoming: Pod, snapshot: Snapshot,
              filtered: Sequence[str] | None = None) -> dict[str, int] | Status:
    """Normalized scores of the filtered nodes, asserting batch == per-node."""
    names = [i.name for i in snapshot.node_infos] if filtered is None else list(filtered)
    nodes = snapshot.nodes(np.array([snapshot.index[n] for n in names], dtype=np.int64))
    state = CycleState()
    status = plugin.pre_score(state, incoming, nodes)
    if status is not None:
        return status
    per_node = []
    for info in nodes:
        score, st = plugin.score(state, incoming, info)
        assert st is None
        per_node.append(NodeScore(info.name, score))
    raw = plugin.score_nodes(state, incoming, nodes)
    assert raw.tolist() == [s.score for s in per_node]
    assert plugin.normalize_score(state, incoming, per_node) is None
    batch = plugin.normalize_scores(state, incoming, raw.copy())
    assert batch.tolist() == [s.score for s in per_node]
    return {s.name: s.score for s in per_node}


# -- Filter tables --------------------------------------------------------------------------------------
def _zone_nodes() -> list[Node]:
    return [node("node-a", {ZONE: "zone1"}), node("node-b", {ZONE: "zone1"}),
            node("node-x", {ZONE: "zone2"}), node("node-y", {ZONE: "zone2"})]


def _spread_2_1_0_3(**kw: Any) -> list[Pod]:
    placements = {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 3}
    return [pod(f"p-{n}-{i}", {"foo": ""}, on=n, **kw) for n, k in placements.items() for i in range(k)]


FILTER_CASES: list[tuple[str, Pod, list[Node], list[Pod], dict[str, Verdict]]] = [
    ("no existing pods", pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]), _zone_nodes(), [],
     {"node-a": None, "node-b": None, "node-x": None, "node-y": None}),
    ("no existing pods, incoming pod doesn't match itself",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, BAR)]), _zone_nodes(), [],
     {"node-a": None, "node-b": None, "node-x": None, "node-y": None}),
    ("existing pods in a different namespace do not count",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]), _zone_nodes(),
     [pod("p-a1", {"foo": ""}, on="node-a", ns="ns1"), pod("p-a2", {"foo": ""}, on="node-a", ns="ns2"),
      pod("p-x1", {"foo": ""}, on="node-x"), pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW}),
    ("pods spread across zones as 1/2",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]), _zone_nodes(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"foo": ""}, on="node-x"),
      pod("p-y1", {"foo": ""}, on="node-y")],
     {"node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW}),
    ("terminating pods are not counted",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]), _zone_nodes(),
     [pod("p-a1", {"foo": ""}, on="node-a", terminating=True), pod("p-a2", {"foo": ""}, on="node-a"),
      pod("p-x1", {"foo": ""}, on="node-x")],
     {"node-a": None, "node-b": None, "node-x": None, "node-y": None}),
    ("all nodes lack the topology key",
     pod("p", {"foo": ""}, spread=[spread(1, "rack", DNS, FOO)]), _zone_nodes(), [],
     {"node-a": MISSING, "node-b": MISSING, "node-x": MISSING, "node-y": MISSING}),
    ("nodes lacking the key are rejected and their pods not counted",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
     [node("node-a", {ZONE: "zone1"}), node("node-b"), node("node-x", {ZONE: "zone2"})],
     [pod("p-b1", {"foo": ""}, on="node-b"), pod("p-b2", {"foo": ""}, on="node-b"),
      pod("p-a1", {"foo": ""}, on="node-a")],
     {"node-a": SKEW, "node-b": MISSING, "node-x": None}),
    ("pods spread across nodes as 2/1/0/3, only node-x fits",
     pod("p", {"foo": ""}, spread=[spread(1, HOST, DNS, FOO)]), _zone_nodes(), _spread_2_1_0_3(),
     {"node-a": SKEW, "node-b": SKEW, "node-x": None, "node-y": SKEW}),
    ("pods spread across nodes as 2/1/0/3, maxSkew is 2",
     pod("p", {"foo": ""}, spread=[spread(2, HOST, DNS, FOO)]), _zone_nodes(), _spread_2_1_0_3(),
     {"node-a": SKEW, "node-b": None, "node-x": None, "node-y": SKEW}),
    ("pods spread across nodes as 2/1/0/3, incoming pod doesn't match itself",
     pod("p", {"bar": ""}, spread=[spread(1, HOST, DNS, FOO)]), _zone_nodes(), _spread_2_1_0_3(),
     {"node-a": SKEW, "node-b": None, "node-x": None, "node-y": SKEW}),
    ("two constraints on zone and node, spreads = [3/3, 2/1/0/3]",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO), spread(1, HOST, DNS, FOO)]), _zone_nodes(),
     _spread_2_1_0_3(), {"node-a": SKEW, "node-b": SKEW, "node-x": None, "node-y": SKEW}),
    ("constraints are checked in order; nodes lacking any key are no domain",
     pod("p", {"foo": ""}, spread=[spread(1, HOST, DNS, FOO), spread(1, "rack", DNS, FOO)]),
     [node("node-a", {"rack": "r1"}), node("node-b", {"rack": "r2"}), node("node-c")],
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-c1", {"foo": ""}, on="node-c"),
      pod("p-c2", {"foo": ""}, on="node-c")],
     {"node-a": SKEW, "node-b": None, "node-c": MISSING}),
    ("empty selector counts no existing pod but matches the incoming one",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, {})]), _zone_nodes(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a")],
     {"node-a": None, "node-b": None, "node-x": None, "node-y": None}),
    ("null selector counts nothing",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, None)]), _zone_nodes(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a")],
     {"node-a": None, "node-b": None, "node-x": None, "node-y": None}),
    ("minDomains above the domain count makes the global minimum 0",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO, min_domains=3)]), _zone_nodes(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"foo": ""}, on="node-x")],
     {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": SKEW}),
    ("minDomains equal to the domain count keeps the real minimum",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO, min_domains=2)]), _zone_nodes(),
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"foo": ""}, on="node-x")],
     {"node-a": None, "node-b": None, "node-x": None, "node-y": None}),
    ("nodeAffinityPolicy Honor: nodes outside the pod's selector are no domain",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)], node_selector={"pool": "main"}),
     [node("node-a", {ZONE: "zone1", "pool": "main"}), node("node-x", {ZONE: "zone2"})],
     [pod("p-a1", {"foo": ""}, on="node-a")], {"node-a": None, "node-x": None}),
    ("nodeAffinityPolicy Ignore: every node with the key is a domain",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO, affinity_policy="Ignore")],
         node_selector={"pool": "main"}),
     [node("node-a", {ZONE: "zone1", "pool": "main"}), node("node-x", {ZONE: "zone2"})],
     [pod("p-a1", {"foo": ""}, on="node-a")], {"node-a": SKEW, "node-x": None}),
    ("nodeAffinityPolicy Honor with required node affinity",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)], affinity={"nodeAffinity": {
         "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["main"]}]}]}}}),
     [node("node-a", {ZONE: "zone1", "pool": "main"}), node("node-x", {ZONE: "zone2"})],
     [pod("p-a1", {"foo": ""}, on="node-a")], {"node-a": None, "node-x": None}),
    ("nodeTaintsPolicy Ignore (default): tainted nodes are domains",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
     [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"},
                                            taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}])],
     [pod("p-a1", {"foo": ""}, on="node-a")], {"node-a": SKEW, "node-x": None}),
    ("nodeTaintsPolicy Honor: untolerated tainted nodes are no domain",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO, taints_policy="Honor")]),
     [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"},
                                            taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}])],
     [pod("p-a1", {"foo": ""}, on="node-a")], {"node-a": None, "node-x": None}),
    ("nodeTaintsPolicy Honor: a tolerated taint keeps the domain",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO, taints_policy="Honor")],
         tolerations=[{"key": "t", "operator": "Exists"}]),
     [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"},
                                            taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}])],
     [pod("p-a1", {"foo": ""}, on="node-a")], {"node-a": SKEW, "node-x": None}),
    ("no eligible domain for the key: the constraint is skipped",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)], node_selector={"pool": "none"}),
     [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"}), node("node-n")],
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a")],
     {"node-a": None, "node-x": None, "node-n": MISSING}),
    ("matchLabelKeys ANDs the pod's value into the selector",
     pod("p", {"foo": "", "rev": "2"}, spread=[spread(1, ZONE, DNS, FOO, match_label_keys=["rev", "absent"])]),
     _zone_nodes(),
     [pod("p-a1", {"foo": "", "rev": "1"}, on="node-a"), pod("p-a2", {"foo": "", "rev": "1"}, on="node-a"),
      pod("p-x1", {"foo": "", "rev": "2"}, on="node-x")],
     {"node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW}),
    ("matchLabelKeys on an empty selector makes it count",
     pod("p", {"foo": "", "rev": "2"}, spread=[spread(1, ZONE, DNS, {}, match_label_keys=["rev"])]),
     _zone_nodes(), [pod("p-x1", {"rev": "2"}, on="node-x")],
     {"node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW}),
    ("matchLabelKeys leaves a null selector null",
     pod("p", {"foo": "", "rev": "2"}, spread=[spread(1, ZONE, DNS, None, match_label_keys=["rev"])]),
     _zone_nodes(), [pod("p-x1", {"rev": "2"}, on="node-x"), pod("p-x2", {"rev": "2"}, on="node-x")],
     {"node-a": None, "node-b": None, "node-x": None, "node-y": None}),
    # Two constraints on one key: on each node the later constraint that includes the node sets the
    # pair's count, so the first constraint (foo, Honor) is checked against bar counts.
    ("same-key constraints: the later one's count wins on a node",
     pod("p", {"foo": "", "bar": ""}, node_selector={"pool": "a"},
         spread=[spread(1, ZONE, DNS, FOO), spread(5, ZONE, DNS, BAR, affinity_policy="Ignore")]),
     [node("node-a", {ZONE: "zone1", "pool": "a"}), node("node-x", {ZONE: "zone2", "pool": "a"})],
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a"),
      pod("p-x1", {"bar": ""}, on="node-x")],
     {"node-a": None, "node-x": SKEW}),
    ("zero-count domains are domains",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
     [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"}), node("node-z", {ZONE: "zone3"})],
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"foo": ""}, on="node-x")],
     {"node-a": SKEW, "node-x": SKEW, "node-z": None}),
    ("an empty label value is a domain of its own",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
     [node("node-a", {ZONE: "zone1"}), node("node-e", {ZONE: ""})],
     [pod("p-a1", {"foo": ""}, on="node-a")], {"node-a": SKEW, "node-e": None}),
]


@pytest.mark.parametrize(("name", "incoming", "nodes", "existing", "want"), FILTER_CASES,
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(name: str, incoming: Pod, nodes: list[Node], existing: list[Pod],
                want: dict[str, Verdict]) -> None:
    snapshot = make_snapshot(nodes, existing)
    got = run_filter(make_plugin(snapshot), incoming, snapshot)
    assert got == want


def test_pre_filter_skips_without_hard_constraints() -> None:
    snapshot = make_snapshot(_zone_nodes())
    plugin = make_plugin(snapshot)
    for incoming in (pod("p", {"foo": ""}), pod("p", {"foo": ""}, spread=[spread(1, ZONE, SA, FOO)])):
        _, status = plugin.pre_filter(CycleState(), incoming)
        assert status is not None and status.code is Code.SKIP


def test_filter_without_pre_filter_state_is_an_error() -> None:
    snapshot = make_snapshot(_zone_nodes())
    plugin = make_plugin(snapshot)
    status = plugin.filter(CycleState(), pod("p"), snapshot.node_infos[0])
    assert status is not None and status.code is Code.ERROR
    assert status.message == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# -- AddPod / RemovePod ---------------------------------------------------------------------------------
def test_add_and_remove_pod_update_a_clone_only() -> None:
    nodes = _zone_nodes()
    existing = [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"foo": ""}, on="node-x")]
    snapshot = make_snapshot(nodes, existing)
    plugin = make_plugin(snapshot)
    incoming = pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)])
    state = CycleState()
    plugin.pre_filter(state, incoming)
    assert run_filter(plugin, incoming, snapshot, state) == dict.fromkeys(("node-a", "node-b", "node-x", "node-y"))
    info_x = snapshot.node_infos[snapshot.index["node-x"]]
    clone = state.clone()
    ext = plugin.pre_filter_extensions()
    assert ext.add_pod(clone, incoming, pod("n1", {"foo": ""}, on="node-x"), info_x) is None
    assert run_filter(plugin, incoming, snapshot, clone) == {
        "node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW}
    # Other namespaces and non-matching pods change nothing.
    info_a = snapshot.node_infos[snapshot.index["node-a"]]
    ext.add_pod(clone, incoming, pod("n2", {"foo": ""}, on="node-a", ns="other"), info_a)
    ext.add_pod(clone, incoming, pod("n3", {"bar": ""}, on="node-a"), info_a)
    assert run_filter(plugin, incoming, snapshot, clone) == {
        "node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW}
    # The original state is untouched.
    assert run_filter(plugin, incoming, snapshot, state) == dict.fromkeys(("node-a", "node-b", "node-x", "node-y"))
    info_a = snapshot.node_infos[snapshot.index["node-a"]]
    assert ext.remove_pod(clone, incoming, existing[0], info_a) is None
    # zone1 now 0, zone2 2: zone2 nodes exceed the skew, zone1 still fits.
    assert run_filter(plugin, incoming, snapshot, clone) == {
        "node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW}


def test_add_pod_on_node_missing_a_key_is_ignored() -> None:
    nodes = [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"}), node("node-n")]
    snapshot = make_snapshot(nodes)
    plugin = make_plugin(snapshot)
    incoming = pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)])
    state = CycleState()
    plugin.pre_filter(state, incoming)
    info_n = snapshot.node_infos[snapshot.index["node-n"]]
    for _ in range(3):
        plugin.add_pod(state, incoming, pod("n", {"foo": ""}, on="node-n"), info_n)
    assert run_filter(plugin, incoming, snapshot, state) == {"node-a": None, "node-x": None, "node-n": MISSING}


def test_add_pod_keeps_go_stale_critical_paths() -> None:
    # Hostname counts a=1, b=2, c=3: critical paths [(a,1), (b,2)]. Raising b to 5 then a to 6
    # leaves paths [(b,5), (a,6)]: kube-scheduler then uses 5 as the minimum although c has 3.
    nodes = [node("a"), node("b"), node("c")]
    existing = [pod(f"p-{n}-{i}", {"foo": ""}, on=n) for n, k in (("a", 1), ("b", 2), ("c", 3)) for i in range(k)]
    snapshot = make_snapshot(nodes, existing)
    plugin = make_plugin(snapshot)
    incoming = pod("p", {"foo": ""}, spread=[spread(1, HOST, DNS, FOO)])
    state = CycleState()
    plugin.pre_filter(state, incoming)
    infos = {i.name: i for i in snapshot.node_infos}
    for i in range(3):
        plugin.add_pod(state, incoming, pod(f"nb{i}", {"foo": ""}, on="b"), infos["b"])
    for i in range(5):
        plugin.add_pod(state, incoming, pod(f"na{i}", {"foo": ""}, on="a"), infos["a"])
    # With the true minimum (3) node b would fail; a fails either way.
    assert run_filter(plugin, incoming, snapshot, state) == {"a": SKEW, "b": None, "c": None}


def test_critical_paths_update() -> None:
    paths = pts.CriticalPaths()
    for value, num in (("a", 5), ("", 3), ("b", 4)):
        paths.update(value, num)
    assert paths.paths == [["", 3], ["b", 4]]
    paths.update("b", 1)
    assert paths.paths == [["b", 1], ["", 3]]
    paths.update("c", 2)
    assert paths.paths == [["b", 1], ["c", 2]]


# -- Score tables ---------------------------------------------------------------------------------------
def _on(counts: Mapping[str, int], labels: Mapping[str, str] | None = None, **kw: Any) -> list[Pod]:
    return [pod(f"p-{n}-{i}", labels or {"foo": ""}, on=n, **kw) for n, k in counts.items() for i in range(k)]


def _hosts(*names: str) -> list[Node]:
    return [node(n) for n in names]


def _zoned(**zones: str) -> list[Node]:
    return [node(n.replace("_", "-"), {ZONE: z}) for n, z in zones.items()]


SCORE_CASES: list[tuple[str, Pod, list[Node], list[str] | None, list[Pod], dict[str, int]]] = [
    ("one constraint on node, no existing pods", pod("p", {"foo": ""}, spread=[spread(1, HOST, SA, FOO)]),
     _hosts("node-a", "node-b"), None, [], {"node-a": 100, "node-b": 100}),
    ("only one node is candidate", pod("p", {"foo": ""}, spread=[spread(1, HOST, SA, FOO)]),
     _hosts("node-a", "node-b"), ["node-a"], _on({"node-a": 2, "node-b": 1}), {"node-a": 100}),
    ("one constraint on node, 2/1/0/3", pod("p", {"foo": ""}, spread=[spread(1, HOST, SA, FOO)]),
     _hosts("node-a", "node-b", "node-c", "node-d"), None, _on({"node-a": 2, "node-b": 1, "node-d": 3}),
     {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    ("one constraint on node, null selector", pod("p", {"foo": ""}, spread=[spread(1, HOST, SA, None)]),
     _hosts("node-a", "node-b", "node-c", "node-d"), None, _on({"node-a": 2, "node-b": 1, "node-d": 3}),
     {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    ("one constraint on node, 2/1/0/3, maxSkew=2", pod("p", {"foo": ""}, spread=[spread(2, HOST, SA, FOO)]),
     _hosts("node-a", "node-b", "node-c", "node-d"), None, _on({"node-a": 2, "node-b": 1, "node-d": 3}),
     {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    ("one constraint on node, 4/3/2/1, maxSkew=3", pod("p", {"foo": ""}, spread=[spread(3, HOST, SA, FOO)]),
     _hosts("node-a", "node-b", "node-c", "node-d"), None,
     _on({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}),
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    ("3 out of 4 nodes are candidates, 4/2/1/~3~", pod("p", {"foo": ""}, spread=[spread(1, HOST, SA, FOO)]),
     _hosts("node-a", "node-b", "node-x", "node-y"), ["node-a", "node-b", "node-x"],
     _on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}), {"node-a": 33, "node-b": 83, "node-x": 100}),
    ("a candidate lacking the key is ignored", pod("p", {"foo": ""}, spread=[spread(1, HOST, SA, FOO)]),
     [node("node-a"), node("node-b", {"n": "node-b"}, hostname=False), node("node-x"), node("node-y")],
     ["node-a", "node-b", "node-x"], _on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
     {"node-a": 16, "node-b": 0, "node-x": 100}),
    ("one constraint on zone, 3 out of 4 nodes are candidates",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, SA, FOO)]),
     _zoned(node_a="zone1", node_b="zone1", node_x="zone2", node_y="zone2"), ["node-a", "node-b", "node-x"],
     _on({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}), {"node-a": 75, "node-b": 75, "node-x": 100}),
    ("two constraints on zone and node, 2 out of 4 nodes are candidates",
     pod("p", {"foo": ""}, spread=[spread(1, ZONE, SA, FOO), spread(1, HOST, SA, FOO)]),
     _zoned(node_a="zone1", node_b="zone1", node_x="zone2", node_y="zone2"), ["node-a", "node-x"],
     _on({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}), {"node-a": 100, "node-x": 63}),
    # v1.30 keeps one count per (key, value) pair shared by both constraints, so each adds its
    # matches into it (later releases keep one map per constraint and give node-a 85).
    ("two constraints on zone: their counts add up",
     pod("p", {"foo": "", "bar": ""}, spread=[spread(1, ZONE, SA, FOO), spread(1, ZONE, SA, BAR)]),
     _zoned(node_a="zone1", node_b="zone1", node_x="zone2", node_y="zone2"), ["node-a", "node-x"],
     [pod("p-a1", {"foo": "", "bar": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a"),
      pod("p-b1", {"foo": "", "bar": ""}, on="node-b"), pod("p-y1", {"foo": ""}, on="node-y"),
      pod("p-y2", {"foo": "", "bar": ""}, on="node-y"), pod("p-y3", {"foo": ""}, on="node-y")],
     {"node-a": 80, "node-x": 100}),
    ("two constraints on zone and node, different selectors",
     pod("p", {"foo": "", "bar": ""}, spread=[spread(1, ZONE, SA, FOO), spread(1, HOST, SA, BAR)]),
     _zoned(node_a="zone1", node_b="zone1", node_x="zone2", node_y="zone2"), None,
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-b1", {"foo": "", "bar": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", {"bar": ""}, on="node-y")],
     {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    ("two constraints, different selectors, 3 out of 4 candidates",
     pod("p", {"foo": "", "bar": ""}, spread=[spread(1, ZONE, SA, FOO), spread(1, HOST, SA, BAR)]),
     _zoned(node_a="zone1", node_b="zone1", node_x="zone2", node_y="zone2"), ["node-a", "node-b", "node-x"],
     [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-b1", {"foo": "", "bar": ""}, on="node-b"),
      pod("p-y1", {"foo": ""}, on="node-y"), pod("p-y2", {"bar": ""}, on="node-y")],
     {"node-a": 50, "node-b": 25, "node-x": 100}),
    ("existing pods in a different namespace do not count",
     pod("p", {"foo": ""}, spread=[spread(1, HOST, SA, FOO)]), _hosts("node-a", "node-b"), None,
     [pod("p-a1", {"foo": ""}, on="node-a", ns="ns1"), *_on({"node-a": 1, "node-b": 2})],
     {"node-a": 100, "node-b": 33}),
    ("terminating pods are excluded", pod("p", {"foo": ""}, spread=[spread(1, HOST, SA, FOO)]),
     _hosts("node-a", "node-b"), None,
     [pod("p-a", {"foo": ""}, on="node-a", terminating=True), pod("p-b", {"foo": ""}, on="node-b")],
     {"node-a": 100, "node-b": 0}),
    ("nodeAffinityPolicy Honor with a nodeSelector",
     pod("p", {"foo": ""}, spread=[spread(1, "node", SA, FOO)], node_selector={"foo": ""}),
     [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
      node("node-c", {"node": "node-c"})], None, _on({"node-a": 2, "node-b": 1, "node-c": 1}),
     {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("nodeAffinityPolicy Ignore with a nodeSelector",
     pod("p", {"foo": ""}, spread=[spread(1, "node", SA, FOO, affinity_policy="Ignore")],
         node_selector={"foo": ""}),
     [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
      node("node-c", {"node": "node-c"})], None, _on({"node-a": 2, "node-b": 1, "node-c": 1}),
     {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("nodeTaintsPolicy Honor leaves untolerated nodes' pods out",
     pod("p", {"foo": ""}, spread=[spread(1, "node", SA, FOO, taints_policy="Honor")]),
     [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}),
      node("node-c", {"node": "node-c"}, taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}])],
     None, _on({"node-a": 2, "node-b": 1, "node-c": 1}), {"node-a": 0, "node-b": 33, "node-c": 100}),
]


@pytest.mark.parametrize(("name", "incoming", "nodes", "filtered", "existing", "want"), SCORE_CASES,
                         ids=[c[0] for c in SCORE_CASES])
def test_score(name: str, incoming: Pod, nodes: list[Node], filtered: list[str] | None, existing: list[Pod],
               want: dict[str, int]) -> None:
    snapshot = make_snapshot(nodes, existing)
    assert run_score(make_plugin(snapshot), incoming, snapshot, filtered) == want


def test_pre_score_skips_without_soft_constraints() -> None:
    snapshot = make_snapshot(_zone_nodes())
    plugin = make_plugin(snapshot)
    for incoming in (pod("p", {"foo": ""}), pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)])):
        status = plugin.pre_score(CycleState(), incoming, snapshot.all_nodes())
        assert status is not None and status.code is Code.SKIP


def test_score_without_pre_score_state_is_an_error() -> None:
    snapshot = make_snapshot(_zone_nodes())
    plugin = make_plugin(snapshot)
    _, status = plugin.score(CycleState(), pod("p"), snapshot.node_infos[0])
    assert status is not None and status.code is Code.ERROR


# -- default constraints ------------------------------------------------------------------------------
def test_system_defaults_with_a_service() -> None:
    # kube-scheduler: "system defaulting, nodes don't have zone, pods match service".
    nodes = _hosts("node-a", "node-b", "node-c", "node-d")
    existing = _on({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1})
    snapshot = make_snapshot(nodes, existing)
    plugin = make_plugin(snapshot, listers=listers_with(service("svc", {"foo": ""})))
    assert run_score(plugin, pod("p", {"foo": ""}), snapshot) == {
        "node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    # No hard default constraints.
    _, status = plugin.pre_filter(CycleState(), pod("p", {"foo": ""}))
    assert status is not None and status.code is Code.SKIP


def test_system_defaults_need_a_selecting_object() -> None:
    snapshot = make_snapshot(_hosts("node-a", "node-b"), _on({"node-a": 2}))
    listers = listers_with(service("other", {"app": "x"}), service("other-ns", {"foo": ""}, ns="ns1"),
                           service("no-selector", None))
    status = run_score(make_plugin(snapshot, listers=listers), pod("p", {"foo": ""}), snapshot)
    assert isinstance(status, Status) and status.code is Code.SKIP


def test_system_defaults_zone_counts_nodes_without_zone_under_empty_value() -> None:
    # Nodes lacking the zone share domain "", which counts for the zone weight and counts, but
    # such nodes themselves get no zone term (they lack the label).
    nodes = [node("a", {pts.ZONE_LABEL: "z1"}), node("b", {pts.ZONE_LABEL: "z2"}), node("c"), node("d")]
    existing = _on({"a": 1, "b": 2, "c": 3, "d": 1})
    snapshot = make_snapshot(nodes, existing)
    plugin = make_plugin(snapshot, listers=listers_with(service("svc", {"foo": ""})))
    got = run_score(plugin, pod("p", {"foo": ""}), snapshot)
    assert got == reference_scores(plugin, pod("p", {"foo": ""}), snapshot, ["a", "b", "c", "d"])
    assert got == {"a": 61, "b": 30, "c": 76, "d": 100}


def test_replica_set_owner_selector() -> None:
    rs = {"kind": "ReplicaSet", "apiVersion": "apps/v1", "metadata": {"name": "web-rs", "namespace": "default"},
          "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}}}
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs", "controller": True, "uid": "u"}
    snapshot = make_snapshot(_hosts("node-a", "node-b"), _on({"node-a": 2}, {"app": "web"}))
    plugin = make_plugin(snapshot, listers=listers_with(rs))
    incoming = pod("p", {"app": "web", "other": "x"}, owner=owner)
    assert pts.default_selector(incoming, plugin.handle.listers).matches({"app": "web"})
    # Nodes without a zone label get the hostname term only.
    assert run_score(plugin, incoming, snapshot) == {"node-a": 40, "node-b": 100}
    # A non-controller owner reference, or a wrong apiVersion, selects nothing.
    for ref in ({**owner, "controller": False}, {**owner, "apiVersion": "extensions/v1beta1"}):
        status = run_score(plugin, pod("q", {"app": "web"}, owner=ref), snapshot)
        assert isinstance(status, Status) and status.code is Code.SKIP


def test_default_selector_merges_services_and_replication_controller() -> None:
    rc = {"kind": "ReplicationController", "apiVersion": "v1", "metadata": {"name": "rc", "namespace": "default"},
          "spec": {"selector": {"app": "db", "tier": "x"}}}
    listers = listers_with(service("s1", {"app": "db"}), service("s2", {"role": "main"}), rc)
    owner = {"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "controller": True}
    sel = pts.default_selector(pod("p", {"app": "db", "role": "main", "tier": "x"}, owner=owner), listers)
    assert {(r.key, next(iter(r.values))) for r in sel.requirements} == {("app", "db"), ("role", "main"),
                                                                         ("tier", "x")}


def test_list_defaulting_uses_configured_constraints() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS},
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA}]}
    nodes = [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"}), node("node-n")]
    snapshot = make_snapshot(nodes, _on({"node-a": 1}))
    plugin = make_plugin(snapshot, args, listers_with(service("svc", {"foo": ""})))
    assert not plugin.system_defaulted
    assert run_filter(plugin, pod("p", {"foo": ""}), snapshot) == {
        "node-a": SKEW, "node-x": None, "node-n": MISSING}
    # The soft default is on the hostname only, which node-n has.
    assert run_score(plugin, pod("p", {"foo": ""}), snapshot) == {"node-a": 0, "node-x": 100, "node-n": 100}
    # Bare pods (no selecting object) get no default constraints.
    bare = make_plugin(snapshot, args)
    _, status = bare.pre_filter(CycleState(), pod("p", {"foo": ""}))
    assert status is not None and status.code is Code.SKIP


@pytest.mark.parametrize(("constraint", "field"), [
    ({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS, "minDomains": 0},
     "args.defaultConstraints[0].minDomains"),
    ({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS, "nodeTaintsPolicy": "Sometimes"},
     "args.defaultConstraints[0].nodeTaintsPolicy"),
    ({"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": DNS}, "args.defaultConstraints[0].maxSkew"),
])
def test_bad_default_constraints_fail_at_factory_time(constraint: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        pts.new({"defaultingType": "List", "defaultConstraints": [constraint]}, FakeHandle(Snapshot()))
    assert field in str(err.value)


def test_protocols_and_events() -> None:
    plugin = make_plugin(Snapshot())
    for proto in (PreFilterPlugin, BatchFilterPlugin, PreScorePlugin, BatchScorePlugin):
        assert isinstance(plugin, proto)
    assert plugin.system_defaulted
    plugin.handle.features = V130.features  # v1.30's registrations; v1.34's: test_podtopologyspread_hints.py
    assert list(plugin.events_to_register()) == [
        ClusterEvent("Pod", ActionType.ALL),
        ClusterEvent("Node", ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL
                     | ActionType.UPDATE_NODE_TAINT),
    ]


def test_go_log_and_round() -> None:
    # Go's math.Log differs from the C library's in the last bit for some inputs (3 among them).
    assert pts.go_log(3.0).hex() == "0x1.193ea7aad030ap+0"
    assert pts.go_log(1.0) == 0.0
    assert pts.go_round(2.5) == 3 and pts.go_round(0.49999999999999994) == 0


# -- conformance replay ---------------------------------------------------------------------------------
_LIST_ARGS = {"defaultingType": "List", "defaultConstraints": [
    {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": DNS},
    {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA}]}
PTS_SCENARIOS = ["pts-default-constraints-list", "pts-hostname-maxskew2", "pts-match-label-keys",
                 "pts-min-domains", "pts-missing-topology-key", "pts-multi-constraints",
                 "pts-node-affinity-policy", "pts-schedule-anyway", "pts-zone-maxskew1"]


def _factory(scenario: str) -> Any:
    args = _LIST_ARGS if scenario == "pts-default-constraints-list" else None
    return lambda snapshot: make_plugin(snapshot, args)


@pytest.mark.parametrize("scenario", PTS_SCENARIOS)
def test_conformance_filter(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    assert check_filter_conformance(scenario, _factory(scenario), pts.NAME) > 0


@pytest.mark.parametrize("scenario", ["pts-schedule-anyway", "pts-missing-topology-key"])
def test_conformance_score(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    assert check_score_conformance(scenario, _factory(scenario), pts.NAME, 2) > 0


# -- reference: kube-scheduler's algorithm read directly --------------------------------------------------
class RefPaths:
    def __init__(self) -> None:
        self.p: list[list[Any]] = [["", 2**31 - 1], ["", 2**31 - 1]]

    def update(self, value: str, num: int) -> None:
        p = self.p
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]


def ref_constraints(plugin: pts.PodTopologySpread, incoming: Pod, action: str) -> list[dict[str, Any]]:
    if incoming.topology_spread_constraints:
        raw, default_sel = incoming.topology_spread_constraints, None
    else:
        raw = tuple(c for c in plugin.default_constraints)
        if not any(c.when_unsatisfiable == action for c in raw):
            return []
        default_sel = pts.default_selector(incoming, plugin.handle.listers)
        if default_sel.empty:
            return []
    out = []
    for c in raw:
        if c.when_unsatisfiable != action:
            continue
        sel = c.selector if default_sel is None else default_sel
        extra = {k: incoming.labels[k] for k in c.match_label_keys if k in incoming.labels}
        if extra and sel is not None and default_sel is None:
            base = LabelSelector.from_dict({"matchLabels": extra})
            assert base is not None
            sel = LabelSelector(base.requirements + sel.requirements)
        out.append({"key": c.topology_key, "skew": c.max_skew, "sel": sel, "min": c.min_domains or 1,
                    "aff": c.node_affinity_policy != "Ignore", "taint": c.node_taints_policy == "Honor"})
    return out


def ref_match(c: dict[str, Any], labels: Mapping[str, str]) -> bool:
    return c["sel"] is not None and c["sel"].matches(labels)


def ref_count(pods: Sequence[Pod], c: dict[str, Any], ns: str) -> int:
    if c["sel"] is None or c["sel"].empty:
        return 0
    return sum(1 for p in pods if p.meta.deletion_timestamp is None and p.namespace == ns and ref_match(c, p.labels))


def ref_included(c: dict[str, Any], incoming: Pod, n: Node) -> bool:
    if c["aff"] and not RequiredNodeAffinity.of(incoming).matches(n):
        return False
    return not (c["taint"] and find_untolerated_taint(n.taints, incoming.tolerations, DO_NOT_SCHEDULE_EFFECTS))


def has_keys(n: Node, cs: Sequence[dict[str, Any]]) -> bool:
    return all(c["key"] in n.labels for c in cs)


class RefFilterState:
    def __init__(self, plugin: pts.PodTopologySpread, incoming: Pod, snapshot: Snapshot) -> None:
        self.cs = ref_constraints(plugin, incoming, "DoNotSchedule")
        self.pairs: dict[tuple[str, str], int] = {}
        for info in snapshot.node_infos:
            n = info.node
            assert n is not None
            if not has_keys(n, self.cs):
                continue
            per_node: dict[tuple[str, str], int] = {}
            for c in self.cs:
                if ref_included(c, incoming, n):
                    per_node[(c["key"], n.labels[c["key"]])] = ref_count(info.pods, c, incoming.namespace)
            for pair, k in per_node.items():
                self.pairs[pair] = self.pairs.get(pair, 0) + k
        self.domains = Counter(key for key, _ in self.pairs)
        self.paths = {c["key"]: RefPaths() for c in self.cs}
        for (key, value), k in self.pairs.items():
            self.paths[key].update(value, k)

    def update(self, incoming: Pod, other: Pod, n: Node, delta: int) -> None:
        if other.namespace != incoming.namespace or not has_keys(n, self.cs):
            return
        for c in self.cs:
            if not ref_match(c, other.labels) or not ref_included(c, incoming, n):
                continue
            pair = (c["key"], n.labels[c["key"]])
            self.pairs[pair] = self.pairs.get(pair, 0) + delta
            self.paths[c["key"]].update(pair[1], self.pairs[pair])

    def filter(self, incoming: Pod, n: Node) -> Verdict:
        for c in self.cs:
            value = n.labels.get(c["key"])
            if value is None:
                return MISSING
            if c["key"] not in self.domains:
                continue
            low = 0 if self.domains[c["key"]] < c["min"] else self.paths[c["key"]].p[0][1]
            if self.pairs.get((c["key"], value), 0) + int(ref_match(c, incoming.labels)) - low > c["skew"]:
                return SKEW
        return None


def reference_scores(plugin: pts.PodTopologySpread, incoming: Pod, snapshot: Snapshot,
                     filtered: Sequence[str]) -> dict[str, int] | None:
    cs = ref_constraints(plugin, incoming, "ScheduleAnyway")
    if not cs:
        return None
    require_all = bool(incoming.topology_spread_constraints) or not plugin.system_defaulted
    infos = [snapshot.node_infos[snapshot.index[name]] for name in filtered]
    ignored: set[str] = set()
    counts: dict[tuple[str, str], int] = {}
    sizes = [0] * len(cs)
    for info in infos:
        n = info.node
        assert n is not None
        if require_all and not has_keys(n, cs):
            ignored.add(n.name)
            continue
        for i, c in enumerate(cs):
            if c["key"] == HOST:
                continue
            pair = (c["key"], n.labels.get(c["key"], ""))
            if pair not in counts:
                counts[pair] = 0
                sizes[i] += 1
    weights = [pts.go_log(float((len(infos) - len(ignored) if c["key"] == HOST else sizes[i]) + 2))
               for i, c in enumerate(cs)]
    for info in snapshot.node_infos:
        n = info.node
        assert n is not None
        if require_all and not has_keys(n, cs):
            continue
        for c in cs:
            if not ref_included(c, incoming, n):
                continue
            pair = (c["key"], n.labels.get(c["key"], ""))
            if pair in counts:
                counts[pair] += ref_count(info.pods, c, incoming.namespace)
    raw: dict[str, int] = {}
    for info in infos:
        n = info.node
        assert n is not None
        if n.name in ignored:
            raw[n.name] = 0
            continue
        total = 0.0
        for c, w in zip(cs, weights, strict=True):
            if c["key"] in n.labels:
                cnt = (ref_count(info.pods, c, incoming.namespace) if c["key"] == HOST
                       else counts[(c["key"], n.labels[c["key"]])])
                total += float(cnt) * w + float(c["skew"] - 1)
        whole = math.floor(total)
        raw[n.name] = whole + (1 if total - whole >= 0.5 else 0)  # math.Round, half away from zero
    valid = [s for name, s in raw.items() if name not in ignored]
    high, low = max([0, *valid]), min(valid, default=0)
    out = {}
    for name, s in raw.items():
        if name in ignored:
            out[name] = 0
        elif high == 0:
            out[name] = 100
        else:
            out[name] = 100 * (high + low - s) // high
    return out


# -- random clusters ------------------------------------------------------------------------------------
_KEYS = (ZONE, HOST, "rack")
_SELECTORS: tuple[dict[str, Any] | None, ...] = (
    None, {}, {"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "b"}},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
    {"matchLabels": {"app": "a"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["x", "y"]}]},
)
_TAINTS = ({"key": "t1", "value": "v", "effect": "NoSchedule"}, {"key": "t2", "effect": "NoExecute"},
           {"key": "t3", "effect": "PreferNoSchedule"})


def _random_labels(rng: random.Random) -> dict[str, str]:
    labels = {}
    if rng.random() < 0.8:
        labels["app"] = rng.choice(("a", "b"))
    if rng.random() < 0.6:
        labels["tier"] = rng.choice(("x", "y", "z"))
    return labels


def _random_cluster(rng: random.Random) -> tuple[list[Node], list[Pod]]:
    nodes = []
    for i in range(rng.randint(1, 14)):
        labels: dict[str, str] = {}
        if rng.random() < 0.85:
            labels[ZONE] = rng.choice(("z1", "z2", "z3", ""))
        if rng.random() < 0.7:
            labels["rack"] = rng.choice(("r1", "r2", "r3", "r4"))
        if rng.random() < 0.5:
            labels["pool"] = rng.choice(("a", "b"))
        if rng.random() < 0.5:
            labels[pts.ZONE_LABEL] = rng.choice(("za", "zb", ""))
        taints = rng.sample(_TAINTS, rng.choice((0, 0, 1, 2)))
        nodes.append(node(f"n{i}", labels, hostname=rng.random() < 0.9, taints=taints))
    pods = [pod(f"e{j}", _random_labels(rng), on=rng.choice(nodes).name, ns=rng.choice(("default", "default", "ns1")),
                terminating=rng.random() < 0.15) for j in range(rng.randint(0, 40))]
    return nodes, pods


def _random_incoming(rng: random.Random) -> Pod:
    constraints = []
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        when = rng.choice((DNS, SA))
        constraints.append(spread(
            rng.randint(1, 3), rng.choice(_KEYS), when, rng.choice(_SELECTORS),
            min_domains=rng.choice((None, None, 1, 2, 4)) if when == DNS else None,
            affinity_policy=rng.choice((None, "Honor", "Ignore")),
            taints_policy=rng.choice((None, "Honor", "Ignore")),
            match_label_keys=rng.choice((None, None, ["tier"], ["app", "tier"]))))
    kw: dict[str, Any] = {}
    r = rng.random()
    if r < 0.25:
        kw["node_selector"] = {"pool": "a"}
    elif r < 0.4:
        kw["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "NotIn", "values": ["r1"]}]}]}}}
    if rng.random() < 0.4:
        kw["tolerations"] = [{"key": "t1", "operator": "Exists"}]
    return pod("incoming", _random_labels(rng), spread=constraints, **kw)


def _random_plugin(rng: random.Random, snapshot: Snapshot) -> pts.PodTopologySpread:
    listers = listers_with(*[service(f"s{i}", sel) for i, sel in enumerate(
        rng.sample(({"app": "a"}, {"tier": "x"}, {"app": "b"}, {}), rng.randint(0, 3)))])
    if rng.random() < 0.3:
        args = {"defaultingType": "List", "defaultConstraints": [
            spread(rng.randint(1, 3), k, rng.choice((DNS, SA)), taints_policy=rng.choice((None, "Honor")),
                   match_label_keys=rng.choice((None, ["tier"])))
            for k in rng.sample(_KEYS, rng.randint(1, 3))]}
        return make_plugin(snapshot, args, listers)
    return make_plugin(snapshot, None, listers)


def test_random_clusters_match_reference() -> None:
    rng = random.Random(20240601)
    compared = 0
    for _ in range(400):
        nodes, existing = _random_cluster(rng)
        snapshot = make_snapshot(nodes, existing)
        plugin = _random_plugin(rng, snapshot)
        incoming = _random_incoming(rng)
        # Filter.
        ref = RefFilterState(plugin, incoming, snapshot)
        got = run_filter(plugin, incoming, snapshot)
        if not ref.cs:
            assert isinstance(got, Status) and got.code is Code.SKIP
        else:
            assert not isinstance(got, Status)
            want = {info.name: ref.filter(incoming, info.node) for info in snapshot.node_infos if info.node}
            assert got == want
            compared += len(want)
        # Score over a random subset of nodes.
        names = [i.name for i in snapshot.node_infos]
        filtered = sorted(rng.sample(names, rng.randint(1, len(names))), key=snapshot.index.__getitem__)
        want_scores = reference_scores(plugin, incoming, snapshot, filtered)
        got_scores = run_score(plugin, incoming, snapshot, filtered)
        if want_scores is None:
            assert isinstance(got_scores, Status) and got_scores.code is Code.SKIP
        else:
            assert got_scores == want_scores
            compared += len(want_scores)
    assert compared > 1000


def _two_smallest_ok(plugin_paths: list[list[Any]], ref: RefFilterState, key: str) -> bool:
    """Whether the plugin's initial critical paths are a result Go's map order can give."""
    values = sorted(k for (kk, _), k in ref.pairs.items() if kk == key)
    want = [*values[:2], 2**31 - 1, 2**31 - 1][:2]
    return [int(p[1]) for p in plugin_paths] == want and all(
        p[1] == 2**31 - 1 or ref.pairs.get((key, p[0])) == p[1] for p in plugin_paths)


def test_random_add_remove_match_reference() -> None:
    rng = random.Random(777)
    compared = 0
    for _ in range(300):
        nodes, existing = _random_cluster(rng)
        snapshot = make_snapshot(nodes, existing)
        plugin = _random_plugin(rng, snapshot)
        incoming = _random_incoming(rng)
        state = CycleState()
        _, status = plugin.pre_filter(state, incoming)
        if status is not None:
            continue
        ref = RefFilterState(plugin, incoming, snapshot)
        s = state.read(pts.PRE_FILTER_STATE_KEY)
        for key, kc in s.keys.items():
            assert _two_smallest_ok(kc.paths.paths, ref, key)
            ref.paths[key].p = [list(p) for p in kc.paths.paths]  # same tie-break from here on
        clone = state.clone()
        for step in range(rng.randint(1, 8)):
            info = rng.choice(snapshot.node_infos)
            assert info.node is not None
            if rng.random() < 0.6 or not info.pods:
                other = pod(f"x{step}", _random_labels(rng), on=info.name, ns=rng.choice(("default", "ns1")),
                            terminating=rng.random() < 0.2)
                assert plugin.add_pod(clone, incoming, other, info) is None
                ref.update(incoming, other, info.node, 1)
            else:
                other = rng.choice(info.pods)
                assert plugin.remove_pod(clone, incoming, other, info) is None
                ref.update(incoming, other, info.node, -1)
        got = run_filter(plugin, incoming, snapshot, clone)
        assert not isinstance(got, Status)
        want = {info.name: ref.filter(incoming, info.node) for info in snapshot.node_infos if info.node}
        assert got == want
        compared += len(want)
    assert compared > 300
