"""The summary's node section: every node of a small cluster, pools and the most and least used of a large one."""

from __future__ import annotations

from typing import Literal

import pytest

from kubesched.sim.report import format_summary
from kubesched.sim.simulate import simulate
from kubesched.sim.usage import NodeUsage, format_nodes, most_and_least_used, pool_usage
from tests.factories import node_dict, pod_dict

INSTANCE_TYPE = "node.kubernetes.io/instance-type"


def usage(
    name: str,
    cpu: int,
    *,
    kind: str = "m5",
    memory: int = 0,
    team: str | None = None,
    gpus: tuple[int, int] | None = None,
) -> NodeUsage:
    """A 4-core, 16 GiB node with ``cpu`` millicores requested."""
    labels = {INSTANCE_TYPE: kind, **({"team": team} if team else {})}
    return NodeUsage(
        name, cpu, 4000, memory, 16 << 30, 1, 110, labels=labels, extended={"nvidia.com/gpu": gpus} if gpus else {}
    )


def cluster(count: int) -> list[NodeUsage]:
    """node-1 … node-N: node-i requests i * 100m, so node-N is the most used and node-1 the least."""
    return [usage(f"node-{i}", 100 * i, kind="m5" if i % 2 else "c5") for i in range(1, count + 1)]


def names(block: str) -> list[str]:
    """The first column of a table's rows."""
    return [line.split()[0] for line in block.splitlines()[1:]]


def test_a_small_cluster_lists_every_node_as_one_table_in_natural_order() -> None:
    text = format_nodes(list(reversed(cluster(12))))
    assert text.splitlines()[0].split() == ["NODE", "CPU", "CPU%", "MEMORY", "MEM%", "PODS"]
    assert names(text) == [f"node-{i}" for i in range(1, 13)]


def test_a_large_cluster_shows_its_pools_and_the_five_most_and_least_used_nodes() -> None:
    text = format_nodes(cluster(5000))
    pools, most, least = text.split("\n\n")
    assert pools.splitlines()[0] == f"5000 nodes in 2 pools by {INSTANCE_TYPE}:"
    assert names(pools.split("\n", 1)[1]) == ["c5", "m5"]
    assert most.splitlines()[0] == "Most used 5 of 5000 nodes:"
    assert names(most.split("\n", 1)[1]) == ["node-5000", "node-4999", "node-4998", "node-4997", "node-4996"]
    assert least.splitlines()[0] == "Least used 5:"
    assert names(least.split("\n", 1)[1])[:5] == ["node-1", "node-2", "node-3", "node-4", "node-5"]
    assert least.splitlines()[-1] == (
        "4990 nodes not shown: --nodes all lists every node, --nodes N the N most and least used."
    )
    assert len(text.splitlines()) < 25


def test_pool_rows_add_their_nodes_up() -> None:
    (c5, m5) = pool_usage(cluster(4), INSTANCE_TYPE)
    assert (c5.pool, c5.nodes, c5.total.cpu_requested, c5.total.cpu_allocatable) == ("c5", 2, 600, 8000)
    assert (m5.pool, m5.nodes, m5.total.cpu_requested) == ("m5", 2, 400)
    text = format_nodes(cluster(4), group_by=INSTANCE_TYPE)
    assert text.splitlines()[2].split() == ["c5", "2", "0.6/8", "8%", "0/32Gi", "0%", "2/220"]


@pytest.mark.parametrize(("shown", "rows"), [("all", 25), (25, 25), (13, 25)])
def test_all_nodes_are_listed_when_asked_or_when_the_two_ends_meet(shown: int | Literal["all"], rows: int) -> None:
    text = format_nodes(cluster(25), shown=shown)
    table = text.split("\n\n")[-1]
    assert names(table) == [f"node-{i}" for i in range(1, rows + 1)]
    assert "not shown" not in text


def test_nodes_n_shows_n_of_each_end_and_zero_only_the_pools() -> None:
    most, least = most_and_least_used(cluster(25), 2)
    assert [u.name for u in most] == ["node-25", "node-24"] and [u.name for u in least] == ["node-1", "node-2"]
    text = format_nodes(cluster(25), shown=0)
    assert text.splitlines()[0] == f"25 nodes in 2 pools by {INSTANCE_TYPE}:"
    assert "Most used" not in text


def test_ties_go_in_natural_name_order_and_use_is_the_larger_share() -> None:
    nodes = [usage("n-10", 0), usage("n-9", 0), usage("n-2", 0, memory=15 << 30), usage("n-1", 3000)]
    assert [round(u.use, 2) for u in nodes] == [0, 0, 0.94, 0.75]
    most, least = most_and_least_used(nodes, 1)
    assert [u.name for u in most] == ["n-2"] and [u.name for u in least] == ["n-9"]


def test_group_by_names_the_pools_of_a_small_cluster_too() -> None:
    nodes = [usage("a", 1000, team="web"), usage("b", 3000, team="web"), usage("c", 0)]
    text = format_nodes(nodes, group_by="team")
    pools, table = text.split("\n\n")
    assert pools.splitlines()[0] == "3 nodes in 2 pools by team:"
    assert [line.split()[:2] for line in pools.splitlines()[2:]] == [["<none>", "1"], ["web", "2"]]
    assert names(table) == ["a", "b", "c"]


def test_both_ends_show_the_same_extended_resource_columns() -> None:
    nodes = [usage(f"n{i}", 100 * i) for i in range(1, 30)] + [usage("gpu", 0, gpus=(1, 4))]
    most, least = format_nodes(nodes).split("\n\n")[1:]
    assert most.splitlines()[1].split()[-1] == least.splitlines()[1].split()[-1] == "nvidia.com/gpu"


def test_the_summary_of_a_30_node_run_stays_short() -> None:
    nodes = [
        node_dict(f"node-{i}", cpu="2", labels={"karpenter.sh/nodepool": "general" if i % 3 else "batch"})
        for i in range(1, 31)
    ]
    result = simulate([*nodes, pod_dict("p", cpu="1")])
    text = format_summary(result)
    assert "30 nodes in 2 pools by karpenter.sh/nodepool:" in text
    assert "20 nodes not shown" in text
    every = format_summary(result, nodes="all")
    assert sum(line.startswith("node-") for line in every.splitlines()) == 30
    assert "pools" not in every and "not shown" not in every
