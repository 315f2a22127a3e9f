"""A live cluster as a scenario: its scheduling state read once, read-only, and fed to the pipeline.

What a scheduling decision depends on is taken (nodes, pods, namespaces, Services, PriorityClasses,
PodDisruptionBudgets, PersistentVolumes and claims, StorageClasses, CSINodes, and the DRA objects:
DeviceClasses, ResourceSlices, ResourceClaimTemplates, ResourceClaims) and what the API server manages
is dropped: managedFields, resourceVersion, uid, selfLink, generation, the last-applied annotation,
every status the simulation recomputes. A pod keeps ``spec.nodeName`` and, of its status, the phase and
start time (preemption orders victims by it) and the names of the claims made for it from templates; a
node keeps capacity, allocatable and images; volumes and claims keep their phase (binding state); a
ResourceClaim keeps its allocation (the devices it holds), not its reservations, which name pods by uids
the loaded pods do not keep. Finished pods (Succeeded, Failed) hold no resources and are left out, and
so are the PriorityClasses every API server creates itself. A cluster that serves no
``resource.k8s.io/v1`` (before Kubernetes 1.34) has no DRA objects to take.

Each kind is one list (paged with continue tokens, so every page belongs to the same resourceVersion:
one consistent view per kind), and nothing is watched or written: ``list`` on those resources is all
the credentials need (``deploy/whatif-rbac.yaml``). Workloads (Deployments, ReplicaSets, StatefulSets,
DaemonSets, Jobs) are not read: the simulation would run their controllers, which would create pods
again beside the ones the cluster already has. Their pods are read as they are, bound or pending.

:class:`LiveSource` goes into :func:`~kubesched.scenario.pipeline.load_scenario` beside paths and
dicts; its objects pass the same checks as a file's, and errors name the cluster
(``cluster https://…: document 12 (Pod web/api-0): …``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesched.cluster.kinds import KNOWN_KINDS
from kubesched.cluster.protocol import ApiError
from kubesched.embedded.admission import SYSTEM_PRIORITY_CLASSES

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
#: What a live scenario reads: the snapshot's kinds, and Services (default spreading selects by them).
LIVE_KINDS = (*SNAPSHOT_KINDS[:-1], "Service", "Pod")

_SERVER_METADATA = (
    "managedFields",
    "resourceVersion",
    "uid",
    "selfLink",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
_SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_SYSTEM_CLASSES = frozenset(name for name, _, _ in SYSTEM_PRIORITY_CLASSES)


class Lister(Protocol):
    """The part of the cluster protocol a read needs."""

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
    """kind -> cleaned objects, in the order the cluster lists them: one list per kind, in ``kinds``'
    order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in dict.fromkeys(kinds):
        try:
            items, _ = cluster.list(kind)
        except ApiError as error:
            if kind in OPTIONAL_KINDS and error.code == 404:
                continue
            raise
        out[kind] = [c for c in (clean({**item, "kind": kind}) for item in items) if c is not None]
    return out


class LiveReadError(ValueError):
    """The live cluster could not be read (unreachable, or the credentials may not list a kind)."""


@dataclass
class LiveSource:
    """A live cluster to read as a scenario: connection settings found as kubectl finds them (an
    explicit kubeconfig, ``$KUBECONFIG``, ``~/.kube/config``, then the in-cluster service account).

    The cluster is read once, at the first :meth:`objects` call; later calls return the same objects,
    so every simulation a command runs (a plan's, explain's checks) sees one view."""

    kubeconfig: str = ""
    context: str | None = None
    kinds: tuple[str, ...] = LIVE_KINDS
    #: Where the objects came from (``cluster https://host:port``), once read.
    name: str = "cluster"
    _objects: list[dict[str, Any]] | None = field(default=None, repr=False)

    def objects(self) -> list[dict[str, Any]]:
        """The cluster's objects as manifests, in ``kinds`` order (read on the first call)."""
        if self._objects is None:
            self._objects = self._read()
        return self._objects

    def _read(self) -> list[dict[str, Any]]:
        from kubesched.util.extras import require_extra

        require_extra("live", "reading a live cluster", ("kubernetes", "urllib3"))
        from kubesched.live.cluster import list_all
        from kubesched.live.connection import ConnectionOptions, RestClient

        rest = RestClient(ConnectionOptions(kubeconfig=self.kubeconfig, context=self.context))
        self.name = f"cluster {rest.host}"
        try:
            snapshot = take_snapshot(_RestLister(rest, list_all), self.kinds)
        except ApiError as error:  # unreachable, or not allowed to list a kind
            raise LiveReadError(f"{rest.host}: {error.reason}: {error.message}") from None
        finally:
            rest.close()
        return [obj for kind in self.kinds for obj in snapshot.get(kind, [])]


class _RestLister:
    """``list`` over a REST client: every page of one list, at the resourceVersion of its first page."""

    def __init__(self, rest: Any, list_all: Any) -> None:
        self.rest = rest
        self.list_all = list_all

    def list(self, kind: str, namespace: str | None = None) -> tuple[list[dict[str, Any]], str]:
        items, version = self.list_all(self.rest, kind, namespace)
        return items, version
