"""DynamicResources' v1.34 registrations and queueing hints (the plugin is not in v1.30's profile)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import dynamicresources as dra
from kubesched.queue import events as qevents
from tests.plugins.queueing import QUEUE, SKIP, V130, V134, pod, registrations

ADD_UPDATE = ActionType.ADD | ActionType.UPDATE


def test_registrations_per_version() -> None:
    assert registrations(dra.new(None, V134)) == [
        (ClusterEvent(qevents.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE),
         False),
        (ClusterEvent(qevents.RESOURCE_CLAIM, ADD_UPDATE), True),
        (ClusterEvent(qevents.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM), True),
        (ClusterEvent(qevents.DEVICE_CLASS, ADD_UPDATE), False),
        (ClusterEvent(qevents.RESOURCE_SLICE, ADD_UPDATE), False),
    ]
    assert registrations(dra.new(None, V130)) == []


NAMED = {"resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]}
TEMPLATED = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]}


def _claim(name: str, namespace: str = "default", allocated: bool = False, **status: Any) -> dict[str, Any]:
    body = dict(status)
    if allocated:
        body["allocation"] = {"devices": {}}
    return {"metadata": {"name": name, "namespace": namespace}, "status": body}


@pytest.mark.parametrize(("name", "old", "new", "want"), [
    ("the pod's claim is created", None, _claim("gpu-claim"), QUEUE),
    ("another claim is created", None, _claim("other"), SKIP),
    ("any claim is deallocated", _claim("other", allocated=True), _claim("other"), QUEUE),
    ("the pod's claim changed status", _claim("gpu-claim"), _claim("gpu-claim", reservedFor=[{"name": "x"}]), QUEUE),
    ("the pod's claim changed but not its status", _claim("gpu-claim"), _claim("gpu-claim"), SKIP),
    ("a claim of the same name in another namespace", None, _claim("gpu-claim", namespace="team"), SKIP),
])
def test_is_schedulable_after_claim_change(name: str, old: Any, new: Any, want: object) -> None:
    assert dra.is_schedulable_after_claim_change(pod("p", spec=NAMED), old, new) is want


def test_a_pod_whose_template_claim_is_not_generated_yet_cannot_be_helped_by_claims() -> None:
    assert dra.is_schedulable_after_claim_change(pod("p", spec=TEMPLATED), None, _claim("gpu-claim")) is SKIP


@pytest.mark.parametrize(("name", "same_pod", "generated", "want"), [
    ("the pod's generated claim is recorded", True, True, QUEUE),
    ("still not recorded", True, False, SKIP),
    ("another pod", False, True, SKIP),
])
def test_is_schedulable_after_pod_change(name: str, same_pod: bool, generated: bool, want: object) -> None:
    target = pod("p", uid="target", spec=TEMPLATED)
    raw = dict(target.raw)
    raw["metadata"] = {**raw["metadata"], "uid": "target" if same_pod else "other"}
    if generated:
        raw["status"] = {**raw["status"], "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu"}]}
    assert dra.is_schedulable_after_pod_change(target, target, type(target).from_dict(raw)) is want
