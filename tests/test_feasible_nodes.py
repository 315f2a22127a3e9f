"""Which nodes fit the pod (kubesched.feasible_nodes), checked against schedule_one.go's findNodesThatFitPod:
how many feasible nodes are enough, and the rotating walk over the snapshot's nodes."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.feasible_nodes import num_feasible_nodes_to_find
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import Harness, LabelFilter, config_dict, profile_with, ref


def harness(
    plugins: dict[str, Any] | None = None,
    nodes: int | list[dict[str, Any]] = 1,
    top: dict[str, Any] | None = None,
    profile: dict[str, Any] | None = None,
) -> Harness:
    objs = [node_dict(f"n{i + 1}") for i in range(nodes)] if isinstance(nodes, int) else nodes
    return Harness(config_dict(profile_with(plugins or {}, None, **(profile or {})), **(top or {})), objects=objs)


@pytest.mark.parametrize(
    ("percentage", "nodes", "want"),
    [
        (None, 50, 50),  # small clusters: every node
        (None, 99, 99),
        (0, 100, 100),  # 50% of 100 < minimum 100
        (None, 1000, 420),  # adaptive: 50 - 1000/125 = 42%
        (30, 1000, 300),
        (None, 5000, 500),  # adaptive: 10%
        (None, 6000, 300),  # adaptive floor: 5%
        (10, 500, 100),  # never fewer than 100
        (100, 5000, 5000),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int | None, nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == want


# -- node sampling ----------------------------------------------------------------------------------
def _snapshot_order(h: Harness) -> list[str]:
    return [info.name for info in h.scheduler.update_snapshot().node_infos]


def test_percentage_of_nodes_to_score_limits_and_rotates_the_search() -> None:
    h = harness(nodes=[node_dict(f"n{i:03d}") for i in range(200)], top={"percentageOfNodesToScore": 50})
    order = _snapshot_order(h)
    h.create(pod_dict("a"), pod_dict("b"), pod_dict("c"))
    h.step()
    first = h.records[-1]
    assert first.evaluated_nodes == 100
    assert set(first.feasible) == set(order[:100])
    assert h.scheduler.next_start_node_index == 100
    h.step()
    second = h.records[-1]
    assert set(second.feasible) == set(order[100:])
    assert h.scheduler.next_start_node_index == 0
    h.step()
    assert set(h.records[-1].feasible) == set(order[:100])


def test_rejected_nodes_count_as_processed() -> None:
    nodes = [node_dict(f"n{i:03d}", labels={"fake": "yes" if i % 2 else "no"}) for i in range(300)]
    h = harness(
        {"filter": {"enabled": [{"name": ref(LabelFilter)}]}}, nodes=nodes, top={"percentageOfNodesToScore": 10}
    )
    order = _snapshot_order(h)
    h.create(pod_dict("a"))
    h.step()
    rec = h.records[-1]
    # 100 feasible needed; every other node passes, so the walk stops right after the 100th pass.
    want = [n for n in order if n.endswith(("1", "3", "5", "7", "9"))][:100]
    last = order.index(want[-1])
    assert set(rec.feasible) == set(want)
    assert rec.evaluated_nodes == last + 1
    assert len(rec.filter) == last + 1 - 100
    assert h.scheduler.next_start_node_index == last + 1


def test_profile_percentage_overrides_the_global_one() -> None:
    h = harness(
        nodes=[node_dict(f"n{i:03d}") for i in range(200)],
        top={"percentageOfNodesToScore": 50},
        profile={"percentageOfNodesToScore": 100},
    )
    h.create(pod_dict("a"))
    h.step()
    assert h.records[-1].evaluated_nodes == 200


def test_without_score_plugins_the_first_feasible_node_is_taken_round_robin() -> None:
    h = harness({"score": {"disabled": [{"name": "*"}]}}, nodes=3)
    order = _snapshot_order(h)
    h.create(*(pod_dict(f"p{i}") for i in range(4)))
    h.run()
    assert [r.evaluated_nodes for r in h.records] == [1, 1, 1, 1]
    assert [r.node for r in h.records] == [order[0], order[1], order[2], order[0]]
