"""VolumeBinding's v1.34 registrations and queueing hints (kubesched.plugins.volumebinding.hints)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.cluster.listers import Listers
from kubesched.config.features import feature_gates
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import volumebinding as vb
from kubesched.plugins.volumebinding import hints
from kubesched.queue import events as qevents
from tests.plugins.queueing import QUEUE, SKIP, pod, registrations

ADD_UPDATE = ActionType.ADD | ActionType.UPDATE


def _plugin(version: str) -> Any:
    return vb.new(None, SimpleNamespace(features=feature_gates(version), listers=Listers()))


def test_registrations_per_version() -> None:
    assert registrations(_plugin("1.34")) == [
        (ClusterEvent(qevents.STORAGE_CLASS, ADD_UPDATE), True),
        (ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ADD_UPDATE), True),
        (ClusterEvent(qevents.PERSISTENT_VOLUME, ADD_UPDATE), False),
        (ClusterEvent(qevents.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), False),
        (ClusterEvent(qevents.CSI_NODE, ADD_UPDATE), True),
        (ClusterEvent(qevents.CSI_DRIVER, ActionType.UPDATE), True),
        (ClusterEvent(qevents.CSI_STORAGE_CAPACITY, ADD_UPDATE), True),
    ]
    v130 = [e for e, with_hint in registrations(_plugin("1.30"))]
    assert ClusterEvent(qevents.CSI_DRIVER, ADD_UPDATE) in v130
    node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
    assert ClusterEvent(qevents.NODE, node_actions) in v130


TOPOLOGY = [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a class is created", None, {"metadata": {"name": "sc"}}, QUEUE),
        (
            "its allowed topologies changed",
            {"metadata": {"name": "sc"}},
            {"metadata": {"name": "sc"}, "allowedTopologies": TOPOLOGY},
            QUEUE,
        ),
        (
            "something else changed",
            {"metadata": {"name": "sc"}, "allowedTopologies": TOPOLOGY},
            {"metadata": {"name": "sc", "labels": {"x": "y"}}, "allowedTopologies": TOPOLOGY},
            SKIP,
        ),
    ],
)
def test_storage_class_change(name: str, old: Any, new: Any, want: object) -> None:
    assert hints.is_schedulable_after_storage_class_change(pod(), old, new) is want


CLAIMS = {
    "volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
    ]
}


@pytest.mark.parametrize(
    ("name", "namespace", "claim", "want"),
    [
        ("a claim the pod names", "default", "data", QUEUE),
        ("the pod's ephemeral claim", "default", "p-scratch", QUEUE),
        ("an unrelated claim", "default", "other", SKIP),
        ("another namespace", "team", "data", SKIP),
    ],
)
def test_pvc_change(name: str, namespace: str, claim: str, want: object) -> None:
    obj = {"metadata": {"namespace": namespace, "name": claim}}
    assert hints.is_schedulable_after_pvc_change(pod("p", spec=CLAIMS), None, obj) is want


def _csi_node(migrated: str | None) -> dict[str, Any]:
    annotations = {} if migrated is None else {hints.MIGRATED_PLUGINS_ANNOTATION: migrated}
    return {"metadata": {"name": "n", "annotations": annotations}}


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a CSINode is created", None, _csi_node(None), QUEUE),
        ("its migrated plugins changed", _csi_node(None), _csi_node("kubernetes.io/aws-ebs"), QUEUE),
        ("nothing relevant changed", _csi_node("a"), _csi_node("a"), SKIP),
    ],
)
def test_csi_node_change(name: str, old: Any, new: Any, want: object) -> None:
    assert hints.is_schedulable_after_csi_node_change(pod(), old, new) is want


def _driver(capacity: bool | None) -> dict[str, Any]:
    spec = {} if capacity is None else {"storageCapacity": capacity}
    return {"metadata": {"name": "csi.example.com"}, "spec": spec}


INLINE = {"volumes": [{"name": "v", "csi": {"driver": "csi.example.com"}}]}


@pytest.mark.parametrize(
    ("name", "pod_spec", "old", "new", "want"),
    [
        ("capacity tracking turned off for the pod's driver", INLINE, True, False, QUEUE),
        ("capacity tracking unset for the pod's driver", INLINE, True, None, QUEUE),
        ("capacity tracking turned on", INLINE, False, True, SKIP),
        ("the pod has no inline volume of that driver", {}, True, False, SKIP),
    ],
)
def test_csi_driver_change(
    name: str, pod_spec: dict[str, Any], old: bool | None, new: bool | None, want: object
) -> None:
    assert hints.is_schedulable_after_csi_driver_change(pod("p", spec=pod_spec), _driver(old), _driver(new)) is want


def _capacity(capacity: str | None = None, maximum: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "c", "namespace": "default"}}
    if capacity is not None:
        obj["capacity"] = capacity
    if maximum is not None:
        obj["maximumVolumeSize"] = maximum
    return obj


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("capacity is published", None, _capacity("1Gi"), QUEUE),
        ("capacity grew", _capacity("1Gi"), _capacity("2Gi"), QUEUE),
        ("capacity shrank", _capacity("2Gi"), _capacity("1Gi"), SKIP),
        ("a maximum volume size appears above the capacity", _capacity("1Gi"), _capacity("1Gi", "2Gi"), QUEUE),
        ("the maximum volume size rules over a grown capacity", _capacity("1Gi", "5Gi"), _capacity("9Gi", "5Gi"), SKIP),
        ("a limit appears", _capacity(), _capacity("1Gi"), QUEUE),
        ("no limit at all", _capacity(), _capacity(), SKIP),
    ],
)
def test_csi_storage_capacity_change(name: str, old: Any, new: Any, want: object) -> None:
    assert hints.is_schedulable_after_csi_storage_capacity_change(pod(), old, new) is want
