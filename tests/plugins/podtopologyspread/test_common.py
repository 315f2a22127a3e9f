"""PodTopologySpread's shared part: default constraints and the selector deduced for them, the
plugin's args and its shape."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cache.snapshot import Snapshot
from kubesched.config.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    PreFilterPlugin,
    PreScorePlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins import podtopologyspread as pts
from tests.factories import as_handle, make_snapshot
from tests.plugins.podtopologyspread.builders import (
    DNS,
    HOST,
    MISSING,
    SA,
    SKEW,
    ZONE,
    FakeHandle,
    hosts,
    listers_with,
    make_plugin,
    node,
    pod,
    pods_on,
    run_filter,
    run_score,
    service,
)
from tests.plugins.podtopologyspread.reference import (
    reference_scores,
)
from tests.plugins.queueing import V130


# -- default constraints ------------------------------------------------------------------------------
def test_system_defaults_with_a_service() -> None:
    # kube-scheduler: "system defaulting, nodes don't have zone, pods match service".
    nodes = hosts("node-a", "node-b", "node-c", "node-d")
    existing = pods_on({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1})
    snapshot = make_snapshot(nodes, existing)
    plugin = make_plugin(snapshot, listers=listers_with(service("svc", {"foo": ""})))
    assert run_score(plugin, pod("p", {"foo": ""}), snapshot) == {
        "node-a": 44,
        "node-b": 66,
        "node-c": 77,
        "node-d": 100,
    }
    # No hard default constraints.
    _, status = plugin.pre_filter(CycleState(), pod("p", {"foo": ""}))
    assert status is not None and status.code is Code.SKIP


def test_system_defaults_need_a_selecting_object() -> None:
    snapshot = make_snapshot(hosts("node-a", "node-b"), pods_on({"node-a": 2}))
    listers = listers_with(
        service("other", {"app": "x"}), service("other-ns", {"foo": ""}, ns="ns1"), service("no-selector", None)
    )
    status = run_score(make_plugin(snapshot, listers=listers), pod("p", {"foo": ""}), snapshot)
    assert isinstance(status, Status) and status.code is Code.SKIP


def test_system_defaults_zone_counts_nodes_without_zone_under_empty_value() -> None:
    # Nodes lacking the zone share domain "", which counts for the zone weight and counts, but
    # such nodes themselves get no zone term (they lack the label).
    nodes = [node("a", {pts.ZONE_LABEL: "z1"}), node("b", {pts.ZONE_LABEL: "z2"}), node("c"), node("d")]
    existing = pods_on({"a": 1, "b": 2, "c": 3, "d": 1})
    snapshot = make_snapshot(nodes, existing)
    plugin = make_plugin(snapshot, listers=listers_with(service("svc", {"foo": ""})))
    got = run_score(plugin, pod("p", {"foo": ""}), snapshot)
    assert got == reference_scores(plugin, pod("p", {"foo": ""}), snapshot, ["a", "b", "c", "d"], "1.34")
    assert got == {"a": 61, "b": 30, "c": 76, "d": 100}


def test_replica_set_owner_selector() -> None:
    rs = {
        "kind": "ReplicaSet",
        "apiVersion": "apps/v1",
        "metadata": {"name": "web-rs", "namespace": "default"},
        "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}},
    }
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs", "controller": True, "uid": "u"}
    snapshot = make_snapshot(hosts("node-a", "node-b"), pods_on({"node-a": 2}, {"app": "web"}))
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
    rc = {
        "kind": "ReplicationController",
        "apiVersion": "v1",
        "metadata": {"name": "rc", "namespace": "default"},
        "spec": {"selector": {"app": "db", "tier": "x"}},
    }
    listers = listers_with(service("s1", {"app": "db"}), service("s2", {"role": "main"}), rc)
    owner = {"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "controller": True}
    sel = pts.default_selector(pod("p", {"app": "db", "role": "main", "tier": "x"}, owner=owner), listers)
    assert {(r.key, next(iter(r.values))) for r in sel.requirements} == {("app", "db"), ("role", "main"), ("tier", "x")}


def test_list_defaulting_uses_configured_constraints() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS},
            {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
        ],
    }
    nodes = [node("node-a", {ZONE: "zone1"}), node("node-x", {ZONE: "zone2"}), node("node-n")]
    snapshot = make_snapshot(nodes, pods_on({"node-a": 1}))
    plugin = make_plugin(snapshot, args, listers_with(service("svc", {"foo": ""})))
    assert not plugin.system_defaulted
    assert run_filter(plugin, pod("p", {"foo": ""}), snapshot) == {"node-a": SKEW, "node-x": None, "node-n": MISSING}
    # The soft default is on the hostname only, which node-n has.
    assert run_score(plugin, pod("p", {"foo": ""}), snapshot) == {"node-a": 0, "node-x": 100, "node-n": 100}
    # Bare pods (no selecting object) get no default constraints.
    bare = make_plugin(snapshot, args)
    _, status = bare.pre_filter(CycleState(), pod("p", {"foo": ""}))
    assert status is not None and status.code is Code.SKIP


@pytest.mark.parametrize(
    ("constraint", "field"),
    [
        (
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS, "minDomains": 0},
            "args.defaultConstraints[0].minDomains",
        ),
        (
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DNS, "nodeTaintsPolicy": "Sometimes"},
            "args.defaultConstraints[0].nodeTaintsPolicy",
        ),
        ({"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": DNS}, "args.defaultConstraints[0].maxSkew"),
    ],
)
def test_bad_default_constraints_fail_at_factory_time(constraint: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        pts.new({"defaultingType": "List", "defaultConstraints": [constraint]}, as_handle(FakeHandle(Snapshot())))
    assert field in str(err.value)


def test_protocols_and_events() -> None:
    plugin = make_plugin(Snapshot())
    for proto in (PreFilterPlugin, BatchFilterPlugin, PreScorePlugin, BatchScorePlugin):
        assert isinstance(plugin, proto)
    assert plugin.system_defaulted
    plugin.handle.features = V130.features  # v1.30's registrations; v1.34's: test_podtopologyspread_hints.py
    assert list(plugin.events_to_register()) == [
        ClusterEvent("Pod", ActionType.ALL),
        ClusterEvent(
            "Node", ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        ),
    ]
