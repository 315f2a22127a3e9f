"""PodTopologySpread's v1.34 registrations and queueing hints (v1.30's: test_podtopologyspread.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.cluster.listers import Listers
from kubesched.config.features import feature_gates
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import podtopologyspread
from tests.plugins.queueing import QUEUE, SKIP, hint_for, node, pod, registrations

POD_EVENT = ClusterEvent(
    "Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE
)
NODE_EVENT = ClusterEvent(
    "Node", ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
)
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _plugin() -> Any:
    return podtopologyspread.new(None, SimpleNamespace(features=feature_gates("1.34"), listers=Listers()))


def _spread(*keys: str, honor_taints: bool = False) -> dict[str, Any]:
    constraints = [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
            **({"nodeTaintsPolicy": "Honor"} if honor_taints else {}),
        }
        for key in keys
    ]
    return {"topologySpreadConstraints": constraints}


TARGET = pod("web-9", uid="target", labels={"app": "web"}, spec=_spread(ZONE))


def test_v134_registrations() -> None:
    assert registrations(_plugin()) == [(POD_EVENT, True), (NODE_EVENT, True)]


def _other(labels: dict[str, str], *, bound: bool = True, namespace: str = "default") -> Any:
    return pod("other", uid="other", labels=labels, node_name="n" if bound else "", namespace=namespace)


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a matching pod is bound", None, _other({"app": "web"}), QUEUE),
        ("a pod that does not match is bound", None, _other({"app": "db"}), SKIP),
        ("a pending pod appears", None, _other({"app": "web"}, bound=False), SKIP),
        ("a matching pod in another namespace", None, _other({"app": "web"}, namespace="team"), SKIP),
        ("a matching pod is deleted", _other({"app": "web"}), None, QUEUE),
        ("a pod that did not match is deleted", _other({"app": "db"}), None, SKIP),
        ("a pod is relabelled into the selector", _other({"app": "db"}), _other({"app": "web"}), QUEUE),
        ("a pod is relabelled out of the selector", _other({"app": "web"}), _other({}), QUEUE),
        (
            "a relabelling that changes nothing for the selector",
            _other({"app": "web"}),
            _other({"app": "web", "x": "y"}),
            SKIP,
        ),
    ],
)
def test_is_schedulable_after_pod_change(name: str, old: Any, new: Any, want: object) -> None:
    assert hint_for(_plugin(), POD_EVENT)(TARGET, old, new) is want


@pytest.mark.parametrize(
    ("name", "honor", "want"),
    [
        ("a constraint honours taints", True, QUEUE),
        ("no constraint honours taints", False, SKIP),
    ],
)
def test_the_pods_own_new_toleration(name: str, honor: bool, want: object) -> None:
    target = pod("web-9", uid="target", labels={"app": "web"}, spec=_spread(ZONE, honor_taints=honor))
    tolerating = pod(
        "web-9",
        uid="target",
        labels={"app": "web"},
        spec={**_spread(ZONE, honor_taints=honor), "tolerations": [{"operator": "Exists"}]},
    )
    assert hint_for(_plugin(), POD_EVENT)(target, target, tolerating) is want


TAINT = {"key": "k", "value": "v", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a node with the topology key is added", None, {ZONE: "a"}, QUEUE),
        ("a node without it is added", None, {}, SKIP),
        ("a node with the key is deleted", {ZONE: "a"}, None, QUEUE),
        ("a node without it is deleted", {}, None, SKIP),
        ("a node gains the key", {}, {ZONE: "a"}, QUEUE),
        ("a node loses the key", {ZONE: "a"}, {}, QUEUE),
        ("a node moves to another zone", {ZONE: "a"}, {ZONE: "b"}, QUEUE),
        ("an unrelated label changes", {ZONE: "a"}, {ZONE: "a", "x": "y"}, SKIP),
    ],
)
def test_is_schedulable_after_node_change(
    name: str, old: dict[str, str] | None, new: dict[str, str] | None, want: object
) -> None:
    old_node = None if old is None else node("n", labels=old)
    new_node = None if new is None else node("n", labels=new)
    assert hint_for(_plugin(), NODE_EVENT)(TARGET, old_node, new_node) is want


@pytest.mark.parametrize(
    ("name", "labels", "want"),
    [
        ("the taints of a node in the topology changed", {ZONE: "a"}, QUEUE),
        ("the taints of a node outside it changed", {}, SKIP),
    ],
)
def test_node_taint_changes(name: str, labels: dict[str, str], want: object) -> None:
    old, new = node("n", labels=labels), node("n", labels=labels, taints=[TAINT])
    assert hint_for(_plugin(), NODE_EVENT)(TARGET, old, new) is want


def test_a_pod_without_constraints_of_its_own_uses_the_defaults() -> None:
    """The system defaults spread over hostname and zone, with the selector of the pod's Services:
    none here, so no constraint can have rejected it and every node change may matter."""
    bare = pod("p", labels={"app": "web"})
    assert hint_for(_plugin(), NODE_EVENT)(bare, None, node("n", labels={HOST: "n"})) is QUEUE
