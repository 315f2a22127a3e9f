from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.queue import events as ev
from tests.factories import node_dict, pod_dict


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
    got = ev.build_cluster_event_map(
        [
            Ext("Fit", (node_add, pod_delete)),
            Ext("Taint", (node_add_taint,)),
            Ext("Gates", ()),
        ]
    )
    assert got == {
        node_add: {"Fit"},
        pod_delete: {"Fit"},
        # Fit asked for node adds without taint updates: it gets taint updates too.
        ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT): {"Fit"},
        node_add_taint: {"Taint"},
    }


# -- v1.34 ------------------------------------------------------------------------------------------
A = ActionType


@pytest.mark.parametrize(
    ("name", "registered", "incoming", "want"),
    [
        ("same resource and action", ClusterEvent("Node", A.ADD), ClusterEvent("Node", A.ADD), True),
        (
            "a specific update matches a registered generic update",
            ClusterEvent("Node", A.UPDATE),
            ClusterEvent("Node", A.UPDATE_NODE_LABEL),
            True,
        ),
        (
            "a generic update does not match a registered specific one",
            ClusterEvent("Node", A.UPDATE_NODE_LABEL),
            ClusterEvent("Node", A.UPDATE),
            False,
        ),
        ("a generic update matches All", ClusterEvent("Pod", A.ALL), ClusterEvent("AssignedPod", A.UPDATE), True),
        (
            "a generic update does not match Add|UpdatePodLabel|Delete",
            ClusterEvent("Pod", A.ADD | A.UPDATE_POD_LABEL | A.DELETE),
            ClusterEvent("AssignedPod", A.UPDATE),
            False,
        ),
        ("Pod matches an assigned pod", ClusterEvent("Pod", A.DELETE), ev.EventAssignedPodDelete, True),
        (
            "Pod matches an unschedulable pod",
            ClusterEvent("Pod", A.UPDATE_POD_TOLERATION),
            ClusterEvent("UnschedulablePod", A.UPDATE_POD_TOLERATION),
            True,
        ),
        ("no shared action", ClusterEvent("Pod", A.DELETE), ev.EventAssignedPodAdd, False),
        ("another resource", ClusterEvent("Node", A.ALL), ev.EventAssignedPodAdd, False),
        ("a registered wildcard matches anything", ClusterEvent("*", A.ALL), ev.EventNodeDelete, True),
        (
            "an incoming wildcard matches only a registered one",
            ClusterEvent("Node", A.ALL),
            ev.UnschedulableTimeout,
            False,
        ),
    ],
)
def test_match_cluster_events(name: str, registered: ClusterEvent, incoming: ClusterEvent, want: bool) -> None:
    assert ev.match_cluster_events(registered, incoming) is want


def test_v130_matching_ignores_the_width_of_the_update() -> None:
    assert ClusterEvent("Node", A.UPDATE).matches(ClusterEvent("Node", A.UPDATE_NODE_LABEL))
    assert not ev.match_cluster_events(ClusterEvent("Node", A.UPDATE_NODE_LABEL), ClusterEvent("Node", A.UPDATE))


def test_v134_labels_are_resource_and_action() -> None:
    assert [e.event_label for e in (ev.EventAssignedPodAdd, ev.EventUnscheduledPodUpdate, ev.EventNodeDelete)] == [
        "AssignedPodAdd",
        "UnschedulablePodUpdate",
        "NodeDelete",
    ]
    assert ClusterEvent("Node", A.UPDATE_NODE_LABEL).event_label == "NodeUpdateNodeLabel"
    assert ev.EventForceActivate.event_label == "ForceActivate" and ev.EventForceActivate.is_wildcard()
    assert ev.watch_event("StorageClass", "ADDED") == ClusterEvent("storage.k8s.io/StorageClass", A.ADD)
    assert ev.watch_event("VolumeAttachment", "DELETED") == ClusterEvent(ev.VOLUME_ATTACHMENT, A.DELETE)
    assert ev.watch_event("Service", "ADDED") is None


def _pod(**spec: Any) -> Pod:
    labels = spec.pop("labels", {"app": "web"})
    cpu = spec.pop("cpu", "1")
    node_name = spec.pop("node_name", "")
    return Pod.from_dict(pod_dict("p", uid="p", labels=labels, cpu=cpu, node_name=node_name, spec=spec))


TOL = [{"key": "k", "operator": "Exists"}]


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("labels", _pod(), _pod(labels={"app": "db"}), [A.UPDATE_POD_LABEL]),
        ("a smaller request", _pod(cpu="2"), _pod(cpu="1"), [A.UPDATE_POD_SCALE_DOWN]),
        ("a larger request", _pod(cpu="1"), _pod(cpu="2"), [A.UPDATE]),
        (
            "the last gate removed",
            _pod(schedulingGates=[{"name": "g"}]),
            _pod(),
            [A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED],
        ),
        (
            "one gate of two removed",
            _pod(schedulingGates=[{"name": "g"}, {"name": "h"}]),
            _pod(schedulingGates=[{"name": "g"}]),
            [A.UPDATE],
        ),
        ("a toleration added", _pod(), _pod(tolerations=TOL), [A.UPDATE_POD_TOLERATION]),
        (
            "labels and tolerations, in that order",
            _pod(),
            _pod(labels={}, tolerations=TOL),
            [A.UPDATE_POD_LABEL, A.UPDATE_POD_TOLERATION],
        ),
        ("nothing the scheduler reads", _pod(), _pod(), [A.UPDATE]),
    ],
)
def test_pod_scheduling_properties_change(name: str, old: Pod, new: Pod, want: list[ActionType]) -> None:
    events = ev.pod_scheduling_properties_change(new, old)
    assert [e.action for e in events] == want
    assert {e.resource for e in events} == {"UnschedulablePod"}


def test_a_bound_pods_update_is_an_assigned_pod_event() -> None:
    old, new = _pod(node_name="n"), _pod(node_name="n", labels={})
    assert ev.pod_scheduling_properties_change(new, old) == [ClusterEvent("AssignedPod", A.UPDATE_POD_LABEL)]


def _node(**kw: Any) -> Node:
    conditions = kw.pop("conditions", None)
    annotations = kw.pop("annotations", None)
    raw = node_dict("n", **kw)
    if conditions is not None:
        raw["status"]["conditions"] = conditions
    if annotations is not None:
        raw["metadata"]["annotations"] = annotations
    return Node.from_dict(raw)


READY = [{"type": "Ready", "status": "True", "lastHeartbeatTime": "t1"}]


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("uncordoned", _node(unschedulable=True), _node(), [A.UPDATE_NODE_TAINT]),
        ("cordoned", _node(), _node(unschedulable=True), []),
        ("allocatable", _node(cpu="4"), _node(cpu="8"), [A.UPDATE_NODE_ALLOCATABLE]),
        (
            "labels and taints, in that order",
            _node(),
            _node(labels={"a": "b"}, taints=[{"key": "k", "effect": "NoSchedule"}]),
            [A.UPDATE_NODE_LABEL, A.UPDATE_NODE_TAINT],
        ),
        (
            "a condition's status",
            _node(conditions=READY),
            _node(conditions=[{**READY[0], "status": "False"}]),
            [A.UPDATE_NODE_CONDITION],
        ),
        ("only a heartbeat", _node(conditions=READY), _node(conditions=[{**READY[0], "lastHeartbeatTime": "t2"}]), []),
        ("annotations", _node(), _node(annotations={"a": "b"}), [A.UPDATE_NODE_ANNOTATION]),
    ],
)
def test_node_scheduling_properties_change(name: str, old: Node, new: Node, want: list[ActionType]) -> None:
    assert [e.action for e in ev.node_scheduling_properties_change(new, old)] == want
