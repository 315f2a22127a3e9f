"""``kubesched snapshot``: a live cluster's scheduling-relevant state, written as manifests simulate reads.

What a scheduling decision depends on is taken (nodes, pods, namespaces, PriorityClasses,
PodDisruptionBudgets, PersistentVolumes and claims, StorageClasses, CSINodes, and the DRA objects:
DeviceClasses, ResourceSlices, ResourceClaimTemplates, ResourceClaims) and what the API server
manages is dropped: managedFields, resourceVersion, uid, selfLink, generation, the last-applied
annotation, every status the simulation recomputes. A pod keeps ``spec.nodeName`` and, of its status,
the phase and start time (preemption orders victims by it) and the names of the claims made for it from
templates; a node keeps capacity, allocatable and images; volumes and claims keep their phase (binding
state); a ResourceClaim keeps its allocation (the devices it holds), not its reservations, which name
pods by uids the loaded pods do not keep. Finished pods (Succeeded, Failed) hold no resources and are
left out, and so are the PriorityClasses every API server creates itself. A cluster that serves no
``resource.k8s.io/v1`` (before Kubernetes 1.34) has no DRA objects to take.

The reader is anything with the cluster protocol's ``list``: the embedded cluster, or, for the command,
the live cluster through the same client as ``kubesched run`` (connection settings found as kubectl finds
them, one paged list per kind).
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol, TextIO

import yaml

from kubesched.app.cli import EXIT_OK
from kubesched.cluster.kinds import KNOWN_KINDS
from kubesched.cluster.protocol import ApiError
from kubesched.embedded.admission import SYSTEM_PRIORITY_CLASSES
from kubesched.util.extras import require_extra

#: (file, kinds) in the order simulate must create them: namespaces and classes before what uses them.
SNAPSHOT_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("00-namespaces.yaml", ("Namespace",)),
    ("10-priorityclasses.yaml", ("PriorityClass",)),
    ("20-storage.yaml", ("StorageClass", "CSINode", "PersistentVolume")),
    ("25-devices.yaml", ("DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim")),
    ("30-nodes.yaml", ("Node",)),
    ("40-claims.yaml", ("PersistentVolumeClaim",)),
    ("50-disruptionbudgets.yaml", ("PodDisruptionBudget",)),
    ("60-pods.yaml", ("Pod",)),
)
SNAPSHOT_KINDS = tuple(kind for _, kinds in SNAPSHOT_FILES for kind in kinds)
#: Kinds an older API server may not serve (404): the snapshot then has none of them.
OPTIONAL_KINDS = frozenset(("DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim"))

_SERVER_METADATA = ("managedFields", "resourceVersion", "uid", "selfLink", "generation", "deletionTimestamp",
                    "deletionGracePeriodSeconds")
_SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_SYSTEM_CLASSES = frozenset(name for name, _, _ in SYSTEM_PRIORITY_CLASSES)
_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Lister(Protocol):
    """The part of the cluster protocol a snapshot needs."""

    def list(self, kind: str, namespace: str | None = None) -> tuple[list[dict[str, Any]], str]: ...


def clean(obj: dict[str, Any]) -> dict[str, Any] | None:
    """``obj`` without server-managed fields, as a manifest; None for objects a snapshot leaves out."""
    kind = str(obj.get("kind"))
    out = copy.deepcopy(obj)
    known = KNOWN_KINDS.get(kind)
    out["apiVersion"] = out.get("apiVersion") or (known.preferred_api_version if known else "v1")
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
        if not (out.get("spec") or {}).get("nodeName"):
            kept = {}
        if status.get("resourceClaimStatuses"):
            kept["resourceClaimStatuses"] = status["resourceClaimStatuses"]
        if kept:
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
    elif kind == "ResourceClaim":
        if status.get("allocation"):
            out["status"] = {"allocation": status["allocation"]}
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
        try:
            items, _ = cluster.list(kind)
        except ApiError as error:
            if kind in OPTIONAL_KINDS and error.code == 404:
                continue
            raise
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


class SnapshotError(ValueError):
    """The live cluster could not be read (unreachable, or the credentials may not list a kind)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("List nodes, pods, namespaces, PriorityClasses, PodDisruptionBudgets, PersistentVolumes, "
                          "claims, StorageClasses, CSINodes and DRA objects (DeviceClasses, ResourceSlices, "
                          "ResourceClaims and their templates) of a live cluster and write them, without "
                          "server-managed fields, as manifests that simulate reads.")
    parser.add_argument("--kubeconfig", metavar="FILE", default="",
                        help="kubeconfig of the cluster to read (default: $KUBECONFIG, ~/.kube/config, then the "
                             "in-cluster service account, as kubectl)")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")
    parser.add_argument("-o", "--output-dir", required=True, metavar="DIR", help="folder to write the manifests to")


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    require_extra("live", "kubesched snapshot", ("kubernetes", "urllib3"))
    from kubesched.live.cluster import KubeCluster
    from kubesched.live.connection import ConnectionOptions, RestClient

    rest = RestClient(ConnectionOptions(kubeconfig=args.kubeconfig, context=args.context))
    try:
        counts = write_snapshot(KubeCluster(rest), args.output_dir)
    except ApiError as error:  # unreachable, or not allowed to list a kind
        raise SnapshotError(f"{rest.host}: {error.reason}: {error.message}") from None
    finally:
        rest.close()
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"Snapshot written to {args.output_dir}: {summary}", file=out)
    return EXIT_OK
