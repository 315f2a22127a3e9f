"""NodeName's v1.34 registration: only new nodes, without a hint (v1.30's: test_nodename.py)."""

from __future__ import annotations

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import nodename
from kubesched.queue.hints import build_queueing_hint_map
from tests.plugins.queueing import V134, registrations


def test_v134_registers_node_additions_alone() -> None:
    plugin = nodename.new(None, V134)
    assert registrations(plugin) == [(ClusterEvent("Node", ActionType.ADD), False)]
    # The queue adds Node/UpdateNodeTaint for a plugin asking for additions only (kube-scheduler does too).
    hint_map = build_queueing_hint_map([(plugin.name, plugin.events_to_register())], hints_enabled=True)
    assert set(hint_map) == {ClusterEvent("Node", ActionType.ADD), ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT)}
