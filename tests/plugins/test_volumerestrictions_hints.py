"""VolumeRestrictions' v1.34 registrations and queueing hints (v1.30 registers PVC updates too)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import volumerestrictions
from kubesched.queue import events as qevents
from tests.plugins.queueing import QUEUE, SKIP, V130, V134, hint_for, pod, registrations

POD_DELETE = ClusterEvent(qevents.POD, ActionType.DELETE)
PVC_ADD = ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)


def _volumes(*volumes: dict[str, Any]) -> dict[str, Any]:
    return {"volumes": [{"name": f"v{i}", **v} for i, v in enumerate(volumes)]}


DISK = {"gcePersistentDisk": {"pdName": "disk-1"}}
DISK_RO = {"gcePersistentDisk": {"pdName": "disk-1", "readOnly": True}}
CLAIM = {"persistentVolumeClaim": {"claimName": "data"}}


def test_registrations_per_version() -> None:
    assert registrations(volumerestrictions.new(None, V134)) == [
        (POD_DELETE, True),
        (ClusterEvent(qevents.NODE, ActionType.ADD), False),
        (PVC_ADD, True),
    ]
    assert [e for e, _ in registrations(volumerestrictions.new(None, V130))] == [
        POD_DELETE,
        ClusterEvent(qevents.NODE, ActionType.ADD),
        ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
    ]


@pytest.mark.parametrize(
    ("name", "target", "deleted", "namespace", "want"),
    [
        ("the deleted pod held the same disk", DISK, DISK, "default", QUEUE),
        ("both mount the disk read-only", DISK_RO, DISK_RO, "default", SKIP),
        ("another namespace", DISK, DISK, "other", SKIP),
        ("the deleted pod used the same claim", CLAIM, CLAIM, "default", QUEUE),
        ("nothing in common", CLAIM, DISK, "default", SKIP),
    ],
)
def test_is_schedulable_after_pod_deleted(
    name: str, target: dict[str, Any], deleted: dict[str, Any], namespace: str, want: object
) -> None:
    hint = hint_for(volumerestrictions.new(None, V134), POD_DELETE)
    gone = pod("q", namespace=namespace, node_name="n", spec=_volumes(deleted))
    assert hint(pod("p", spec=_volumes(target)), gone, None) is want


@pytest.mark.parametrize(
    ("name", "claim_ns", "claim_name", "want"),
    [
        ("the pod's claim was created", "default", "data", QUEUE),
        ("a claim of another name", "default", "other", SKIP),
        ("the same name in another namespace", "other", "data", SKIP),
    ],
)
def test_is_schedulable_after_pvc_added(name: str, claim_ns: str, claim_name: str, want: object) -> None:
    hint = hint_for(volumerestrictions.new(None, V134), PVC_ADD)
    claim = {"metadata": {"namespace": claim_ns, "name": claim_name}}
    assert hint(pod("p", spec=_volumes(CLAIM)), None, claim) is want
