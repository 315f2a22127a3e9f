"""``kubesched snapshot``: a live cluster's scheduling-relevant state, written as manifests simulate reads.

What a scheduling decision depends on is taken (nodes, pods, namespaces, PriorityClasses,
PodDisruptionBudgets, PersistentVolumes and claims, StorageClasses, CSINodes) and what the API server
manages is dropped: managedFields, resourceVersion, uid, selfLink, generation, the last-applied
annotation, every status the simulation recomputes. A pod keeps ``spec.nodeName`` and, of its status,
the phase and start time (preemption orders victims by it); a node keeps capacity, allocatable and
images; volumes and claims keep their phase (binding state). Finished pods (Succeeded, Failed) hold no
resources and are left out, and so are the PriorityClasses every API server creates itself.

The reader is anything with the cluster protocol's ``list`` (the embedded cluster, or
:class:`KubeconfigCluster` for a live one through the official Python client).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import yaml

from kubesched.embedded.admission import SYSTEM_PRIORITY_CLASSES

#: (file, kinds) in the order simulate must create them: namespaces and classes before what uses them.
SNAPSHOT_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("00-namespaces.yaml", ("Namespace",)),
    ("10-priorityclasses.yaml", ("PriorityClass",)),
    ("20-storage.yaml", ("StorageClass", "CSINode", "PersistentVolume")),
    ("30-nodes.yaml", ("Node",)),
    ("40-claims.yaml", ("PersistentVolumeClaim",)),
    ("50-disruptionbudgets.yaml", ("PodDisruptionBudget",)),
    ("60-pods.yaml", ("Pod",)),
)
SNAPSHOT_KINDS = tuple(kind for _, kinds in SNAPSHOT_FILES for kind in kinds)

_API_VERSIONS = {
    "Namespace": "v1", "Node": "v1", "Pod": "v1", "PersistentVolume": "v1", "PersistentVolumeClaim": "v1",
    "PriorityClass": "scheduling.k8s.io/v1", "StorageClass": "storage.k8s.io/v1", "CSINode": "storage.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
}
_SERVER_METADATA = ("managedFields", "resourceVersion", "uid", "selfLink", "generation", "deletionTimestamp",
                    "deletionGracePeriodSeconds")
_SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_SYSTEM_CLASSES = frozenset(name for name, _, _ in SYSTEM_PRIORITY_CLASSES)
_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Lister(Protocol):
    """The part of the cluster protocol a snapshot needs."""

    def list(self, kind: str, namespace: str | None = None) -> tuple[list[dict], str]: ...


def clean(obj: dict[str, Any]) -> dict[str, Any] | None:
    """``obj`` without server-managed fields, as a manifest; None for objects a snapshot leaves out."""
    kind = str(obj.get("kind"))
    out = copy.deepcopy(obj)
    out["apiVersion"] = out.get("apiVersion") or _API_VERSIONS.get(kind, "v1")
    meta = out.setdefault("metadata", {})
    for key in _SERVER_METADATA:
        meta.pop(key, None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _SERVER_ANNOTATIONS}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    status = out.pop("status", None) or {}
    if kind == "Pod":
        if status.get("phase") in ("Succeeded", "Failed"):
            return None
        kept = {k: status[k] for k in ("phase", "startTime") if status.get(k)}
        if kept and (out.get("spec") or {}).get("nodeName"):
            out["status"] = kept
    elif kind == "Node":
        kept = {k: status[k] for k in ("capacity", "allocatable", "images") if status.get(k)}
        if kept:
            out["status"] = kept
    elif kind in ("PersistentVolume", "PersistentVolumeClaim"):
        if status.get("phase"):
            out["status"] = {"phase": status["phase"]}
        claim_ref = (out.get("spec") or {}).get("claimRef")
        if isinstance(claim_ref, dict):  # the claim gets a new uid when the snapshot is loaded
            for key in ("uid", "resourceVersion"):
                claim_ref.pop(key, None)
    elif kind == "PriorityClass" and meta.get("name") in _SYSTEM_CLASSES:
        return None
    elif kind == "Namespace":
        out.pop("spec", None)
    return out


def take_snapshot(cluster: Lister, kinds: Iterable[str] = SNAPSHOT_KINDS) -> dict[str, list[dict[str, Any]]]:
    """kind -> cleaned objects, in the order the cluster lists them."""
    wanted = set(kinds)
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in SNAPSHOT_KINDS:
        if kind not in wanted:
            continue
        items, _ = cluster.list(kind)
        out[kind] = [c for c in (clean({**item, "kind": kind}) for item in items) if c is not None]
    return out


def write_snapshot(cluster: Lister, out_dir: str | Path) -> dict[str, int]:
    """Write the snapshot as numbered multi-document YAML files; returns how many objects of each kind."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    snapshot = take_snapshot(cluster)
    for filename, kinds in SNAPSHOT_FILES:
        objects = [obj for kind in kinds for obj in snapshot.get(kind, [])]
        with (directory / filename).open("w", encoding="utf-8") as out:
            yaml.dump_all(objects, out, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
    return {kind: len(objects) for kind, objects in snapshot.items()}


class KubeconfigCluster:
    """A read-only lister on a live cluster, through the official ``kubernetes`` client and a kubeconfig."""

    def __init__(self, kubeconfig: str | Path, context: str | None = None) -> None:
        from kubernetes import client, config

        api_client = config.new_client_from_config(config_file=str(kubeconfig), context=context)
        self._api = api_client
        core = client.CoreV1Api(api_client)
        storage = client.StorageV1Api(api_client)
        self._lists: dict[str, Callable[..., Any]] = {
            "Namespace": core.list_namespace,
            "Node": core.list_node,
            "Pod": core.list_pod_for_all_namespaces,
            "PersistentVolume": core.list_persistent_volume,
            "PersistentVolumeClaim": core.list_persistent_volume_claim_for_all_namespaces,
            "PriorityClass": client.SchedulingV1Api(api_client).list_priority_class,
            "StorageClass": storage.list_storage_class,
            "CSINode": storage.list_csi_node,
            "PodDisruptionBudget": client.PolicyV1Api(api_client).list_pod_disruption_budget_for_all_namespaces,
        }

    def list(self, kind: str, namespace: str | None = None) -> tuple[list[dict], str]:
        """Objects of ``kind`` as the API serves them (JSON dicts, not the client's model classes)."""
        response = self._lists[kind](_preload_content=False)
        import json

        body = json.loads(response.data)
        items = body.get("items") or []
        for item in items:
            item.setdefault("kind", kind)
            item.setdefault("apiVersion", _API_VERSIONS[kind])
        return items, str((body.get("metadata") or {}).get("resourceVersion") or "")
