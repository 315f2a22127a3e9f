"""Listers: the scheduler's watched copy of the objects plugins look up by name.

kube-scheduler hands plugins informer listers (namespaces for pod affinity's namespace selectors;
services, replication controllers, replica sets and stateful sets for PodTopologySpread's default
constraints; PodDisruptionBudgets for preemption). :class:`Listers` is that store here: the scheduler
feeds it watch events, plugins read it through ``handle.listers``. Reads never reach the API server.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api.labels import LabelSelector
from kubesched.api.objects import Namespace
from kubesched.api.validation import validate_object

#: Kinds plugins read through listers (besides nodes and pods, which live in the cache).
LISTED_KINDS = ("Namespace", "Service", "ReplicationController", "ReplicaSet", "StatefulSet",
                "PodDisruptionBudget")


class Listers:
    """Raw objects by kind and namespace/name, plus parsed namespaces (labels for selectors)."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {k: {} for k in LISTED_KINDS}
        self._namespaces: dict[str, Namespace] = {}
        self._lock = threading.Lock()

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
        with self._lock:
            store = self._objects.setdefault(kind, {})
            if event_type == "DELETED":
                store.pop(key, None)
                if namespace is not None:
                    self._namespaces.pop(namespace.name, None)
            else:
                store[key] = obj
                if namespace is not None:
                    self._namespaces[namespace.name] = namespace

    # -- read by plugins --------------------------------------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self._objects.get(kind, {}).get((namespace, name))

    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """Objects of ``kind`` (in ``namespace``, or all), in the order they were first seen."""
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

