"""NodeResourcesFit's v1.34 registrations and queueing hints (v1.30's: test_fit.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins.noderesources import fit
from tests.plugins.queueing import QUEUE, SKIP, V134, hint_for, node, pod, registrations

POD_EVENT = ClusterEvent("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)
NODE_EVENT = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)


def test_v134_registers_deletions_scale_downs_node_adds_and_allocatable() -> None:
    assert registrations(fit.new(None, V134)) == [(POD_EVENT, True), (NODE_EVENT, True)]


def _pod(name: str, uid: str, cpu: str | None = None, memory: str | None = None, node_name: str = "", **kw: Any) -> Any:
    return pod(name, uid=uid, cpu=cpu, memory=memory, node_name=node_name, **kw)


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a bound pod is deleted", _pod("q", "q", cpu="1", node_name="n"), None, QUEUE),
        ("a pending pod is deleted", _pod("q", "q", cpu="1"), None, SKIP),
        ("the rejected pod itself scaled down", _pod("p", "p", cpu="4"), _pod("p", "p", cpu="3"), QUEUE),
        ("a pending pod scaled down", _pod("q", "q", cpu="4"), _pod("q", "q", cpu="3"), SKIP),
        (
            "a bound pod freed cpu the pod asks for",
            _pod("q", "q", cpu="4", node_name="n"),
            _pod("q", "q", cpu="3", node_name="n"),
            QUEUE,
        ),
        (
            "a bound pod freed memory the pod does not ask for",
            _pod("q", "q", memory="2Gi", node_name="n"),
            _pod("q", "q", memory="1Gi", node_name="n"),
            SKIP,
        ),
    ],
)
def test_is_schedulable_after_pod_event(name: str, old: Any, new: Any, want: object) -> None:
    target = _pod("p", "p", cpu="4")
    assert hint_for(fit.new(None, V134), POD_EVENT)(target, old, new) is want


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a node the pod fits is added", None, {"cpu": "8"}, QUEUE),
        ("a node too small is added", None, {"cpu": "2"}, SKIP),
        ("a node without pod slots is added", None, {"cpu": "8", "pods": "0"}, SKIP),
        ("a node grew cpu", {"cpu": "2"}, {"cpu": "8"}, QUEUE),
        ("a node grew pod slots", {"cpu": "8", "pods": "1"}, {"cpu": "8", "pods": "2"}, QUEUE),
        (
            "a node grew only memory the pod does not ask for",
            {"cpu": "8", "memory": "1Gi"},
            {"cpu": "8", "memory": "2Gi"},
            SKIP,
        ),
        ("a node grew but still too small", {"cpu": "1"}, {"cpu": "2"}, SKIP),
        ("a node that fits shrank", {"cpu": "16"}, {"cpu": "8"}, SKIP),
        (
            "a node grew an extended resource the pod asks for",
            {"cpu": "8", "extra": {"example.com/gpu": "1"}},
            {"cpu": "8", "extra": {"example.com/gpu": "2"}},
            QUEUE,
        ),
    ],
)
def test_is_schedulable_after_node_change(
    name: str, old: dict[str, Any] | None, new: dict[str, Any], want: object
) -> None:
    target = _pod("p", "p", cpu="4", requests={"example.com/gpu": "1"} if "extra" in new else None)
    old_node = None if old is None else node("n", **old)
    assert hint_for(fit.new(None, V134), NODE_EVENT)(target, old_node, node("n", **new)) is want
