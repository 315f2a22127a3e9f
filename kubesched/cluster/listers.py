"""Listers: the scheduler's watched copy of the objects plugins look up by name.

kube-scheduler hands plugins informer listers (namespaces for pod affinity's namespace selectors;
services, replication controllers, replica sets and stateful sets for PodTopologySpread's default
constraints; PodDisruptionBudgets for preemption; persistent volumes, claims, storage classes, CSI
nodes and drivers, and (from v1.34) volume attachments for the volume plugins). :class:`Listers`
is that store here: the scheduler feeds it watch events, plugins read it through ``handle.listers``.
Reads never reach the API server.

Storage objects are kept parsed (typed views from :mod:`kubesched.api.storage`), since the volume
plugins read them in every cycle of a pod with volumes; ``storage_version`` moves with every storage
change, for the plugins' derived caches. DRA objects (DeviceClasses, ResourceSlices, ResourceClaims and
their templates, :mod:`kubesched.api.dra`) are kept parsed likewise, with ``dra_version``; they are not
among the kinds always watched: the scheduler watches them when DynamicResources registers events for
them (only where DRA is on, as kube-scheduler starts those informers only then).

Derived state that every profile must share (DynamicResources' claim tracker, which is kube-scheduler's
assume cache of ResourceClaims) hangs off the listers: :meth:`Listers.derived` makes it once, and
:meth:`Listers.add_view_handler` tells it of every change of a parsed kind, old and new view, as an
informer's event handlers are told.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kubesched.api.labels import LabelSelector
from kubesched.api.objects import Namespace
from kubesched.api.storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from kubesched.api.validation import validate_object
from kubesched.config.features import FeatureGates

#: Storage kinds and their parsed views.
STORAGE_VIEWS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "PersistentVolume": PersistentVolume.from_dict,
    "PersistentVolumeClaim": PersistentVolumeClaim.from_dict,
    "StorageClass": StorageClass.from_dict,
    "CSINode": CSINode.from_dict,
    "CSIDriver": CSIDriver.from_dict,
    "VolumeAttachment": VolumeAttachment.from_dict,
}
STORAGE_KINDS = tuple(STORAGE_VIEWS)

#: DRA kinds and their parsed views.
DRA_VIEWS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "DeviceClass": DeviceClass.from_dict,
    "ResourceSlice": ResourceSlice.from_dict,
    "ResourceClaim": ResourceClaim.from_dict,
    "ResourceClaimTemplate": ResourceClaimTemplate.from_dict,
}
DRA_KINDS = tuple(DRA_VIEWS)
_VIEWS = {**STORAGE_VIEWS, **DRA_VIEWS}

#: Kinds plugins read through listers (besides nodes and pods, which live in the cache).
LISTED_KINDS = (
    "Namespace",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "PodDisruptionBudget",
    *STORAGE_KINDS,
    "CSIStorageCapacity",
)
#: Listed kinds a version's kube-scheduler does not watch yet (and whose read its RBAC role may lack).
LISTED_SINCE: Mapping[str, str] = {"VolumeAttachment": "1.34"}


T = TypeVar("T")
#: ``handler(old, new)``: the parsed views before and after a change (None for an addition / a deletion).
ViewHandler = Callable[[Any, Any], None]


def listed_kinds(features: FeatureGates) -> tuple[str, ...]:
    """The listed kinds the scheduler watches when emulating ``features.version``."""
    return tuple(k for k in LISTED_KINDS if features.at_least(LISTED_SINCE.get(k, features.version)))


class Listers:
    """Raw objects by kind and namespace/name, plus parsed namespaces (labels for selectors)."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {k: {} for k in LISTED_KINDS}
        self._namespaces: dict[str, Namespace] = {}
        self._views: dict[str, dict[tuple[str, str], Any]] = {k: {} for k in _VIEWS}
        #: Bumped on every storage change: plugins key derived per-node caches on it.
        self.storage_version = 0
        #: Bumped on every DRA change (slices, classes, claims, templates), likewise.
        self.dra_version = 0
        self._lock = threading.Lock()
        self._handlers: dict[str, list[ViewHandler]] = {}
        self._derived: dict[str, Any] = {}
        self._derived_lock = threading.Lock()

    # -- fed by the scheduler's watch -----------------------------------------------------------------
    def apply(self, event_type: str, kind: str, obj: Mapping[str, Any]) -> None:
        """Record one watch event; a malformed object raises ObjectError and changes nothing.

        Plugins read these objects' fields directly (a Service's ``spec.selector``), so their types
        are checked here, once, rather than by every reader.
        """
        if event_type != "DELETED":
            validate_object(obj)
        meta = obj.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        namespace = Namespace.from_dict(obj) if kind == "Namespace" else None
        parse = _VIEWS.get(kind)
        view = parse(obj) if parse is not None and event_type != "DELETED" else None
        old_view = None
        with self._lock:
            if parse is not None:
                views = self._views[kind]
                old_view = views.get(key)
                if view is not None:
                    views[key] = view
                else:
                    views.pop(key, None)
                if kind in DRA_VIEWS:
                    self.dra_version += 1
                else:
                    self.storage_version += 1
            store = self._objects.setdefault(kind, {})
            if event_type == "DELETED":
                store.pop(key, None)
                if namespace is not None:
                    self._namespaces.pop(namespace.name, None)
            else:
                store[key] = obj
                if namespace is not None:
                    self._namespaces[namespace.name] = namespace
        if parse is not None and (old_view is not None or view is not None):
            for handler in self._handlers.get(kind, ()):
                handler(old_view, view)

    def add_view_handler(self, kind: str, handler: ViewHandler) -> None:
        """Call ``handler(old, new)`` after every later change of the parsed ``kind`` (storage or DRA)."""
        if kind not in _VIEWS:
            raise ValueError(f"{kind} is not kept parsed: no view handler can be added for it")
        with self._lock:
            self._handlers.setdefault(kind, []).append(handler)

    def derived(self, name: str, make: Callable[[], T]) -> T:
        """The object kept under ``name``, made by ``make()`` the first time: state derived from these
        objects that every profile shares."""
        with self._derived_lock:  # one maker at a time; make() may add view handlers
            found = self._derived.get(name)
            if found is None:
                found = self._derived[name] = make()
            return found

    # -- read by plugins --------------------------------------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self._objects.get(kind, {}).get((namespace, name))

    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """Objects of ``kind`` (in ``namespace``, or all), in the order they were first seen."""
        if not self._objects.get(kind):  # none at all (a cluster without Services, asked on every PreScore)
            return []
        with self._lock:
            items = list(self._objects.get(kind, {}).items())
        return [obj for (ns, _), obj in items if namespace is None or ns == namespace]

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """Labels of namespace ``name``; None when it is not known."""
        ns = self._namespaces.get(name)
        return None if ns is None else ns.labels

    def namespaces_matching(self, selector: LabelSelector | None) -> Iterable[str]:
        """Names of the namespaces whose labels ``selector`` picks (None picks none)."""
        if selector is None:
            return []
        with self._lock:
            namespaces = list(self._namespaces.values())
        return [ns.name for ns in namespaces if selector.matches(ns.labels)]

    # -- storage (parsed views) ------------------------------------------------------------------------
    def pv(self, name: str) -> PersistentVolume | None:
        return self._views["PersistentVolume"].get(("", name))

    def pvs(self) -> builtins.list[PersistentVolume]:
        with self._lock:
            return list(self._views["PersistentVolume"].values())

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._views["PersistentVolumeClaim"].get((namespace, name))

    def storage_class(self, name: str) -> StorageClass | None:
        return self._views["StorageClass"].get(("", name))

    def csi_node(self, name: str) -> CSINode | None:
        return self._views["CSINode"].get(("", name))

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self._views["CSIDriver"].get(("", name))

    def volume_attachments(self) -> builtins.list[VolumeAttachment]:
        with self._lock:
            return list(self._views["VolumeAttachment"].values())

    # -- DRA (parsed views) ---------------------------------------------------------------------------
    def device_class(self, name: str) -> DeviceClass | None:
        return self._views["DeviceClass"].get(("", name))

    def device_classes(self) -> builtins.list[DeviceClass]:
        with self._lock:
            return list(self._views["DeviceClass"].values())

    def resource_slices(self) -> builtins.list[ResourceSlice]:
        with self._lock:
            return list(self._views["ResourceSlice"].values())

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self._views["ResourceClaim"].get((namespace, name))

    def resource_claims(self) -> builtins.list[ResourceClaim]:
        with self._lock:
            return list(self._views["ResourceClaim"].values())

    def resource_claim_template(self, namespace: str, name: str) -> ResourceClaimTemplate | None:
        return self._views["ResourceClaimTemplate"].get((namespace, name))
