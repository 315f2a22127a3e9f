"""The binder's assume cache: PVs and PVCs as the informers have them, overlaid with assumed versions.

Reserve records the binding it is about to make (a PV with its claimRef set, a claim annotated with
the selected node) before the API knows; later cycles then see those volumes as taken. An assumed
object is dropped as soon as the informer delivers a newer resourceVersion of it, and Unreserve
restores the API version.
"""

from __future__ import annotations

import threading
from typing import Any, Generic, TypeVar

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim

T = TypeVar("T", PersistentVolume, PersistentVolumeClaim)


def _rv(obj: Any) -> int:
    try:
        return int(obj.meta.resource_version or 0)
    except ValueError:
        return 0


class AssumeCache(Generic[T]):
    """Latest-known objects of one kind by key: the assumed version while the API one is not newer."""

    def __init__(self, listers: Any, kind: str) -> None:
        self._listers = listers
        self._kind = kind
        self._assumed: dict[str, T] = {}
        self._lock = threading.Lock()
        self._by_class: tuple[int, dict[str, list[PersistentVolume]]] | None = None

    def _api(self, key: str) -> T | None:
        found: T | None
        if self._kind == "PersistentVolume":
            found = self._listers.pv(key)
        else:
            namespace, _, name = key.partition("/")
            found = self._listers.pvc(namespace, name)
        return found

    def get_api(self, key: str) -> T | None:
        """The object as the informer has it (GetAPIPV / GetAPIPVC)."""
        return self._api(key)

    def get(self, key: str) -> T | None:
        """The latest object: the assumed one unless the informer has since seen a newer one."""
        api = self._api(key)
        with self._lock:
            assumed = self._assumed.get(key)
            if assumed is None:
                return api
            if api is None or _rv(api) > _rv(assumed):
                del self._assumed[key]
                return api
            return assumed

    def assume(self, obj: T) -> None:
        """Record ``obj`` as the latest version; it must not be older than the stored one."""
        key = obj.name if self._kind == "PersistentVolume" else obj.meta.key
        current = self.get(key)
        if current is None:
            raise KeyError(f"{self._kind} {key!r} not found in the assume cache")
        if _rv(obj) < _rv(current):
            raise ValueError(
                f"{self._kind} {key!r} is out of sync: assumed version {_rv(obj)} is older than {_rv(current)}"
            )
        with self._lock:
            self._assumed[key] = obj

    def restore(self, key: str) -> None:
        with self._lock:
            self._assumed.pop(key, None)

    def list_pvs(self, storage_class: str) -> list[PersistentVolume]:
        """ListPVs: the latest PVs of a class (PV cache only), indexed per storage change."""
        version = self._listers.storage_version
        cached = self._by_class
        if cached is None or cached[0] != version:
            index: dict[str, list[PersistentVolume]] = {}
            for pv in self._listers.pvs():
                index.setdefault(pv.storage_class, []).append(pv)
            cached = self._by_class = (version, index)
        pvs = cached[1].get(storage_class, [])
        with self._lock:
            if not self._assumed:
                return list(pvs)
        out: list[PersistentVolume] = []
        for p in pvs:
            latest = self.get(p.name)
            if isinstance(latest, PersistentVolume) and latest.storage_class == storage_class:
                out.append(latest)
        return out
