"""The unschedulable pool: pods rejected by plugins (or gated by PreEnqueue), waiting for an event.

Besides the pods themselves the pool keeps an index by rejecting plugin, so that an event only looks
at the pods whose rejectors registered interest in it (and those no plugin rejected, which every event
of interest moves): most events concern a few plugins, while the pool may hold thousands of pods.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from kubesched.queue.queued_pod_info import QueuedPodInfo

#: The index bucket of pods that no plugin rejected.
_NO_REJECTOR = ""
_NO_REJECTORS = frozenset((_NO_REJECTOR,))


class UnschedulablePods:
    """Pods by uid, in the order they entered, with a gated count and the by-plugin index."""

    __slots__ = ("_by_plugin", "_counter", "_gated", "_keys", "_pods", "_seq")

    def __init__(self) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self._gated: set[str] = set()
        self._seq: dict[str, int] = {}
        self._keys: dict[str, frozenset[str]] = {}
        self._by_plugin: dict[str, dict[str, None]] = {}
        self._counter = itertools.count()

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return iter(list(self._pods.values()))

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._pods.get(uid)

    def values(self) -> Iterable[QueuedPodInfo]:
        return self._pods.values()

    @property
    def gated_count(self) -> int:
        return len(self._gated)

    def is_gated(self, uid: str) -> bool:
        return uid in self._gated

    def put(self, qpi: QueuedPodInfo) -> None:
        """Add the pod, or refresh it (its gate and rejectors may have changed) keeping its place."""
        uid = qpi.pod.uid
        if uid not in self._pods:
            self._seq[uid] = next(self._counter)
        self._pods[uid] = qpi
        if qpi.gated:
            self._gated.add(uid)
        else:
            self._gated.discard(uid)
        keys = frozenset(qpi.unschedulable_plugins | qpi.pending_plugins) or _NO_REJECTORS
        if self._keys.get(uid) != keys:
            self._unindex(uid)
            self._keys[uid] = keys
            for key in keys:
                self._by_plugin.setdefault(key, {})[uid] = None

    def remove(self, uid: str) -> QueuedPodInfo | None:
        qpi = self._pods.pop(uid, None)
        if qpi is not None:
            self._gated.discard(uid)
            self._seq.pop(uid, None)
            self._unindex(uid)
            self._keys.pop(uid, None)
        return qpi

    def candidates(self, plugins: Iterable[str]) -> list[QueuedPodInfo]:
        """Pods some of ``plugins`` rejected, and pods no plugin rejected, in pool order."""
        uids: set[str] = set(self._by_plugin.get(_NO_REJECTOR, ()))
        for plugin in plugins:
            bucket = self._by_plugin.get(plugin)
            if bucket:
                uids.update(bucket)
        if len(uids) == len(self._pods):
            return list(self._pods.values())
        seq = self._seq
        return [self._pods[uid] for uid in sorted(uids, key=seq.__getitem__)]

    def _unindex(self, uid: str) -> None:
        for key in self._keys.get(uid, ()):
            bucket = self._by_plugin.get(key)
            if bucket is not None:
                bucket.pop(uid, None)
                if not bucket:
                    del self._by_plugin[key]
