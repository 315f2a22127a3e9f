from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.queue import events as ev


@dataclass
class Ext:
    name: str
    events: tuple[ClusterEvent, ...]

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return self.events


def test_named_events() -> None:
    assert ev.NodeAdd == ClusterEvent("Node", ActionType.ADD, "NodeAdd")
    assert ev.UnschedulableTimeout.is_wildcard() and ev.WildCardEvent.is_wildcard()
    assert not ev.AssignedPodAdd.is_wildcard()
    assert ev.NodeSpecUnschedulableChange.action == ActionType.UPDATE_NODE_TAINT
    assert ev.CSINodeAdd.resource == "storage.k8s.io/CSINode"
    # An incoming NodeTaintChange matches a plugin that registered Node/Add|UpdateNodeTaint.
    assert ev.NodeTaintChange.matches(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT))
    assert not ev.NodeLabelChange.matches(ClusterEvent("Node", ActionType.ADD))


def test_build_cluster_event_map() -> None:
    node_add = ClusterEvent("Node", ActionType.ADD)
    node_add_taint = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT)
    pod_delete = ClusterEvent("Pod", ActionType.DELETE)
    got = ev.build_cluster_event_map([
        Ext("Fit", (node_add, pod_delete)),
        Ext("Taint", (node_add_taint,)),
        Ext("Gates", ()),
    ])
    assert got == {
        node_add: {"Fit"},
        pod_delete: {"Fit"},
        # Fit asked for node adds without taint updates: it gets taint updates too.
        ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT): {"Fit"},
        node_add_taint: {"Taint"},
    }
