"""Storage objects and a small plugin handle for the volume plugins' tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.cache.snapshot import Snapshot
from kubesched.cluster.listers import Listers
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.framework.interfaces import BatchFilterResult
from kubesched.framework.status import Status

HOSTNAME = "kubernetes.io/hostname"


def sc_dict(
    name: str,
    *,
    provisioner: str = "ebs.csi.aws.com",
    mode: str | None = "WaitForFirstConsumer",
    topologies: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "resourceVersion": "1"},
        "provisioner": provisioner,
    }
    if mode is not None:
        out["volumeBindingMode"] = mode
    if topologies is not None:
        out["allowedTopologies"] = topologies
    return out


def pv_dict(
    name: str,
    *,
    size: str = "10Gi",
    sc: str = "",
    modes: Iterable[str] = ("ReadWriteOnce",),
    claim: tuple[str, str] | None = None,
    claim_uid: str = "",
    hosts: Iterable[str] = (),
    labels: Mapping[str, str] | None = None,
    phase: str = "Available",
    source: Mapping[str, Any] | None = None,
    volume_mode: str = "Filesystem",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": list(modes),
        "storageClassName": sc,
        "volumeMode": volume_mode,
    }
    spec.update(source or {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"h-{name}"}})
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1], "uid": claim_uid}
    hosts = list(hosts)
    if hosts:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": hosts}]}]
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": dict(labels or {}), "resourceVersion": "1"},
        "spec": spec,
        "status": {"phase": phase},
    }


def pvc_dict(
    name: str,
    *,
    namespace: str = "default",
    size: str = "10Gi",
    sc: str | None = "",
    modes: Iterable[str] = ("ReadWriteOnce",),
    volume: str = "",
    bound: bool = False,
    annotations: Mapping[str, str] | None = None,
    uid: str = "",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": list(modes),
        "resources": {"requests": {"storage": size}},
        "volumeMode": "Filesystem",
    }
    if sc is not None:
        spec["storageClassName"] = sc
    if volume:
        spec["volumeName"] = volume
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": ann,
            "uid": uid or f"uid-{name}",
            "resourceVersion": "1",
        },
        "spec": spec,
        "status": {"phase": "Bound" if bound else "Pending"},
    }


def csinode_dict(name: str, *, drivers: Mapping[str, int | None] | None = None, migrated: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name, "annotations": {}},
        "spec": {
            "drivers": [
                {"name": d, "nodeID": name, **({"allocatable": {"count": c}} if c is not None else {})}
                for d, c in (drivers or {}).items()
            ]
        },
    }
    if migrated:
        out["metadata"]["annotations"]["storage.alpha.kubernetes.io/migrated-plugins"] = migrated
    return out


def va_dict(name: str, *, attacher: str = "ebs.csi.aws.com", node: str = "n", pv: str | None = None) -> dict[str, Any]:
    source: dict[str, Any] = {"persistentVolumeName": pv} if pv is not None else {"inlineVolumeSpec": {}}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": {"attacher": attacher, "nodeName": node, "source": source},
    }


def claim_volume(claim: str, name: str = "vol") -> dict[str, Any]:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


@dataclass
class Handle:
    """What the volume plugins use of the framework handle."""

    listers: Listers = field(default_factory=Listers)
    snapshot: Snapshot = field(default_factory=Snapshot)
    cluster: Any = None
    timers: list[tuple[float, Any]] = field(default_factory=list)
    features: FeatureGates = field(default_factory=feature_gates)

    def call_later(self, delay: float, callback: Any) -> None:
        self.timers.append((delay, callback))

    def add(self, *objs: dict[str, Any]) -> Handle:
        for obj in objs:
            self.listers.apply("ADDED", obj["kind"], obj)
        return self


def batch_status(result: BatchFilterResult, k: int) -> Status | None:
    i = int(result.status_index[k])
    return None if i < 0 else result.statuses[i]


def rows(n: int) -> np.ndarray:
    return np.arange(n)
