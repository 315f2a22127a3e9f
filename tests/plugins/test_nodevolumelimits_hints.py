"""NodeVolumeLimits (CSI)'s v1.34 registrations and queueing hints (v1.30: test_nodevolumelimits.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins.nodevolumelimits import csi
from kubesched.queue import events as qevents
from tests.plugins.queueing import QUEUE, SKIP, V134, hint_for, pod, registrations

CSI_NODE_UPDATE = ClusterEvent(qevents.CSI_NODE, ActionType.UPDATE)
POD_DELETE = ClusterEvent(qevents.POD, ActionType.DELETE)
PVC_ADD = ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)
VA_DELETE = ClusterEvent(qevents.VOLUME_ATTACHMENT, ActionType.DELETE)

CLAIM = {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
EPHEMERAL = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
EBS = {"name": "disk", "awsElasticBlockStore": {"volumeID": "vol-1"}}
CONFIG = {"name": "cfg", "configMap": {"name": "c"}}


def _plugin() -> Any:
    return csi.new(None, V134)


def test_v134_registrations() -> None:
    assert registrations(_plugin()) == [
        (ClusterEvent(qevents.CSI_NODE, ActionType.ADD), False),
        (CSI_NODE_UPDATE, True),
        (POD_DELETE, True),
        (PVC_ADD, True),
        (VA_DELETE, True),
    ]


@pytest.mark.parametrize(
    ("name", "volumes", "bound", "want"),
    [
        ("a bound pod with a claim", [CLAIM], True, QUEUE),
        ("a bound pod with an ephemeral volume", [EPHEMERAL], True, QUEUE),
        ("a bound pod with a migratable in-tree disk", [EBS], True, QUEUE),
        ("a bound pod with only a config map", [CONFIG], True, SKIP),
        ("a pod without volumes", [], True, SKIP),
        ("a pending pod with a claim", [CLAIM], False, SKIP),
    ],
)
def test_is_schedulable_after_pod_deleted(name: str, volumes: list[Any], bound: bool, want: object) -> None:
    gone = pod("q", node_name="n" if bound else "", spec={"volumes": volumes})
    assert hint_for(_plugin(), POD_DELETE)(pod("p"), gone, None) is want


@pytest.mark.parametrize(
    ("name", "claim_ns", "claim_name", "want"),
    [
        ("the pod's claim", "default", "data", QUEUE),
        ("the pod's generic ephemeral claim", "default", "p-scratch", QUEUE),
        ("another claim", "default", "other", SKIP),
        ("another namespace", "other", "data", SKIP),
    ],
)
def test_is_schedulable_after_pvc_added(name: str, claim_ns: str, claim_name: str, want: object) -> None:
    target = pod("p", spec={"volumes": [CLAIM, EPHEMERAL]})
    claim = {"metadata": {"namespace": claim_ns, "name": claim_name}}
    assert hint_for(_plugin(), PVC_ADD)(target, None, claim) is want


@pytest.mark.parametrize(
    ("name", "volumes", "attacher", "want"),
    [
        ("the pod uses a claim", [CLAIM], "any.csi", QUEUE),
        ("an in-tree disk migrating to the attacher's driver", [EBS], "ebs.csi.aws.com", QUEUE),
        ("an in-tree disk of another driver", [EBS], "pd.csi.storage.gke.io", SKIP),
        ("no volume that attaches", [CONFIG], "ebs.csi.aws.com", SKIP),
    ],
)
def test_is_schedulable_after_volume_attachment_deleted(
    name: str, volumes: list[Any], attacher: str, want: object
) -> None:
    attachment = {"metadata": {"name": "va"}, "spec": {"attacher": attacher}}
    assert hint_for(_plugin(), VA_DELETE)(pod("p", spec={"volumes": volumes}), attachment, None) is want


def _csi_node(**counts: int | None) -> dict[str, Any]:
    drivers = [{"name": d, **({"allocatable": {"count": c}} if c is not None else {})} for d, c in counts.items()]
    return {"metadata": {"name": "n"}, "spec": {"drivers": drivers}}


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("a driver's limit went up", {"a": 1}, {"a": 2}, QUEUE),
        ("a driver's limit went down", {"a": 2}, {"a": 1}, SKIP),
        ("a new driver with a limit", {"a": 1}, {"a": 1, "b": 1}, QUEUE),
        ("a limit set where there was none", {"a": None}, {"a": 3}, QUEUE),
        ("nothing changed", {"a": 1}, {"a": 1}, SKIP),
    ],
)
def test_is_schedulable_after_csi_node_updated(
    name: str, old: dict[str, int | None], new: dict[str, int | None], want: object
) -> None:
    assert hint_for(_plugin(), CSI_NODE_UPDATE)(pod("p"), _csi_node(**old), _csi_node(**new)) is want
