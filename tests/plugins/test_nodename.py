from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ActionType, BatchFilterPlugin, ClusterEvent
from kubesched.framework.status import Code
from kubesched.plugins import nodename
from tests.factories import NO_HANDLE, make_node, make_pod, make_snapshot
from tests.plugins.queueing import V130

REASON = "node(s) didn't match the requested node name"


@pytest.mark.parametrize(
    ("name", "pod_node", "node", "rejected"),
    [
        ("no node name", "", "foo", False),
        ("matching", "foo", "foo", False),
        ("not matching", "bar", "foo", True),
    ],
)
def test_filter(name: str, pod_node: str, node: str, rejected: bool) -> None:
    plugin = nodename.new(None, NO_HANDLE)
    pod = make_pod("p", node_name=pod_node)
    status = plugin.filter(CycleState(), pod, NodeInfo(make_node(node)))
    if rejected:
        assert status is not None
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (REASON,)
    else:
        assert status is None


def test_protocols_and_events() -> None:
    plugin = nodename.new(None, NO_HANDLE)
    assert isinstance(plugin, BatchFilterPlugin)
    # v1.30's registrations (v1.34's: test_nodename_hints.py)
    assert tuple(nodename.new(None, V130).events_to_register()) == (
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),
    )


def test_batch_equals_per_node() -> None:
    rng = random.Random(2)
    snap = make_snapshot([make_node(f"n{i}") for i in range(12)])
    plugin = nodename.NodeName()
    for target in ["", "n0", "n5", "n11", "missing"]:
        pod = make_pod("p", node_name=target)
        for _ in range(5):
            rows = np.array(sorted(rng.sample(range(len(snap)), rng.randint(1, len(snap)))))
            batch = plugin.filter_nodes(CycleState(), pod, snap, rows)
            for k, row in enumerate(rows.tolist()):
                want = plugin.filter(CycleState(), pod, snap.node_infos[row])
                idx = int(batch.status_index[k])
                assert (None if idx < 0 else batch.statuses[idx]) == want
