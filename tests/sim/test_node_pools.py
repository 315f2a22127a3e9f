"""Node pools for the HTML report: natural order, the pool label, usage per resource and pool statistics."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.sim.node_pools import (
    ALL_NODES,
    cluster_usage,
    natural_sorted,
    pool_label,
    pool_stats,
    resource_order,
)
from tests.sim.scenarios import node, pod


@pytest.mark.parametrize(
    ("names", "want"),
    [
        (["node-10", "node-2", "node-1"], ["node-1", "node-2", "node-10"]),
        (["ns/web-10", "ns/web-9", "ns/api-100"], ["ns/api-100", "ns/web-9", "ns/web-10"]),
        (["a10b2", "a10b10", "a9b99", "a"], ["a", "a9b99", "a10b2", "a10b10"]),
        (["gpu-b1", "general-a10", "general-a2"], ["general-a2", "general-a10", "gpu-b1"]),
    ],
)
def test_natural_order_reads_digit_runs_as_numbers(names: list[str], want: list[str]) -> None:
    assert natural_sorted(names) == want


@pytest.mark.parametrize(
    ("labels", "group_by", "want"),
    [
        (
            [{"cloud.google.com/gke-nodepool": "a", "topology.kubernetes.io/zone": "z"}],
            None,
            "cloud.google.com/gke-nodepool",
        ),
        (
            [{"node.kubernetes.io/instance-type": "m5"}, {"karpenter.sh/nodepool": "spot"}],
            None,
            "karpenter.sh/nodepool",
        ),
        (
            [{"node.kubernetes.io/instance-type": "m5", "topology.kubernetes.io/zone": "z"}],
            None,
            "node.kubernetes.io/instance-type",
        ),
        ([{"topology.kubernetes.io/zone": "z"}], None, "topology.kubernetes.io/zone"),
        ([{"kubernetes.io/hostname": "n1"}], None, None),
        ([{"topology.kubernetes.io/zone": "z"}], "team", "team"),
    ],
)
def test_the_pool_label_prefers_node_groups_then_machine_type_then_zone(labels, group_by, want) -> None:
    assert pool_label(labels, group_by) == want


def test_resources_in_order_cpu_memory_storage_extended_then_pods() -> None:
    assert resource_order(["nvidia.com/gpu", "ephemeral-storage", "example.com/foo"]) == [
        "cpu",
        "memory",
        "ephemeral-storage",
        "example.com/foo",
        "nvidia.com/gpu",
        "pods",
    ]
    assert resource_order([]) == ["cpu", "memory", "pods"]


def _gpu_node(name: str, pool: str | None) -> Node:
    raw = node(name, cpu="4")
    if pool:
        raw["metadata"]["labels"]["team"] = pool
    raw["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    return Node.from_dict(raw)


def test_usage_per_pool_and_resource() -> None:
    nodes = [_gpu_node("n10", "ml"), _gpu_node("n2", "ml"), Node.from_dict(node("n1", cpu="4")), _gpu_node("n3", None)]
    gpu_pod = pod("train", cpu="1", node_name="n2")
    gpu_pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "2"
    pods = [
        Pod.from_dict(p)
        for p in (
            gpu_pod,
            pod("web", cpu="2", node_name="n1"),
            pod("waiting", cpu="1"),
            {**pod("done", cpu="4", node_name="n10"), "status": {"phase": "Succeeded"}},
        )
    ]
    usage = cluster_usage(nodes, pods, group_by="team")
    assert usage.nodes == ["n1", "n2", "n3", "n10"]
    assert usage.resources == ["cpu", "memory", "nvidia.com/gpu", "pods"]
    assert [(p.name, [usage.nodes[i] for i in p.rows]) for p in usage.pools] == [
        ("ml", ["n2", "n10"]),
        ("without team", ["n1", "n3"]),
    ]
    gpu = usage.resources.index("nvidia.com/gpu")
    assert usage.requested[:, gpu].tolist() == [0, 2, 0, 0]  # the finished pod does not count
    assert usage.requested[:, usage.resources.index("pods")].tolist() == [1, 1, 0, 0]
    [ml, rest] = pool_stats(usage, gpu)
    assert (ml.pool, ml.nodes, ml.minimum, ml.median, ml.maximum) == ("ml", 2, 0.0, 25.0, 50.0)
    assert (ml.requested, ml.allocatable, ml.total_percent) == (2, 8, 25.0)
    assert (rest.nodes, rest.maximum) == (1, 0.0)  # n1 has no GPU: left out of the spread


def test_without_a_pool_label_every_node_is_in_one_pool() -> None:
    raw = [node("b"), node("a")]
    for n in raw:
        del n["metadata"]["labels"]["topology.kubernetes.io/zone"]
    usage = cluster_usage([Node.from_dict(n) for n in raw], [])
    assert usage.label is None and [(p.name, p.rows.tolist()) for p in usage.pools] == [(ALL_NODES, [0, 1])]
    assert cluster_usage([], []).pools == []
