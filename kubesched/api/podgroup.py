"""PodGroup (scheduling.x-k8s.io/v1alpha1), as the Coscheduling plugin and its controller read it.

Pods join a group with the label ``scheduling.x-k8s.io/pod-group: <name>`` in the group's namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.objects import Pod
from kubesched.api.resources import parse_resource_list, scheduler_resources

API_VERSION = "scheduling.x-k8s.io/v1alpha1"
KIND = "PodGroup"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"

# Phases (scheduler-plugins' PodGroupPhase, plus Scheduled: enough members bound, not yet running).
PENDING = "Pending"
SCHEDULING = "Scheduling"
SCHEDULED = "Scheduled"
RUNNING = "Running"
FINISHED = "Finished"
FAILED = "Failed"


@dataclass(frozen=True, slots=True)
class PodGroup:
    namespace: str
    name: str
    min_member: int
    #: minResources in scheduler units (cpu in millicores), empty when not set.
    min_resources: Mapping[str, int]
    schedule_timeout_seconds: int | None
    creation_timestamp: datetime | None

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> PodGroup:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        if not isinstance(spec, Mapping):
            raise ObjectError("spec", f"expected a mapping, got {type(spec).__name__}")
        min_member = spec.get("minMember", 0)
        if isinstance(min_member, bool) or not isinstance(min_member, int) or min_member < 0:
            raise ObjectError("spec.minMember", f"expected a non-negative integer, got {min_member!r}")
        timeout = spec.get("scheduleTimeoutSeconds")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0):
            raise ObjectError("spec.scheduleTimeoutSeconds", f"expected a non-negative integer, got {timeout!r}")
        resources = scheduler_resources(parse_resource_list(spec.get("minResources"), "spec.minResources"))
        created = meta.get("creationTimestamp")
        return cls(
            namespace=str(meta.get("namespace") or "default"),
            name=str(meta.get("name") or ""),
            min_member=min_member,
            min_resources=resources,
            schedule_timeout_seconds=timeout,
            creation_timestamp=_parse_time(created) if isinstance(created, str) else None,
        )


def pod_group_name(pod: Pod) -> str:
    """The group a pod belongs to ("" when none)."""
    return pod.labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod: Pod) -> str:
    name = pod_group_name(pod)
    return f"{pod.namespace}/{name}" if name else ""


def _parse_time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
