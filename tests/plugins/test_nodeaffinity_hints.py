"""NodeAffinity's v1.34 registration and queueing hint (v1.30's: test_nodeaffinity.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.pluginargs import NodeAffinityArgs
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import nodeaffinity
from tests.plugins.queueing import QUEUE, SKIP, V134, hint_for, node, pod, registrations

NODE_EVENT = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
WANTS_SSD = {"nodeSelector": {"disk": "ssd"}}
ZONE_A_ONLY = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
        }
    }
}


def test_v134_registers_node_adds_and_label_updates() -> None:
    assert registrations(nodeaffinity.new(None, V134)) == [(NODE_EVENT, True)]


@pytest.mark.parametrize(
    ("name", "added", "old", "new", "want"),
    [
        ("a matching node is added", None, None, {"disk": "ssd"}, QUEUE),
        ("a node that does not match is added", None, None, {"disk": "hdd"}, SKIP),
        ("a node gets the label the pod needs", None, {"disk": "hdd"}, {"disk": "ssd"}, QUEUE),
        ("a matching node stays matching", None, {"disk": "ssd"}, {"disk": "ssd", "x": "y"}, SKIP),
        ("a node stops matching", None, {"disk": "ssd"}, {}, SKIP),
        ("the profile's added affinity refuses the node", ZONE_A_ONLY, None, {"disk": "ssd", "zone": "b"}, SKIP),
        ("the profile's added affinity accepts the node", ZONE_A_ONLY, None, {"disk": "ssd", "zone": "a"}, QUEUE),
    ],
)
def test_is_schedulable_after_node_change(
    name: str, added: dict[str, Any] | None, old: dict[str, str] | None, new: dict[str, str], want: object
) -> None:
    args = NodeAffinityArgs.from_dict(added) if added is not None else None
    hint = hint_for(nodeaffinity.new(args, V134), NODE_EVENT)
    old_node = None if old is None else node("n", labels=old)
    assert hint(pod("p", spec=WANTS_SSD), old_node, node("n", labels=new)) is want
