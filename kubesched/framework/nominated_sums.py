"""What the pods nominated to each node add, kept from one scheduling cycle to the next.

A pod is checked on a node as if the pods nominated there at equal or higher priority were already
running (kube-scheduler's RunFilterPluginsWithNominatedPods, and preemption's victim selection). When
the Filter verdicts are arithmetic, only the sums matter: how many such pods each node has and what they
request. Preemptors wait nominated by the hundred on a crowded cluster, and summing them node by node
for every cycle costs more than the cycle: the sums are kept per snapshot row for one priority, and
renewed only for the nodes whose nominations changed (the nominator's view keeps the very same tuple
for the others).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from weakref import WeakKeyDictionary

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.snapshot import Snapshot

#: Key of the nominated pods' count (a resource name keys what they request of it).
COUNT = ""


_KEPT: WeakKeyDictionary[object, NominatedSumsByPriority] = WeakKeyDictionary()


def kept_for(owner: object) -> NominatedSumsByPriority:
    """The sums ``owner`` (a profile's framework) keeps, made on first use and gone with it."""
    kept = _KEPT.get(owner)
    if kept is None:
        kept = _KEPT[owner] = NominatedSumsByPriority()
    return kept


class NominatedSumsByPriority:
    """:class:`NominatedSums` for the last few priorities asked for."""

    __slots__ = ("_sums",)

    def __init__(self) -> None:
        self._sums: dict[int, NominatedSums] = {}

    def at(self, priority: int) -> NominatedSums:
        sums = self._sums.get(priority)
        if sums is None:
            if len(self._sums) >= 4:  # pods of a few priorities at a time
                self._sums.pop(next(iter(self._sums)))
            sums = self._sums[priority] = NominatedSums(priority)
        return sums


class NominatedSums:
    """What the pods nominated to each snapshot row add for a pod of one priority (those at or above it):
    their count (key :data:`COUNT`) and requests by resource."""

    __slots__ = ("_layout", "_priority", "_seen", "_sums", "_view", "_where")

    def __init__(self, priority: int) -> None:
        self._priority = priority
        self._layout: tuple[int, int] | None = None
        #: The nominator's view the sums were last renewed from.
        self._view: Mapping[str, tuple[Pod, ...]] | None = None
        self._seen: dict[str, tuple[Pod, ...]] = {}
        self._sums: dict[str, np.ndarray] = {}
        #: uid -> (row, pod) of every nominated pod counted.
        self._where: dict[str, tuple[int, Pod]] = {}

    def gather(
        self, view: Mapping[str, tuple[Pod, ...]], snapshot: Snapshot, pod: Pod, rows: np.ndarray, name: str
    ) -> np.ndarray | None:
        """The sum for resource ``name`` on each of ``rows``, ``pod``'s own nomination left out; None when
        no counted pod asks for it."""
        self._renew(view, snapshot)
        column = self._sums.get(name)
        if column is None:
            return None
        out: np.ndarray = column[rows]
        own = self._where.get(pod.uid)
        if own is not None:
            row, nominated = own
            value = 1 if name == COUNT else nominated.requests.get(name, 0)
            out[rows == row] -= value
        return out

    def _renew(self, view: Mapping[str, tuple[Pod, ...]], snapshot: Snapshot) -> None:
        layout = (snapshot.layout_version, len(snapshot))
        if layout != self._layout:
            self._layout, self._seen, self._sums, self._where = layout, {}, {}, {}
        elif view is self._view:
            return  # the nominator hands out a new view after every change
        elif self._view is not None and (nodes := _changed(view, self._view)) is not None:
            self._view = view
            self._renew_nodes(view, snapshot, nodes)
            return
        self._view = view
        seen = self._seen
        for node, pods in view.items():
            old = seen.get(node)
            if old is not pods:
                self._count(snapshot, node, old or (), -1)
                self._count(snapshot, node, pods, +1)
                seen[node] = pods
        if len(seen) > len(view):
            for node in [node for node in seen if node not in view]:
                self._count(snapshot, node, seen.pop(node), -1)

    def _renew_nodes(self, view: Mapping[str, tuple[Pod, ...]], snapshot: Snapshot, nodes: Iterable[str]) -> None:
        """Renew the sums of ``nodes`` only (the others' entries are the ones last seen)."""
        seen = self._seen
        for node in nodes:
            old, pods = seen.get(node), view.get(node)
            if old is pods:
                continue
            if old is not None:
                self._count(snapshot, node, old, -1)
                del seen[node]
            if pods is not None:
                self._count(snapshot, node, pods, +1)
                seen[node] = pods

    def _count(self, snapshot: Snapshot, node: str, pods: Sequence[Pod], sign: int) -> None:
        row = snapshot.index.get(node)
        if row is None:
            return
        sums, n = self._sums, len(snapshot)
        for other in pods:
            if other.priority < self._priority:
                continue
            if sign > 0:
                self._where[other.uid] = (row, other)
            else:
                self._where.pop(other.uid, None)
            for name, value in ((COUNT, 1), *other.requests.items()):
                column = sums.get(name)
                if column is None:
                    column = sums[name] = np.zeros(n, dtype=np.int64)
                column[row] += sign * value


def _changed(view: Mapping[str, tuple[Pod, ...]], seen: Mapping[str, tuple[Pod, ...]]) -> set[str] | None:
    """The nodes whose entries differ between the view ``seen`` and ``view``, when the views tell."""
    changed_since = getattr(view, "changed_since", None)
    version = getattr(seen, "version", None)
    if changed_since is None or version is None:
        return None
    nodes: set[str] | None = changed_since(version)
    return nodes
