"""NodeInfo bookkeeping: what adding and removing a pod does to a node's aggregated state."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.frozen import evolve
from kubesched.api.objects import Pod
from kubesched.cache.node_info import HostPortInfo, NodeInfo
from tests.factories import make_node, make_pod

Mi = 1024 * 1024

POD_AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
        ]
    }
}
PREFERRED_ANTI = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}}
        ]
    }
}
REQUIRED_ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
        ]
    }
}


def port_pod(name: str, *ports: dict[str, Any]) -> Pod:
    return make_pod(name, node_name="n1", spec={"containers": [{"name": "c", "ports": list(ports)}]})


def pvc_pod(name: str, *claims: str, namespace: str = "default") -> Pod:
    volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    volumes.append({"name": "scratch", "emptyDir": {}})
    return make_pod(name, namespace=namespace, node_name="n1", spec={"volumes": volumes})


def test_add_and_remove_pod_accounting() -> None:
    info = NodeInfo(make_node("n1"))
    a = make_pod("a", cpu="200m", memory="1Gi", node_name="n1", requests={"nvidia.com/gpu": "1"})
    b = make_pod("b", node_name="n1")  # no requests: only the non-zero defaults count
    info.add_pod(a)
    info.add_pod(b)
    assert [p.name for p in info.pods] == ["a", "b"]
    assert info.requested_cpu() == 200 and info.requested_memory() == 1024 * Mi
    assert info.requested["nvidia.com/gpu"] == 1
    assert (info.non_zero_cpu, info.non_zero_memory) == (200 + 100, 1024 * Mi + 200 * Mi)

    assert info.remove_pod(a) is True
    assert [p.name for p in info.pods] == ["b"]
    assert info.requested_cpu() == 0 and info.requested.get("nvidia.com/gpu", 0) == 0
    assert (info.non_zero_cpu, info.non_zero_memory) == (100, 200 * Mi)


def test_remove_matches_by_uid_and_reports_absence() -> None:
    info = NodeInfo(make_node("n1"))
    a = make_pod("a", cpu="1", node_name="n1", uid="u1")
    info.add_pod(a)
    newer = make_pod("a", cpu="3", node_name="n1", uid="u1")  # a later version of the same pod
    assert info.remove_pod(newer) is True
    assert info.requested_cpu() == 0  # the stored version's requests are taken back, not the newer ones
    assert info.remove_pod(a) is False
    assert info.remove_pod(make_pod("other", node_name="n1")) is False


def test_constructor_accounts_given_pods() -> None:
    pods = [make_pod("a", cpu="1", node_name="n1"), make_pod("b", cpu="2", node_name="n1")]
    info = NodeInfo(make_node("n1", cpu="8"), pods)
    assert info.name == "n1" and info.requested_cpu() == 3000 and len(info.pods) == 2
    assert info.allocatable["cpu"] == 8000
    assert NodeInfo().name == "" and dict(NodeInfo().allocatable) == {}


@pytest.mark.parametrize(
    ("existing", "probe", "conflict"),
    [
        ({"hostPort": 80}, ("", "TCP", 80), True),
        ({"hostPort": 80}, ("127.0.0.1", "TCP", 80), True),  # 0.0.0.0 in use overlaps every ip
        ({"hostPort": 80}, ("0.0.0.0", "UDP", 80), False),  # other protocol
        ({"hostPort": 80}, ("", "TCP", 81), False),
        ({"hostPort": 80, "hostIP": "10.0.0.1"}, ("10.0.0.1", "TCP", 80), True),
        ({"hostPort": 80, "hostIP": "10.0.0.1"}, ("10.0.0.2", "TCP", 80), False),
        ({"hostPort": 80, "hostIP": "10.0.0.1"}, ("0.0.0.0", "TCP", 80), True),  # a new 0.0.0.0 overlaps it
        ({"hostPort": 80, "hostIP": "10.0.0.1"}, ("", "", 80), True),  # empty ip / protocol sanitised
        ({"hostPort": 53, "protocol": "UDP"}, ("", "UDP", 53), True),
        ({"hostPort": 53, "protocol": "UDP"}, ("", "", 53), False),
        ({"hostPort": 80}, ("", "TCP", 0), False),  # port 0 never conflicts
    ],
)
def test_used_ports(existing: dict[str, Any], probe: tuple[str, str, int], conflict: bool) -> None:
    info = NodeInfo(make_node("n1"))
    pod = port_pod("a", {"containerPort": 1, **existing})
    info.add_pod(pod)
    assert info.used_ports.conflicts(*probe) is conflict
    info.remove_pod(pod)
    assert info.used_ports.conflicts(*probe) is False
    assert len(info.used_ports) == 0


def test_used_ports_are_reference_counted() -> None:
    info = NodeInfo(make_node("n1"))
    a = port_pod("a", {"containerPort": 1, "hostPort": 80})
    b = port_pod("b", {"containerPort": 1, "hostPort": 80}, {"containerPort": 2, "hostPort": 443})
    info.add_pod(a)
    info.add_pod(b)
    assert len(info.used_ports) == 2
    info.remove_pod(a)
    assert info.used_ports.conflicts("", "TCP", 80)  # b still holds it
    info.remove_pod(b)
    assert not info.used_ports.conflicts("", "TCP", 80)


def test_host_port_info_ignores_non_positive_and_unknown_removals() -> None:
    ports = HostPortInfo()
    ports.add("", "TCP", 0)
    ports.remove("1.2.3.4", "TCP", 99)
    assert len(ports) == 0
    ports.add("1.2.3.4", "TCP", 99)
    clone = ports.copy()
    ports.remove("1.2.3.4", "TCP", 99)
    assert clone.conflicts("1.2.3.4", "TCP", 99) and not ports.conflicts("1.2.3.4", "TCP", 99)


def test_a_copy_of_host_ports_without_ports_is_its_own() -> None:
    ports = HostPortInfo()
    clone = ports.copy()
    clone.add("", "TCP", 80)
    ports.add("1.2.3.4", "UDP", 53)
    assert not ports.conflicts("", "TCP", 80) and not clone.conflicts("1.2.3.4", "UDP", 53)
    assert len(ports) == len(clone) == 1


def test_pvc_ref_counts() -> None:
    info = NodeInfo(make_node("n1"))
    a = pvc_pod("a", "data", "logs")
    b = pvc_pod("b", "data")
    c = pvc_pod("c", "data", namespace="other")
    for pod in (a, b, c):
        info.add_pod(pod)
    assert info.pvc_ref_counts == {"default/data": 2, "default/logs": 1, "other/data": 1}
    info.remove_pod(a)
    assert info.pvc_ref_counts == {"default/data": 1, "other/data": 1}
    info.remove_pod(b)
    info.remove_pod(c)
    assert info.pvc_ref_counts == {}


@pytest.mark.parametrize(
    ("affinity", "with_affinity", "with_required_anti"),
    [
        ({}, False, False),
        (POD_AFFINITY, True, False),
        (PREFERRED_ANTI, True, False),
        (REQUIRED_ANTI, True, True),
        (
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]
                    }
                }
            },
            False,
            False,
        ),
    ],
)
def test_pods_with_affinity_lists(affinity: dict[str, Any], with_affinity: bool, with_required_anti: bool) -> None:
    info = NodeInfo(make_node("n1"))
    plain = make_pod("plain", node_name="n1")
    pod = make_pod("p", node_name="n1", spec={"affinity": affinity})
    info.add_pod(plain)
    info.add_pod(pod)
    assert [p.name for p in info.pods_with_affinity] == (["p"] if with_affinity else [])
    assert [p.name for p in info.pods_with_required_anti_affinity] == (["p"] if with_required_anti else [])
    info.remove_pod(pod)
    assert info.pods_with_affinity == [] and info.pods_with_required_anti_affinity == []
    assert [p.name for p in info.pods] == ["plain"]


def _state(info: NodeInfo) -> tuple[Any, ...]:
    return (
        [p.name for p in info.pods],
        [id(p) for p in info.pods],
        dict(info.requested),
        (info.non_zero_cpu, info.non_zero_memory),
        len(info.used_ports),
        dict(info.pvc_ref_counts),
        [p.name for p in info.pods_with_affinity],
        [p.name for p in info.pods_with_required_anti_affinity],
    )


@pytest.mark.parametrize("remade", [True, False], ids=["same-counts", "parsed-afresh"])
@pytest.mark.parametrize("affinity", [{}, REQUIRED_ANTI], ids=["plain", "anti-affinity"])
def test_replace_pod_equals_a_remove_and_an_add(remade: bool, affinity: dict[str, Any]) -> None:
    spec = {
        "affinity": affinity,
        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}],
        "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}],
    }
    first = make_pod("a", cpu="1", node_name="n1", uid="u1", spec=spec)
    # The same pod confirmed (its fields shared), or a newer version parsed again with other requests.
    newer = evolve(first, start_time=None) if remade else make_pod("a", cpu="3", node_name="n1", uid="u1", spec=spec)
    other = make_pod("b", cpu="2", node_name="n1", spec={"affinity": affinity})
    replaced, reference = NodeInfo(make_node("n1")), NodeInfo(make_node("n1"))
    for info in (replaced, reference):
        info.add_pod(first)
        info.add_pod(other)
    before = replaced.generation
    replaced.replace_pod(newer)
    reference.remove_pod(newer)
    reference.add_pod(newer)
    assert _state(replaced) == _state(reference)
    assert [p.name for p in replaced.pods] == ["b", "a"] and replaced.pods[-1] is newer
    assert replaced.generation > before


def test_replace_pod_adds_a_pod_not_on_the_node() -> None:
    info = NodeInfo(make_node("n1"))
    pod = make_pod("a", cpu="1", node_name="n1")
    info.replace_pod(pod)
    assert info.pods == [pod] and info.requested_cpu() == 1000


def test_generation_increases_on_every_change() -> None:
    info = NodeInfo(make_node("n1"))
    pod = make_pod("a", node_name="n1")
    seen = [info.generation]
    for change in (
        lambda: info.add_pod(pod),
        lambda: info.set_node(make_node("n1", cpu="2")),
        lambda: info.remove_pod(pod),
    ):
        change()
        seen.append(info.generation)
    assert seen == sorted(set(seen)), "each change must take a strictly greater generation"
    other = NodeInfo(make_node("n2"))
    assert other.generation > info.generation  # one process-wide counter


def test_snapshot_is_independent() -> None:
    info = NodeInfo(make_node("n1"))
    a = make_pod(
        "a",
        cpu="1",
        node_name="n1",
        spec={
            "affinity": REQUIRED_ANTI,
            "containers": [
                {"name": "c", "ports": [{"containerPort": 1, "hostPort": 80}], "resources": {"requests": {"cpu": "1"}}}
            ],
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    )
    info.add_pod(a)
    clone = info.snapshot()
    assert clone.generation == info.generation and clone.node is info.node

    b = make_pod("b", cpu="2", node_name="n1", spec={"affinity": POD_AFFINITY})
    clone.add_pod(b)
    clone.remove_pod(a)
    assert [p.name for p in info.pods] == ["a"]
    assert info.requested_cpu() == 1000
    assert [p.name for p in info.pods_with_affinity] == ["a"]
    assert [p.name for p in info.pods_with_required_anti_affinity] == ["a"]
    assert info.used_ports.conflicts("", "TCP", 80)
    assert info.pvc_ref_counts == {"default/data": 1}

    # and the other way round: the cache moving on leaves the copy alone
    fresh = info.snapshot()
    info.remove_pod(a)
    assert [p.name for p in fresh.pods] == ["a"] and fresh.requested_cpu() == 1000
    assert fresh.used_ports.conflicts("", "TCP", 80) and fresh.pvc_ref_counts == {"default/data": 1}
