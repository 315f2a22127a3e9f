from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Pod
from kubesched.api.resources import V1_30_RULES, V1_34_RULES, ResourceRules
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ActionType, BatchFilterPlugin, ClusterEvent, PreFilterPlugin
from kubesched.framework.status import Code, Status
from kubesched.plugins import nodeports
from tests.factories import NO_HANDLE, make_node, make_pod, make_snapshot, pod_dict
from tests.plugins.queueing import V130
from tests.plugins.test_helper import check_filter_conformance, scenario_available

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"


def port_pod(name: str, *ports: tuple[str, str, int], node_name: str = "") -> Any:
    """A pod whose one container asks for host ports given as (protocol, hostIP, hostPort)."""
    container = {
        "name": "c",
        "image": "busybox",
        "ports": [{"containerPort": 80, "hostPort": p, "protocol": proto, "hostIP": ip} for proto, ip, p in ports],
    }
    return make_pod(name, node_name=node_name, spec={"containers": [container]})


CASES = [
    ("nothing in use", [], [("TCP", "", 8080)], True),
    ("same port other protocol", [("UDP", "127.0.0.1", 8080)], [("TCP", "127.0.0.1", 8080)], True),
    ("same port other ip", [("TCP", "127.0.0.1", 8080)], [("TCP", "127.0.0.2", 8080)], True),
    ("same ip, port, protocol", [("UDP", "127.0.0.1", 8080)], [("UDP", "127.0.0.1", 8080)], False),
    (
        "second port conflicts",
        [("TCP", "127.0.0.1", 8001)],
        [("UDP", "127.0.0.1", 8001), ("TCP", "127.0.0.1", 8001)],
        False,
    ),
    ("wanted 0.0.0.0 overlaps an ip", [("TCP", "127.0.0.1", 8001)], [("TCP", "0.0.0.0", 8001)], False),
    ("used 0.0.0.0 overlaps an ip", [("TCP", "0.0.0.0", 8001)], [("TCP", "127.0.0.1", 8001)], False),
    ("empty ip means all", [("TCP", "", 8001)], [("TCP", "10.0.0.1", 8001)], False),
    ("0.0.0.0 but other protocol", [("UDP", "0.0.0.0", 8001)], [("TCP", "127.0.0.1", 8001)], True),
]


@pytest.mark.parametrize(("name", "used", "wanted", "fits"), CASES)
def test_filter(name: str, used: list[tuple[str, str, int]], wanted: list[tuple[str, str, int]], fits: bool) -> None:
    plugin = nodeports.new(None, NO_HANDLE)
    node = make_node("n")
    existing = [port_pod(f"e{i}", p, node_name="n") for i, p in enumerate(used)]
    info = NodeInfo(node, existing)
    pod = port_pod("p", *wanted)
    state = CycleState()
    assert plugin.pre_filter(state, pod) == (None, None)
    status = plugin.filter(state, pod, info)
    assert status == (None if fits else Status(Code.UNSCHEDULABLE, (REASON,)))
    snap = make_snapshot([node], existing)
    batch = plugin.filter_nodes(state, pod, snap, np.array([0]))
    assert (None if batch.status_index[0] < 0 else batch.statuses[batch.status_index[0]]) == status
    # Without PreFilter the wanted ports are taken from the pod.
    assert plugin.filter(CycleState(), pod, info) == status


def test_pre_filter_skips_pods_without_host_ports() -> None:
    plugin = nodeports.new(None, NO_HANDLE)
    container = {"name": "c", "image": "x", "ports": [{"containerPort": 80}]}
    assert plugin.pre_filter(CycleState(), make_pod("p", spec={"containers": [container]})) == (None, Status(Code.SKIP))
    assert plugin.pre_filter(CycleState(), make_pod("q")) == (None, Status(Code.SKIP))


@pytest.mark.parametrize("rules", [V1_30_RULES, V1_34_RULES], ids=["v1.30", "v1.34"])
def test_plain_init_container_ports_are_ignored(rules: ResourceRules) -> None:
    init = {"name": "i", "image": "x", "ports": [{"containerPort": 1, "hostPort": 9000}]}
    pod = Pod.from_dict(pod_dict("p", spec={"initContainers": [init]}), rules)
    assert nodeports.new(None, NO_HANDLE).pre_filter(CycleState(), pod) == (None, Status(Code.SKIP))


def _sidecar_pod(name: str, rules: ResourceRules, node_name: str = "") -> Pod:
    sidecar = {
        "name": "s",
        "image": "x",
        "restartPolicy": "Always",
        "ports": [{"containerPort": 9000, "hostPort": 9000}],
    }
    return Pod.from_dict(pod_dict(name, node_name=node_name, spec={"initContainers": [sidecar]}), rules)


@pytest.mark.parametrize(("rules", "counted"), [(V1_30_RULES, False), (V1_34_RULES, True)], ids=["v1.30", "v1.34"])
def test_sidecar_ports_count_from_v1_34(rules: ResourceRules, counted: bool) -> None:
    """v1.34 counts a sidecar's host ports, for the incoming pod and for the pods on the node."""
    plugin = nodeports.new(None, NO_HANDLE)
    incoming = _sidecar_pod("p", rules)
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming)
    assert (status is None) == counted
    busy = NodeInfo(make_node("n"), [_sidecar_pod("e", rules, node_name="n")])
    assert len(busy.used_ports) == (1 if counted else 0)
    plain = port_pod("q", ("TCP", "", 9000))
    plain_state = CycleState()
    plugin.pre_filter(plain_state, plain)
    assert (plugin.filter(plain_state, plain, busy) is not None) == counted
    if counted:
        assert plugin.filter(state, incoming, busy) == Status(Code.UNSCHEDULABLE, (REASON,))


def test_protocols_and_events() -> None:
    plugin = nodeports.new(None, NO_HANDLE)
    assert isinstance(plugin, PreFilterPlugin)
    assert isinstance(plugin, BatchFilterPlugin)
    assert plugin.pre_filter_extensions() is None
    # v1.30's registrations (v1.34's, with hints: test_nodeports_hints.py)
    assert tuple(nodeports.new(None, V130).events_to_register()) == (
        ClusterEvent("Pod", ActionType.DELETE),
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),
    )


def test_batch_equals_per_node_on_random_clusters() -> None:
    rng = random.Random(9)
    choices = [
        ("TCP", "", 80),
        ("TCP", "10.0.0.1", 80),
        ("UDP", "", 53),
        ("TCP", "10.0.0.2", 8080),
        ("UDP", "10.0.0.1", 8080),
        ("TCP", "0.0.0.0", 443),
    ]
    plugin = nodeports.NodePorts()
    for trial in range(40):
        nodes = [make_node(f"n{i}") for i in range(rng.randint(1, 20))]
        existing = [
            port_pod(f"t{trial}-e{i}", *rng.sample(choices, rng.randint(1, 2)), node_name=rng.choice(nodes).name)
            for i in range(rng.randint(0, 8))
        ]
        snap = make_snapshot(nodes, existing)
        pod = port_pod(f"t{trial}", *rng.sample(choices, rng.randint(1, 3)))
        state = CycleState()
        plugin.pre_filter(state, pod)
        rows = np.array(sorted(rng.sample(range(len(snap)), rng.randint(1, len(snap)))))
        batch = plugin.filter_nodes(state, pod, snap, rows)
        for k, row in enumerate(rows.tolist()):
            want = plugin.filter(state, pod, snap.node_infos[row])
            idx = int(batch.status_index[k])
            assert (None if idx < 0 else batch.statuses[idx]) == want


@pytest.mark.parametrize("scenario", ["ports-hostport-conflicts", "smoke"])
def test_conformance(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    assert check_filter_conformance(scenario, lambda _s: nodeports.new(None, NO_HANDLE), NAME) > 0
