"""The StatefulSet controller: pods with stable ordinal names, each with its own claims.

Pod ``<set>-<ordinal>`` (ordinals from ``spec.ordinals.start``) carries the labels
``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``, hostname and subdomain,
and for every ``volumeClaimTemplates`` entry a PersistentVolumeClaim ``<template>-<set>-<ordinal>``
that is created before the pod and mounted as the template's volume, as the StatefulSet controller
does. Claims outlive their pods and the set (the default retention policy, Retain; the Delete policy
is not modelled).

``podManagementPolicy: OrderedReady`` (the default) creates the next pod only once every pod before it
is running and ready, which in a simulation without kubelets means bound; it removes pods from the
highest ordinal down, one at a time. ``Parallel`` creates and removes them all at once. A template
change replaces pods from the highest ordinal down, one at a time once all run (RollingUpdate above
``partition``; OnDelete leaves them).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kubesched.embedded.workloads.common import (
    CONTROLLER_REVISION_HASH_LABEL,
    compute_hash,
    int_field,
    is_active,
    is_bound,
    meta,
    pod_from_template,
    spec,
)

if TYPE_CHECKING:
    from kubesched.embedded.workloads.manager import ControllerManager

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def claim_name(template_name: str, set_name: str, ordinal: int) -> str:
    return f"{template_name}-{set_name}-{ordinal}"


class StatefulSetController:
    kind = "StatefulSet"

    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager

    def sync(self, namespace: str, name: str) -> None:
        sts = self.manager.get("StatefulSet", namespace, name)
        if sts is None or meta(sts).get("deletionTimestamp"):
            return
        s = spec(sts)
        replicas = int_field(s.get("replicas"), 1)
        start = int_field((s.get("ordinals") or {}).get("start"), 0)
        parallel = s.get("podManagementPolicy") == "Parallel"
        pods = {p["metadata"]["name"]: p for p in self.manager.owned(sts, "Pod")}
        wanted = [f"{name}-{start + i}" for i in range(replicas)]
        revision = f"{name}-{compute_hash(s.get('template') or {})}"
        for i, pod_name in enumerate(wanted):
            pod = pods.get(pod_name)
            if pod is not None and is_active(pod):
                if not parallel and not is_bound(pod):
                    break  # OrderedReady: wait for this one before the next
                continue
            if pod is not None:
                # A finished pod of a set is replaced, as the controller does for Failed/Succeeded pods.
                self.manager.delete(pod)
            created = self._create_pod(sts, start + i, revision)
            if created is None or not parallel:
                break
        surplus = sorted((p for n, p in pods.items() if n not in wanted), key=lambda p: -_ordinal(p, name))
        for pod in surplus if parallel else surplus[:1]:
            self.manager.delete(pod)
        if not surplus:
            self._roll(sts, pods, wanted, revision, start)
        self._update_status(sts)

    def _roll(
        self, sts: dict[str, Any], pods: dict[str, dict[str, Any]], wanted: list[str], revision: str, start: int
    ) -> None:
        """RollingUpdate: once every pod runs, delete the highest-ordinal pod of an older template (at
        or above ``partition``); the next sync recreates it from the current template."""
        strategy = spec(sts).get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            return
        current = [self.manager.get("Pod", str(meta(sts).get("namespace")), n) for n in wanted]
        if not all(p is not None and is_bound(p) for p in current):
            return
        partition = int_field((strategy.get("rollingUpdate") or {}).get("partition"), 0)
        for ordinal in range(start + len(wanted) - 1, start + partition - 1, -1):
            pod = pods.get(f"{meta(sts).get('name')}-{ordinal}")
            if pod is not None and (meta(pod).get("labels") or {}).get(CONTROLLER_REVISION_HASH_LABEL) != revision:
                self.manager.delete(pod)
                self.manager.sync("StatefulSet", (str(meta(sts).get("namespace")), str(meta(sts).get("name"))))
                return

    def _create_pod(self, sts: dict[str, Any], ordinal: int, revision: str) -> dict[str, Any] | None:
        namespace, set_name = str(meta(sts).get("namespace")), str(meta(sts).get("name"))
        pod_name = f"{set_name}-{ordinal}"
        pod = pod_from_template(
            sts,
            spec(sts).get("template") or {},
            name=pod_name,
            generate_name=f"{set_name}-",
            extra_labels={
                POD_NAME_LABEL: pod_name,
                POD_INDEX_LABEL: str(ordinal),
                CONTROLLER_REVISION_HASH_LABEL: revision,
            },
        )
        pod_spec = pod["spec"]
        pod_spec["hostname"] = pod_name
        if spec(sts).get("serviceName"):
            pod_spec["subdomain"] = spec(sts)["serviceName"]
        volumes = [v for v in pod_spec.get("volumes") or [] if isinstance(v, dict)]
        for template in spec(sts).get("volumeClaimTemplates") or []:
            tname = str((template.get("metadata") or {}).get("name") or "")
            claim = claim_name(tname, set_name, ordinal)
            if not self.manager.exists("PersistentVolumeClaim", namespace, claim):
                self._create_claim(sts, template, claim)
            volumes = [v for v in volumes if v.get("name") != tname]
            volumes.append({"name": tname, "persistentVolumeClaim": {"claimName": claim}})
        if volumes:
            pod_spec["volumes"] = volumes
        return self.manager.create(pod)

    def _create_claim(self, sts: dict[str, Any], template: dict[str, Any], claim: str) -> None:
        """getPersistentVolumeClaims: the template with the set's selector labels, in the set's namespace."""
        tmeta = template.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        labels.update((spec(sts).get("selector") or {}).get("matchLabels") or {})
        obj: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": meta(sts).get("namespace"), "labels": labels},
            "spec": copy.deepcopy(template.get("spec") or {}),
        }
        if tmeta.get("annotations"):
            obj["metadata"]["annotations"] = dict(tmeta["annotations"])
        self.manager.create(obj)

    def _update_status(self, sts: dict[str, Any]) -> None:
        pods = [p for p in self.manager.owned(sts, "Pod") if is_active(p)]
        ready = sum(1 for p in pods if is_bound(p))
        status = {
            "observedGeneration": meta(sts).get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "currentReplicas": len(pods),
        }
        current = sts.get("status") or {}
        if {k: current.get(k) for k in status} != status:
            self.manager.update({**sts, "status": {**current, **status}})


def _ordinal(pod: dict[str, Any], set_name: str) -> int:
    suffix = str(meta(pod).get("name"))[len(set_name) + 1 :]
    return int(suffix) if suffix.isdigit() else -1
