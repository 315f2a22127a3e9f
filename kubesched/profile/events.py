"""Events the scheduler writes to the cluster, reported by the profile they concern.

kube-scheduler gives every profile an event recorder named after its scheduler name (profile.go's
RecorderFactory), so an Event's ``reportingController`` says which profile decided. Here one
:class:`ClusterEventRecorder` serves every profile: a pod's events carry its ``schedulerName``; the
scheduler's own (a malformed object it could not read) carry ``kubesched``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.timestamps import format_time
from kubesched.clock import Clock
from kubesched.cluster.protocol import ApiError, Cluster

log = logging.getLogger(__name__)

#: The longest Event message kube-scheduler writes (longer ones are cut).
MAX_EVENT_MESSAGE = 1024
#: The reporting controller of the events that no profile writes.
SCHEDULER_COMPONENT = "kubesched"


def truncate_message(message: str) -> str:
    """Event messages are capped like kube-scheduler's (keep the start, mark the cut)."""
    if len(message) <= MAX_EVENT_MESSAGE:
        return message
    return message[: MAX_EVENT_MESSAGE - 4] + " ..."


class ClusterEventRecorder:
    """Writes Events through the cluster; also the framework handle's event recorder.

    Events about pods wait on ``gate``: a replica that lost its Lease leaves the pod's story to the new
    leader."""

    def __init__(self, cluster: Cluster, clock: Clock, gate: Callable[[], bool] | None = None) -> None:
        self._cluster = cluster
        self._clock = clock
        self._gate = gate

    def pod_event(self, pod: Pod, type_: str, reason: str, message: str) -> None:
        """An event about ``pod``, reported by its profile."""
        if self._gate is not None and not self._gate():
            return
        self.object_event(
            "Pod", pod.namespace, pod.name, type_, reason, message, uid=pod.uid, controller=pod.scheduler_name
        )

    def event(self, regarding: Pod | Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        """The handle's form: ``regarding`` is a Pod, or an object dict whose kind and metadata are read."""
        if isinstance(regarding, Pod):
            self.pod_event(regarding, type_, reason, message)
            return
        meta = regarding.get("metadata") or {}
        self.object_event(
            str(regarding.get("kind") or ""),
            str(meta.get("namespace") or ""),
            str(meta.get("name") or ""),
            type_,
            reason,
            message,
            uid=str(meta.get("uid") or ""),
        )

    def object_event(
        self,
        kind: str,
        namespace: str,
        name: str,
        type_: str,
        reason: str,
        message: str,
        uid: str = "",
        controller: str = SCHEDULER_COMPONENT,
    ) -> None:
        """An event about any object; ``controller`` is the reporting scheduler (a pod's profile, as upstream)."""
        now = format_time(self._clock.now())
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{name}.", "namespace": namespace or "default"},
            "involvedObject": {"kind": kind, "namespace": namespace, "name": name, "uid": uid},
            "type": type_,
            "reason": reason,
            "message": truncate_message(message),
            "source": {"component": SCHEDULER_COMPONENT},
            "reportingController": controller,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            self._cluster.record_event(event)
        except ApiError as err:
            log.warning("recording event for %s/%s failed: %s", namespace, name, err)
