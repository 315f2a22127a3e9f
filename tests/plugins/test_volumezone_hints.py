"""VolumeZone's v1.34 registrations and queueing hints (v1.30 registers PVC additions only)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.config.features import feature_gates
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import volumezone
from kubesched.queue import events as qevents
from tests.plugins.queueing import QUEUE, SKIP, pod, registrations

ZONE = "topology.kubernetes.io/zone"


def _plugin(version: str) -> Any:
    return volumezone.new(None, SimpleNamespace(features=feature_gates(version)))


def test_registrations_per_version() -> None:
    add_update = ActionType.ADD | ActionType.UPDATE
    assert registrations(_plugin("1.34")) == [
        (ClusterEvent(qevents.STORAGE_CLASS, ActionType.ADD), True),
        (ClusterEvent(qevents.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), False),
        (ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, add_update), True),
        (ClusterEvent(qevents.PERSISTENT_VOLUME, add_update), True),
    ]
    assert (ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), False) in registrations(_plugin("1.30"))


@pytest.mark.parametrize(
    ("name", "mode", "want"),
    [
        ("a class binding on first consumer", "WaitForFirstConsumer", QUEUE),
        ("an Immediate class", "Immediate", SKIP),
        ("no mode", None, SKIP),
    ],
)
def test_storage_class_added(name: str, mode: str | None, want: object) -> None:
    sc: dict[str, Any] = {"metadata": {"name": "sc"}}
    if mode is not None:
        sc["volumeBindingMode"] = mode
    assert volumezone.is_schedulable_after_storage_class_added(pod(), None, sc) is want


@pytest.mark.parametrize(
    ("name", "namespace", "claim", "want"),
    [
        ("a claim the pod uses", "default", "data", QUEUE),
        ("another claim", "default", "other", SKIP),
        ("another namespace", "team", "data", SKIP),
    ],
)
def test_pvc_change(name: str, namespace: str, claim: str, want: object) -> None:
    target = pod("p", spec={"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]})
    assert (
        volumezone.is_schedulable_after_pvc_change(target, None, {"metadata": {"namespace": namespace, "name": claim}})
        is want
    )


def _pv(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": "pv", "labels": labels}}


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a volume is created", None, _pv({}), QUEUE),
        ("its zone changed", _pv({ZONE: "a"}), _pv({ZONE: "b"}), QUEUE),
        ("a zone label appeared", _pv({}), _pv({ZONE: "a"}), QUEUE),
        ("an unrelated label changed", _pv({ZONE: "a"}), _pv({ZONE: "a", "x": "y"}), SKIP),
        ("the same zones written in another order", _pv({ZONE: "a__b"}), _pv({ZONE: "b__a"}), SKIP),
    ],
)
def test_pv_change(name: str, old: Any, new: Any, want: object) -> None:
    assert volumezone.is_schedulable_after_pv_change(pod(), old, new) is want


def test_hints_run_only_with_the_v134_registrations() -> None:
    assert all(not with_hint for _, with_hint in registrations(_plugin("1.30")))
