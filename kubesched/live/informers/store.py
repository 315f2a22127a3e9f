"""An informer's store: the last state of every object of one kind, keyed by namespace/name.

It turns what the API server says (a full list, or one watch event) into the changes the scheduler has
not seen yet. A relist is diffed against the store: objects it lacks become adds, objects whose
resourceVersion moved become updates (with the stored object as the old one), stored objects the list
no longer has become deletes (with their last known state). A watch event whose resourceVersion the store
already holds is a repeat and yields nothing, so no event is lost across a relist and none is applied twice.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Key = tuple[str, str]


def key_of(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _rv(obj: dict[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


@dataclass(frozen=True, slots=True)
class Delta:
    """One change to hand to the handlers: ``old`` is set for updates, ``obj`` is the last state on delete."""

    type: str  # ADDED | MODIFIED | DELETED
    obj: dict[str, Any]
    old: dict[str, Any] | None = None


class Store:
    """Thread-safe: the informer writes, listers and the scheduler read."""

    def __init__(self) -> None:
        self._items: dict[Key, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._synced = threading.Event()

    # -- writes (the informer) ------------------------------------------------------------------------
    def replace(self, items: Iterable[dict[str, Any]]) -> list[Delta]:
        """Make the store equal to a fresh list; the deltas that gets there. Marks the store synced."""
        listed = {key_of(obj): obj for obj in items}
        deltas: list[Delta] = []
        with self._lock:
            for key, old in list(self._items.items()):
                if key not in listed:
                    deltas.append(Delta("DELETED", old))
                    del self._items[key]
            for key, obj in listed.items():
                known = self._items.get(key)
                if known is None:
                    deltas.append(Delta("ADDED", obj))
                elif _uid(known) != _uid(obj):
                    # Deleted and recreated while we were not watching: both halves.
                    deltas.append(Delta("DELETED", known))
                    deltas.append(Delta("ADDED", obj))
                elif _rv(known) != _rv(obj):
                    deltas.append(Delta("MODIFIED", obj, known))
                self._items[key] = obj
        self._synced.set()
        return deltas

    def apply(self, event_type: str, obj: dict[str, Any]) -> list[Delta]:
        """One watch event; empty when the store has already seen it."""
        key = key_of(obj)
        with self._lock:
            old = self._items.get(key)
            if event_type == "DELETED":
                if old is None:
                    return []
                del self._items[key]
                return [Delta("DELETED", obj)]
            if old is not None and _rv(old) == _rv(obj) and _uid(old) == _uid(obj):
                return []
            self._items[key] = obj
            if old is None:
                return [Delta("ADDED", obj)]
            if _uid(old) != _uid(obj):
                return [Delta("DELETED", old), Delta("ADDED", obj)]
            return [Delta("MODIFIED", obj, old)]

    # -- reads ----------------------------------------------------------------------------------------
    def get(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._items.get((namespace or "", name))

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [obj for (ns, _), obj in self._items.items() if namespace is None or ns == namespace]

    def __len__(self) -> int:
        return len(self._items)

    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)


def _uid(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")
