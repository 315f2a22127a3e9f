"""PodTopologySpread's DoNotSchedule half: filter tables after kube-scheduler's filtering_test.go,
quirks of both versions, AddPod / RemovePod, and the random comparison with a direct reading."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins import podtopologyspread as pts
from tests.factories import make_snapshot
from tests.plugins.podtopologyspread.builders import (
    BAR,
    DNS,
    FOO,
    HOST,
    MISSING,
    SA,
    SKEW,
    ZONE,
    Verdict,
    make_plugin,
    node,
    pod,
    run_filter,
    spread,
    zone_nodes,
)
from tests.plugins.podtopologyspread.reference import (
    RefFilterState,
    random_cluster,
    random_incoming,
    random_labels,
    random_plugin,
)
from tests.plugins.test_helper import check_filter_conformance, scenario_available


# -- Filter tables --------------------------------------------------------------------------------------
def _spread_2_1_0_3(**kw: Any) -> list[Pod]:
    placements = {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 3}
    return [pod(f"p-{n}-{i}", {"foo": ""}, on=n, **kw) for n, k in placements.items() for i in range(k)]


FILTER_CASES: list[tuple[str, Pod, list[Node], list[Pod], dict[str, Verdict]]] = [
    (
        "no existing pods",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
        zone_nodes(),
        [],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    (
        "no existing pods, incoming pod doesn't match itself",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, BAR)]),
        zone_nodes(),
        [],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    (
        "existing pods in a different namespace do not count",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
        zone_nodes(),
        [
            pod("p-a1", {"foo": ""}, on="node-a", ns="ns1"),
            pod("p-a2", {"foo": ""}, on="node-a", ns="ns2"),
            pod("p-x1", {"foo": ""}, on="node-x"),
            pod("p-y1", {"foo": ""}, on="node-y"),
        ],
        {"node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW},
    ),
    (
        "pods spread across zones as 1/2",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
        zone_nodes(),
        [
            pod("p-a1", {"foo": ""}, on="node-a"),
            pod("p-x1", {"foo": ""}, on="node-x"),
            pod("p-y1", {"foo": ""}, on="node-y"),
        ],
        {"node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW},
    ),
    (
        "terminating pods are not counted",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
        zone_nodes(),
        [
            pod("p-a1", {"foo": ""}, on="node-a", terminating=True),
            pod("p-a2", {"foo": ""}, on="node-a"),
            pod("p-x1", {"foo": ""}, on="node-x"),
        ],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    (
        "all nodes lack the topology key",
        pod("p", {"foo": ""}, spread=[spread(1, "rack", DNS, FOO)]),
        zone_nodes(),
        [],
        {"node-a": MISSING, "node-b": MISSING, "node-x": MISSING, "node-y": MISSING},
    ),
    (
        "nodes lacking the key are rejected and their pods not counted",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
        [node("node-a", {ZONE: "zone1"}), node("node-b"), node("node-x", {ZONE: "zone2"})],
        [
            pod("p-b1", {"foo": ""}, on="node-b"),
            pod("p-b2", {"foo": ""}, on="node-b"),
            pod("p-a1", {"foo": ""}, on="node-a"),
        ],
        {"node-a": SKEW, "node-b": MISSING, "node-x": None},
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        pod("p", {"foo": ""}, spread=[spread(1, HOST, DNS, FOO)]),
        zone_nodes(),
        _spread_2_1_0_3(),
        {"node-a": SKEW, "node-b": SKEW, "node-x": None, "node-y": SKEW},
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2",
        pod("p", {"foo": ""}, spread=[spread(2, HOST, DNS, FOO)]),
        zone_nodes(),
        _spread_2_1_0_3(),
        {"node-a": SKEW, "node-b": None, "node-x": None, "node-y": SKEW},
    ),
    (
        "pods spread across nodes as 2/1/0/3, incoming pod doesn't match itself",
        pod("p", {"bar": ""}, spread=[spread(1, HOST, DNS, FOO)]),
        zone_nodes(),
        _spread_2_1_0_3(),
        {"node-a": SKEW, "node-b": None, "node-x": None, "node-y": SKEW},
    ),
    (
        "two constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO), spread(1, HOST, DNS, FOO)]),
        zone_nodes(),
        _spread_2_1_0_3(),
        {"node-a": SKEW, "node-b": SKEW, "node-x": None, "node-y": SKEW},
    ),
    (
        "constraints are checked in order; nodes lacking any key are no domain",
        pod("p", {"foo": ""}, spread=[spread(1, HOST, DNS, FOO), spread(1, "rack", DNS, FOO)]),
        [node("node-a", {"rack": "r1"}), node("node-b", {"rack": "r2"}), node("node-c")],
        [
            pod("p-a1", {"foo": ""}, on="node-a"),
            pod("p-c1", {"foo": ""}, on="node-c"),
            pod("p-c2", {"foo": ""}, on="node-c"),
        ],
        {"node-a": SKEW, "node-b": None, "node-c": MISSING},
    ),
    (
        "empty selector counts no existing pod but matches the incoming one",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, {})]),
        zone_nodes(),
        [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a")],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    (
        "null selector counts nothing",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, None)]),
        zone_nodes(),
        [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a")],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    (
        "minDomains above the domain count makes the global minimum 0",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO, min_domains=3)]),
        zone_nodes(),
        [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"foo": ""}, on="node-x")],
        {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": SKEW},
    ),
    (
        "minDomains equal to the domain count keeps the real minimum",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO, min_domains=2)]),
        zone_nodes(),
        [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"foo": ""}, on="node-x")],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    (
        "nodeAffinityPolicy Honor: nodes outside the pod's selector are no domain",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)], node_selector={"pool": "main"}),
        [node("node-a", {ZONE: "zone1", "pool": "main"}), node("node-x", {ZONE: "zone2"})],
        [pod("p-a1", {"foo": ""}, on="node-a")],
        {"node-a": None, "node-x": None},
    ),
    (
        "nodeAffinityPolicy Ignore: every node with the key is a domain",
        pod(
            "p",
            {"foo": ""},
            spread=[spread(1, ZONE, DNS, FOO, affinity_policy="Ignore")],
            node_selector={"pool": "main"},
        ),
        [node("node-a", {ZONE: "zone1", "pool": "main"}), node("node-x", {ZONE: "zone2"})],
        [pod("p-a1", {"foo": ""}, on="node-a")],
        {"node-a": SKEW, "node-x": None},
    ),
    (
        "nodeAffinityPolicy Honor with required node affinity",
        pod(
            "p",
            {"foo": ""},
            spread=[spread(1, ZONE, DNS, FOO)],
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["main"]}]}
                        ]
                    }
                }
            },
        ),
        [node("node-a", {ZONE: "zone1", "pool": "main"}), node("node-x", {ZONE: "zone2"})],
        [pod("p-a1", {"foo": ""}, on="node-a")],
        {"node-a": None, "node-x": None},
    ),
    (
        "nodeTaintsPolicy Ignore (default): tainted nodes are domains",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
        [
            node("node-a", {ZONE: "zone1"}),
            node("node-x", {ZONE: "zone2"}, taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}]),
        ],
        [pod("p-a1", {"foo": ""}, on="node-a")],
        {"node-a": SKEW, "node-x": None},
    ),
    (
        "nodeTaintsPolicy Honor: untolerated tainted nodes are no domain",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO, taints_policy="Honor")]),
        [
            node("node-a", {ZONE: "zone1"}),
            node("node-x", {ZONE: "zone2"}, taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}]),
        ],
        [pod("p-a1", {"foo": ""}, on="node-a")],
        {"node-a": None, "node-x": None},
    ),
    (
        "nodeTaintsPolicy Honor: a tolerated taint keeps the domain",
        pod(
            "p",
            {"foo": ""},
            spread=[spread(1, ZONE, DNS, FOO, taints_policy="Honor")],
            tolerations=[{"key": "t", "operator": "Exists"}],
        ),
        [
            node("node-a", {ZONE: "zone1"}),
            node("node-x", {ZONE: "zone2"}, taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}]),
        ],
        [pod("p-a1", {"foo": ""}, on="node-a")],
        {"node-a": SKEW, "node-x": None},
    ),
    (
        "no eligible domain for the key: the constraint is skipped",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)], node_selector={"pool": "none"}),
        [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"}), node("node-n")],
        [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-a2", {"foo": ""}, on="node-a")],
        {"node-a": None, "node-x": None, "node-n": MISSING},
    ),
    (
        "matchLabelKeys ANDs the pod's value into the selector",
        pod("p", {"foo": "", "rev": "2"}, spread=[spread(1, ZONE, DNS, FOO, match_label_keys=["rev", "absent"])]),
        zone_nodes(),
        [
            pod("p-a1", {"foo": "", "rev": "1"}, on="node-a"),
            pod("p-a2", {"foo": "", "rev": "1"}, on="node-a"),
            pod("p-x1", {"foo": "", "rev": "2"}, on="node-x"),
        ],
        {"node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW},
    ),
    (
        "matchLabelKeys on an empty selector makes it count",
        pod("p", {"foo": "", "rev": "2"}, spread=[spread(1, ZONE, DNS, {}, match_label_keys=["rev"])]),
        zone_nodes(),
        [pod("p-x1", {"rev": "2"}, on="node-x")],
        {"node-a": None, "node-b": None, "node-x": SKEW, "node-y": SKEW},
    ),
    (
        "matchLabelKeys leaves a null selector null",
        pod("p", {"foo": "", "rev": "2"}, spread=[spread(1, ZONE, DNS, None, match_label_keys=["rev"])]),
        zone_nodes(),
        [pod("p-x1", {"rev": "2"}, on="node-x"), pod("p-x2", {"rev": "2"}, on="node-x")],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    (
        "zero-count domains are domains",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
        [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"}), node("node-z", {ZONE: "zone3"})],
        [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-x1", {"foo": ""}, on="node-x")],
        {"node-a": SKEW, "node-x": SKEW, "node-z": None},
    ),
    (
        "an empty label value is a domain of its own",
        pod("p", {"foo": ""}, spread=[spread(1, ZONE, DNS, FOO)]),
        [node("node-a", {ZONE: "zone1"}), node("node-e", {ZONE: ""})],
        [pod("p-a1", {"foo": ""}, on="node-a")],
        {"node-a": SKEW, "node-e": None},
    ),
]


@pytest.mark.parametrize(
    ("name", "incoming", "nodes", "existing", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES]
)
def test_filter(name: str, incoming: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Verdict]) -> None:
    snapshot = make_snapshot(nodes, existing)
    got = run_filter(make_plugin(snapshot), incoming, snapshot)
    assert got == want


# Two DoNotSchedule constraints on one key (which the API server refuses, but the plugin can be
# handed). v1.30 keyed counts by topology key: on each node the later constraint that includes the
# node sets the pair's count, so the first constraint (foo) is checked against bar counts. v1.34
# counts each constraint on its own.
@pytest.mark.parametrize(
    ("version", "want"), [("1.30", {"node-a": None, "node-x": SKEW}), ("1.34", {"node-a": SKEW, "node-x": None})]
)
def test_filter_constraints_sharing_a_key(version: str, want: dict[str, Verdict]) -> None:
    incoming = pod(
        "p",
        {"foo": "", "bar": ""},
        node_selector={"pool": "a"},
        spread=[spread(1, ZONE, DNS, FOO), spread(5, ZONE, DNS, BAR, affinity_policy="Ignore")],
    )
    nodes = [node("node-a", {ZONE: "zone1", "pool": "a"}), node("node-x", {ZONE: "zone2", "pool": "a"})]
    snapshot = make_snapshot(
        nodes,
        [
            pod("p-a1", {"foo": ""}, on="node-a"),
            pod("p-a2", {"foo": ""}, on="node-a"),
            pod("p-x1", {"bar": ""}, on="node-x"),
        ],
    )
    assert run_filter(make_plugin(snapshot, version=version), incoming, snapshot) == want


def test_add_pod_counts_once_per_constraint_in_v1_34_and_per_match_in_v1_30() -> None:
    # Two constraints on zone matching the same pod: v1.30 added the pod to the shared count twice.
    incoming = pod("p", {"foo": "", "bar": ""}, spread=[spread(1, ZONE, DNS, FOO), spread(1, ZONE, DNS, BAR)])
    nodes = [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"})]
    snapshot = make_snapshot(nodes)
    added = pod("q", {"foo": "", "bar": ""}, on="node-a")
    for version, want in (("1.30", [2, 0]), ("1.34", [1, 0])):
        plugin = make_plugin(snapshot, version=version)
        state = CycleState()
        assert plugin.pre_filter(state, incoming)[1] is None
        clone = state.clone()
        assert plugin.add_pod(clone, incoming, added, snapshot.node_infos[0]) is None
        counts = clone.read(pts.PRE_FILTER_STATE_KEY).counts
        assert [int(x) for x in counts[0].sums[:2]] == want
        assert counts[0].paths.min == 0
        # The original state is untouched, and clones keep v1.30's sharing.
        assert int(state.read(pts.PRE_FILTER_STATE_KEY).counts[0].sums[0]) == 0
        assert (counts[0] is counts[1]) is (version == "1.30")


def test_pre_filter_skips_without_hard_constraints() -> None:
    snapshot = make_snapshot(zone_nodes())
    plugin = make_plugin(snapshot)
    for incoming in (pod("p", {"foo": ""}), pod("p", {"foo": ""}, spread=[spread(1, ZONE, SA, FOO)])):
        _, status = plugin.pre_filter(CycleState(), incoming)
        assert status is not None and status.code is Code.SKIP


def test_filter_without_pre_filter_state_is_an_error() -> None:
    snapshot = make_snapshot(zone_nodes())
    plugin = make_plugin(snapshot)
    status = plugin.filter(CycleState(), pod("p"), snapshot.node_infos[0])
    assert status is not None and status.code is Code.ERROR
    assert status.message == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# -- AddPod / RemovePod ---------------------------------------------------------------------------------
def test_add_and_remove_pod_update_a_clone_only() -> None:
    nodes = zone_nodes()
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
        "node-a": None,
        "node-b": None,
        "node-x": SKEW,
        "node-y": SKEW,
    }
    # Other namespaces and non-matching pods change nothing.
    info_a = snapshot.node_infos[snapshot.index["node-a"]]
    ext.add_pod(clone, incoming, pod("n2", {"foo": ""}, on="node-a", ns="other"), info_a)
    ext.add_pod(clone, incoming, pod("n3", {"bar": ""}, on="node-a"), info_a)
    assert run_filter(plugin, incoming, snapshot, clone) == {
        "node-a": None,
        "node-b": None,
        "node-x": SKEW,
        "node-y": SKEW,
    }
    # The original state is untouched.
    assert run_filter(plugin, incoming, snapshot, state) == dict.fromkeys(("node-a", "node-b", "node-x", "node-y"))
    info_a = snapshot.node_infos[snapshot.index["node-a"]]
    assert ext.remove_pod(clone, incoming, existing[0], info_a) is None
    # zone1 now 0, zone2 2: zone2 nodes exceed the skew, zone1 still fits.
    assert run_filter(plugin, incoming, snapshot, clone) == {
        "node-a": None,
        "node-b": None,
        "node-x": SKEW,
        "node-y": SKEW,
    }


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


# -- conformance replay ---------------------------------------------------------------------------------
_LIST_ARGS = {
    "defaultingType": "List",
    "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": DNS},
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
    ],
}
PTS_SCENARIOS = [
    "pts-default-constraints-list",
    "pts-hostname-maxskew2",
    "pts-match-label-keys",
    "pts-min-domains",
    "pts-missing-topology-key",
    "pts-multi-constraints",
    "pts-node-affinity-policy",
    "pts-schedule-anyway",
    "pts-zone-maxskew1",
]


def _factory(scenario: str, version: str) -> Any:
    args = _LIST_ARGS if scenario == "pts-default-constraints-list" else None
    return lambda snapshot: make_plugin(snapshot, args, version=version)


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("scenario", [*PTS_SCENARIOS, "pts-shared-topology-key"])
def test_conformance_filter(scenario: str, version: str) -> None:
    if not scenario_available(scenario, version):
        pytest.skip(f"no recording of {scenario} by v{version}")
    assert check_filter_conformance(scenario, _factory(scenario, version), pts.NAME, version) > 0


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_random_clusters_match_reference(version: str) -> None:
    rng = random.Random(20240601)
    compared = 0
    for _ in range(400):
        nodes, existing = random_cluster(rng)
        snapshot = make_snapshot(nodes, existing)
        plugin = random_plugin(rng, snapshot, version)
        incoming = random_incoming(rng)
        ref = RefFilterState(plugin, incoming, snapshot, version)
        got = run_filter(plugin, incoming, snapshot)
        if not ref.cs:
            assert isinstance(got, Status) and got.code is Code.SKIP
        else:
            assert not isinstance(got, Status)
            want = {info.name: ref.filter(incoming, info.node) for info in snapshot.node_infos if info.node}
            assert got == want
            compared += len(want)
    assert compared > 500


def _two_smallest_ok(plugin_paths: list[list[Any]], ref: RefFilterState, slot: Any) -> bool:
    """Whether the plugin's initial critical paths are a result Go's map order can give."""
    values = sorted(k for (ss, _), k in ref.pairs.items() if ss == slot)
    want = [*values[:2], 2**31 - 1, 2**31 - 1][:2]
    return [int(p[1]) for p in plugin_paths] == want and all(
        p[1] == 2**31 - 1 or ref.pairs.get((slot, p[0])) == p[1] for p in plugin_paths
    )


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_random_add_remove_match_reference(version: str) -> None:
    rng = random.Random(777)
    compared = 0
    for _ in range(300):
        nodes, existing = random_cluster(rng)
        snapshot = make_snapshot(nodes, existing)
        plugin = random_plugin(rng, snapshot, version)
        incoming = random_incoming(rng)
        state = CycleState()
        _, status = plugin.pre_filter(state, incoming)
        if status is not None:
            continue
        ref = RefFilterState(plugin, incoming, snapshot, version)
        s = state.read(pts.PRE_FILTER_STATE_KEY)
        for slot, kc in zip(ref.slots, s.counts, strict=True):
            assert _two_smallest_ok(kc.paths.paths, ref, slot)
            ref.paths[slot].p = [list(p) for p in kc.paths.paths]  # same tie-break from here on
        clone = state.clone()
        for step in range(rng.randint(1, 8)):
            info = rng.choice(snapshot.node_infos)
            assert info.node is not None
            if rng.random() < 0.6 or not info.pods:
                other = pod(
                    f"x{step}",
                    random_labels(rng),
                    on=info.name,
                    ns=rng.choice(("default", "ns1")),
                    terminating=rng.random() < 0.2,
                )
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
