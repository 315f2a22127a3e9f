"""The PodGroup controller of scheduler-plugins, for the embedded cluster: keeps PodGroup status true.

Watch-driven: a change to a PodGroup, or to a pod labelled ``scheduling.x-k8s.io/pod-group``,
reconciles that group. The phase moves as scheduler-plugins' controller moves it (Pending until
minMember pods exist, Scheduling, Running once minMember run or succeeded, Failed, Finished), with
one addition the simulation needs: ``Scheduled`` once minMember pods are bound (an embedded cluster
has no kubelet to make them Running). Status also counts ``scheduled``, ``running``, ``succeeded``
and ``failed`` members.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.cluster.protocol import ApiError, WatchEvent
from kubesched.embedded.apiserver import EmbeddedCluster

log = logging.getLogger(__name__)

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
TERMINAL = ("Finished", "Failed")


def compute_status(group: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The status the controller writes for ``group`` given its member pods."""
    status = dict(group.get("status") or {})
    phase = status.get("phase") or ""
    if phase in TERMINAL:
        return status
    min_member = int((group.get("spec") or {}).get("minMember") or 0)
    phases = [str((p.get("status") or {}).get("phase") or "") for p in pods]
    running, succeeded, failed = phases.count("Running"), phases.count("Succeeded"), phases.count("Failed")
    scheduled = sum(
        1
        for p, ph in zip(pods, phases, strict=True)
        if (p.get("spec") or {}).get("nodeName") and ph not in ("Succeeded", "Failed")
    )
    status.update(scheduled=scheduled, running=running, succeeded=succeeded, failed=failed)
    if len(pods) < min_member:
        status["phase"] = "Pending"
    elif running + succeeded >= min_member > 0 or (min_member == 0 and running):
        status["phase"] = "Running"
    elif scheduled + running + succeeded >= min_member and scheduled:
        status["phase"] = "Scheduled"
    else:
        status["phase"] = "Scheduling"
    if failed and failed + running + succeeded >= min_member:
        status["phase"] = "Failed"
    if min_member and succeeded >= min_member:
        status["phase"] = "Finished"
    if status["phase"] != "Pending" and phase in ("", "Pending") and pods:
        owners = sorted(
            f"{(pods[0].get('metadata') or {}).get('namespace')}/{ref.get('name')}"
            for ref in (pods[0].get("metadata") or {}).get("ownerReferences") or []
        )
        if owners:
            status["occupiedBy"] = ",".join(owners)
    return status


def _group_of(pod: Mapping[str, Any] | None) -> Any:
    """The group a pod's label names (None or "" when it names none)."""
    if not pod:
        return None
    return ((pod.get("metadata") or {}).get("labels") or {}).get(POD_GROUP_LABEL)


class PodGroupController:
    """Reconciles the PodGroup a watch event touches; start() subscribes it to the cluster.

    Member pods are indexed from the watch itself (group -> pod name -> pod), so a reconcile reads
    one group, not every pod of the namespace.
    """

    def __init__(self, cluster: EmbeddedCluster) -> None:
        self.cluster = cluster
        self._watch: Any = None
        self._members: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}

    def start(self) -> None:
        self._watch = self.cluster.watch(("PodGroup", "Pod"), self.handle_event)
        for pod in self.cluster.list("Pod")[0]:
            self._index(pod, None)

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()

    def _index(self, new: Mapping[str, Any] | None, old: Mapping[str, Any] | None) -> set[tuple[str, str]]:
        """Update the member index from a pod change; the groups it touched."""
        touched = set()
        for obj, present in ((old, False), (new, True)):
            group = _group_of(obj)
            if not obj or not group:
                continue
            meta = obj.get("metadata") or {}
            key = (str(meta.get("namespace") or "default"), str(group))
            members = self._members.setdefault(key, {})
            if present:
                members[str(meta.get("name"))] = obj
            else:
                members.pop(str(meta.get("name")), None)
            touched.add(key)
        return touched

    def handle_event(self, event: WatchEvent) -> None:
        if event.kind == "Pod":
            if not (_group_of(event.obj) or _group_of(event.old)):
                return  # in no group before or after (most pods): no member to index, no group to reconcile
            new = None if event.type == "DELETED" else event.obj
            old = event.old if event.type != "DELETED" else event.obj
            groups = self._index(new, old)
        elif event.type == "DELETED":
            return
        else:
            meta = event.obj.get("metadata") or {}
            groups = {(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))}
        for ns, name in sorted(groups):
            self.reconcile(ns, name)

    def reconcile(self, namespace: str, name: str) -> None:
        try:
            group = self.cluster.get("PodGroup", namespace, name)
        except ApiError:
            return  # no such group (yet): its pods wait for it
        pods = list(self._members.get((namespace, name), {}).values())
        status = compute_status(group, pods)
        if status == group.get("status"):
            return
        group["status"] = status
        try:
            self.cluster.update(group)
        except ApiError as err:  # a conflict: the next event reconciles again
            log.info("updating PodGroup %s/%s status: %s", namespace, name, err)
