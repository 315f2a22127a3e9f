"""TaintToleration's v1.34 registrations and queueing hints (v1.30's: test_tainttoleration.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import tainttoleration
from tests.plugins.queueing import QUEUE, SKIP, V134, hint_for, node, pod, registrations

NODE_EVENT = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT)
TOLERATION_EVENT = ClusterEvent("Pod", ActionType.UPDATE_POD_TOLERATION)
GPU = {"key": "gpu", "value": "true", "effect": "NoSchedule"}
GPU_EXEC = {"key": "gpu", "value": "true", "effect": "NoExecute"}
SOFT = {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}
TOLERATES_GPU = {"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}


def test_v134_registers_node_adds_and_taints_and_the_pods_tolerations() -> None:
    assert registrations(tainttoleration.new(None, V134)) == [(NODE_EVENT, True), (TOLERATION_EVENT, True)]


@pytest.mark.parametrize(
    ("name", "pod_spec", "old", "new", "want"),
    [
        ("a node without hard taints is added", {}, None, [SOFT], QUEUE),
        ("a node with an untolerated taint is added", {}, None, [GPU], SKIP),
        ("a node with a tolerated taint is added", TOLERATES_GPU, None, [GPU], QUEUE),
        ("the untolerated taint is removed", {}, [GPU], [], QUEUE),
        ("an untolerated NoExecute taint stays", {}, [GPU_EXEC], [GPU_EXEC, SOFT], SKIP),
        ("a tolerated node stays tolerated", TOLERATES_GPU, [GPU], [], SKIP),
        ("an untolerated taint is added", {}, [], [GPU], SKIP),
    ],
)
def test_is_schedulable_after_node_change(
    name: str, pod_spec: dict[str, Any], old: list[Any] | None, new: list[Any], want: object
) -> None:
    hint = hint_for(tainttoleration.new(None, V134), NODE_EVENT)
    old_node = None if old is None else node("n", taints=old)
    assert hint(pod("p", spec=pod_spec), old_node, node("n", taints=new)) is want


@pytest.mark.parametrize(
    ("name", "same_pod", "want"),
    [
        ("the rejected pod got a toleration", True, QUEUE),
        ("another pod got a toleration", False, SKIP),
    ],
)
def test_is_schedulable_after_pod_toleration_change(name: str, same_pod: bool, want: object) -> None:
    target = pod("p", uid="target")
    updated = pod("p", uid="target" if same_pod else "other", spec=TOLERATES_GPU)
    assert hint_for(tainttoleration.new(None, V134), TOLERATION_EVENT)(target, target, updated) is want
