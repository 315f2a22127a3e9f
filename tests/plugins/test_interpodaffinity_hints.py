"""InterPodAffinity's v1.34 registrations and queueing hints (v1.30's: test_interpodaffinity.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import interpodaffinity
from tests.plugins.queueing import QUEUE, SKIP, V134, node, pod, registrations

POD_EVENT = ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE)
NODE_EVENT = ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def _affinity(*, near: str | None = None, away: str | None = None, key: str = ZONE) -> dict[str, Any]:
    affinity: dict[str, Any] = {}
    if near:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(near, key)]}
    if away:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(away, key)]}
    return {"affinity": affinity}


NEAR_DB = pod("cache", spec=_affinity(near="db"))
AWAY_FROM_DB = pod("web", spec=_affinity(away="db", key=HOST))


def test_v134_registrations() -> None:
    assert registrations(interpodaffinity.new(None, V134)) == [(POD_EVENT, True), (NODE_EVENT, True)]


def _other(labels: dict[str, str], bound: bool = True) -> Any:
    return pod("other", uid="other", labels=labels, node_name="n" if bound else "")


@pytest.mark.parametrize(
    ("name", "target", "old", "new", "want"),
    [
        ("a pod the affinity selects is bound", NEAR_DB, None, _other({"app": "db"}), QUEUE),
        ("a pod it does not select is bound", NEAR_DB, None, _other({"app": "web"}), SKIP),
        ("a pending pod it selects appears", NEAR_DB, None, _other({"app": "db"}, bound=False), SKIP),
        ("a pod is relabelled into the affinity", NEAR_DB, _other({}), _other({"app": "db"}), QUEUE),
        ("a pod the anti-affinity selects is deleted", AWAY_FROM_DB, _other({"app": "db"}), None, QUEUE),
        ("a pod it does not select is deleted", AWAY_FROM_DB, _other({"app": "web"}), None, SKIP),
        ("a pod is relabelled out of the anti-affinity", AWAY_FROM_DB, _other({"app": "db"}), _other({}), QUEUE),
        ("a pod is relabelled into the anti-affinity", AWAY_FROM_DB, _other({}), _other({"app": "db"}), SKIP),
        (
            "no terms of its own: an existing pod's anti-affinity rejected it",
            pod("plain"),
            _other({"app": "db"}),
            None,
            SKIP,
        ),
    ],
)
def test_is_schedulable_after_pod_change(name: str, target: Any, old: Any, new: Any, want: object) -> None:
    assert interpodaffinity.is_schedulable_after_pod_change(target, old, new) is want


@pytest.mark.parametrize(
    ("name", "target", "old", "new", "want"),
    [
        ("a node with the affinity's topology key is added", NEAR_DB, None, {ZONE: "a"}, QUEUE),
        ("a node without it is added", NEAR_DB, None, {}, SKIP),
        ("a node gains the key", NEAR_DB, {}, {ZONE: "a"}, QUEUE),
        ("a node moves to another domain", NEAR_DB, {ZONE: "a"}, {ZONE: "b"}, QUEUE),
        ("a node keeps its domain", NEAR_DB, {ZONE: "a"}, {ZONE: "a", "x": "y"}, SKIP),
        ("any node is added (anti-affinity)", AWAY_FROM_DB, None, {}, QUEUE),
        ("a node loses the anti-affinity key", AWAY_FROM_DB, {HOST: "n"}, {}, QUEUE),
        ("a node gains the anti-affinity key", AWAY_FROM_DB, {}, {HOST: "n"}, SKIP),
    ],
)
def test_is_schedulable_after_node_change(
    name: str, target: Any, old: dict[str, str] | None, new: dict[str, str], want: object
) -> None:
    old_node = None if old is None else _bare_node(old)
    assert interpodaffinity.is_schedulable_after_node_change(target, old_node, _bare_node(new)) is want


def _bare_node(labels: dict[str, str]) -> Any:
    """A node carrying exactly ``labels`` (the factory adds a hostname label otherwise)."""
    n = node("n")
    return type(n).from_dict({**n.raw, "metadata": {"name": "n", "labels": labels}})
