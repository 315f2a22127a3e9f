"""NodeUnschedulable's v1.34 registrations and queueing hints (v1.30's: test_nodeunschedulable.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import nodeunschedulable
from tests.plugins.queueing import QUEUE, SKIP, V134, hint_for, node, pod, registrations

NODE_EVENT = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT)
TOLERATION_EVENT = ClusterEvent("Pod", ActionType.UPDATE_POD_TOLERATION)
CORDON_TOLERATION = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


def test_v134_registers_node_adds_and_taints_and_the_pods_tolerations() -> None:
    assert registrations(nodeunschedulable.new(None, V134)) == [(NODE_EVENT, True), (TOLERATION_EVENT, True)]


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a schedulable node is added", None, {}, QUEUE),
        ("a cordoned node is added", None, {"unschedulable": True}, SKIP),
        ("a node is uncordoned", {"unschedulable": True}, {}, QUEUE),
        ("a node stays cordoned", {"unschedulable": True}, {"unschedulable": True}, SKIP),
        ("a schedulable node stays schedulable", {}, {}, SKIP),
        ("a node is cordoned", {}, {"unschedulable": True}, SKIP),
    ],
)
def test_is_schedulable_after_node_change(
    name: str, old: dict[str, Any] | None, new: dict[str, Any], want: object
) -> None:
    hint = hint_for(nodeunschedulable.new(None, V134), NODE_EVENT)
    old_node = None if old is None else node("n", **old)
    assert hint(pod(), old_node, node("n", **new)) is want


@pytest.mark.parametrize(
    ("name", "same_pod", "tolerations", "want"),
    [
        ("the pod now tolerates the cordon", True, [CORDON_TOLERATION], QUEUE),
        ("the pod got an unrelated toleration", True, [{"key": "x", "operator": "Exists"}], SKIP),
        ("another pod tolerates the cordon", False, [CORDON_TOLERATION], SKIP),
    ],
)
def test_is_schedulable_after_pod_toleration_change(
    name: str, same_pod: bool, tolerations: list[Any], want: object
) -> None:
    target = pod("p", uid="target")
    updated = pod("p" if same_pod else "q", uid="target" if same_pod else "other", spec={"tolerations": tolerations})
    hint = hint_for(nodeunschedulable.new(None, V134), TOLERATION_EVENT)
    assert hint(target, target, updated) is want
