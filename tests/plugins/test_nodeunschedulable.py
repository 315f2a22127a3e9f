from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ActionType, BatchFilterPlugin, ClusterEvent
from kubesched.framework.status import Code
from kubesched.plugins import nodeunschedulable
from tests.factories import NO_HANDLE, make_node, make_pod, make_snapshot
from tests.plugins.queueing import V130
from tests.plugins.test_helper import check_filter_conformance, random_nodes, scenario_available

NAME = "NodeUnschedulable"
REASON = "node(s) were unschedulable"


@pytest.mark.parametrize(
    ("name", "unschedulable", "tolerations", "rejected"),
    [
        ("schedulable node", False, [], False),
        ("cordoned, no tolerations", True, [], True),
        (
            "cordoned, tolerates the taint",
            True,
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}],
            False,
        ),
        ("cordoned, tolerates everything", True, [{"operator": "Exists"}], False),
        (
            "cordoned, Exists on key with any effect",
            True,
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
            False,
        ),
        (
            "cordoned, wrong effect",
            True,
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}],
            True,
        ),
        (
            "cordoned, Equal with empty value",
            True,
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "", "effect": "NoSchedule"}],
            False,
        ),
        (
            "cordoned, Equal with a value",
            True,
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "x", "effect": "NoSchedule"}],
            True,
        ),
    ],
)
def test_filter(name: str, unschedulable: bool, tolerations: list[dict[str, Any]], rejected: bool) -> None:
    plugin = nodeunschedulable.new(None, NO_HANDLE)
    pod = make_pod("p", spec={"tolerations": tolerations})
    node = make_node("n", unschedulable=unschedulable)
    status = plugin.filter(CycleState(), pod, NodeInfo(node))
    if rejected:
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (REASON,)
    else:
        assert status is None
    batch = plugin.filter_nodes(CycleState(), pod, make_snapshot([node]), np.array([0]))
    assert (batch.status_index[0] >= 0) == rejected
    if rejected:
        assert batch.statuses[batch.status_index[0]] == status


def test_protocols_and_events() -> None:
    plugin = nodeunschedulable.new(None, NO_HANDLE)
    assert isinstance(plugin, BatchFilterPlugin)
    # v1.30's registrations (v1.34's, with hints: test_nodeunschedulable_hints.py)
    assert tuple(nodeunschedulable.new(None, V130).events_to_register()) == (
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),
    )


def test_batch_equals_per_node_on_random_clusters() -> None:
    rng = random.Random(5)
    plugin = nodeunschedulable.NodeUnschedulable()
    for trial in range(30):
        snap = make_snapshot(random_nodes(rng, rng.randint(1, 25)))
        tolerations = rng.choice(
            [[], [{"operator": "Exists"}], [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]]
        )
        pod = make_pod(f"p{trial}", spec={"tolerations": tolerations})
        rows = np.array(sorted(rng.sample(range(len(snap)), rng.randint(1, len(snap)))))
        batch = plugin.filter_nodes(CycleState(), pod, snap, rows)
        for k, row in enumerate(rows.tolist()):
            want = plugin.filter(CycleState(), pod, snap.node_infos[row])
            idx = int(batch.status_index[k])
            assert (None if idx < 0 else batch.statuses[idx]) == want


def test_cordon_column_follows_node_changes() -> None:
    from datetime import UTC, datetime

    from kubesched.cache.cache import Cache
    from kubesched.cache.snapshot import Snapshot

    cache = Cache(clock=lambda: datetime(2024, 1, 1, tzinfo=UTC))
    node = make_node("a")
    cache.add_node(node)
    snap = Snapshot()
    cache.update_snapshot(snap)
    plugin = nodeunschedulable.NodeUnschedulable()
    pod = make_pod("p")
    assert plugin.filter_nodes(CycleState(), pod, snap, np.array([0])).status_index.tolist() == [-1]
    cache.update_node(node, make_node("a", unschedulable=True))
    cache.update_snapshot(snap)
    assert plugin.filter_nodes(CycleState(), pod, snap, np.array([0])).status_index.tolist() == [0]


@pytest.mark.parametrize("scenario", ["node-unschedulable", "smoke"])
def test_conformance(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    assert check_filter_conformance(scenario, lambda _s: nodeunschedulable.new(None, NO_HANDLE), NAME) > 0
