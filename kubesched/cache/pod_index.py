"""Indexes over the pods a snapshot holds, so inter-pod plugins never walk every pod.

PodTopologySpread and InterPodAffinity ask two questions each cycle: "which assigned pods does this
selector pick, and on which nodes are they?" and "which existing pods carry a term that picks the
incoming pod?". Walking every pod of the cluster per cycle is what makes kube-scheduler slow on
these plugins. Instead the snapshot keeps

* :class:`PodLabelIndex`: pods by namespace and by (namespace, label key, label value), each with
  the snapshot row of its node, so a selector costs as much as the pods it can match; and
* :class:`AffinityTermIndex`: the (anti-)affinity terms of existing pods, identical terms merged,
  each with how many pods carry it per node row, so the symmetric checks cost as much as the
  distinct terms in the cluster.

Both are updated by the snapshot, node by node, as the cache reports changed nodes (pods assumed,
bound, updated or deleted). Rows are positions in ``Snapshot.node_infos``, and a joining node usually
lands mid-list (zones are interleaved), shifting later rows. So the indexes file pods under a node's
*slot*, a number that stays while the node does, and turn slots into rows through :class:`NodeSlots`,
which the snapshot rewrites with NumPy when rows move: a node joining a cluster of 15,000 pods costs
O(nodes), not a renumbering of every pod. The indexes are rebuilt when a node leaves.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from kubesched.api.labels import EXISTS, IN, LabelRequirement, LabelSelector
from kubesched.api.objects import Pod
from kubesched.api.pod_affinity import PodAffinityTerm

_EMPTY_ROWS = np.zeros(0, dtype=np.int64)


def _slots_array(members: dict[str, int]) -> np.ndarray:
    return np.fromiter(members.values(), dtype=np.int64, count=len(members))


class NodeSlots:
    """Slot <-> row for the snapshot's nodes. Slots equal rows until rows first move (and again after
    :meth:`reset`); :meth:`move` then gives joining nodes new slots and keeps the others'.

    The maps are arrays (rewritten with NumPy on a move); one-at-a-time lookups read lists made from
    them on first use, as a move happens far more often than most of its rows are looked up."""

    def __init__(self) -> None:
        self._identity = True
        self._slot_of_row = _EMPTY_ROWS
        self._row_of_slot = _EMPTY_ROWS
        self._slot_list: list[int] | None = None
        self._row_list: list[int] | None = None

    def reset(self) -> None:
        """Rows were numbered afresh (slot = row again)."""
        self.__init__()  # type: ignore[misc]

    def move(self, old_rows: np.ndarray) -> None:
        """Rows were rearranged: new row ``i`` holds old row ``old_rows[i]`` (-1 for a joining node)."""
        n = len(old_rows)
        kept = old_rows >= 0
        if self._identity and np.array_equal(old_rows[kept], np.flatnonzero(kept)):
            return  # nodes joined after the last row only: slots still equal rows
        new_slots = np.empty(n, dtype=np.int64)
        new_slots[kept] = old_rows[kept] if self._identity else self._slot_of_row[old_rows[kept]]
        first = max(int(new_slots[kept].max()) + 1 if kept.any() else 0, len(self._row_of_slot))
        joining = n - int(np.count_nonzero(kept))
        new_slots[~kept] = np.arange(first, first + joining)
        row_of_slot = np.full(first + joining, -1, dtype=np.int64)
        row_of_slot[new_slots] = np.arange(n)
        self._identity = False
        self._slot_of_row, self._row_of_slot = new_slots, row_of_slot
        self._slot_list = self._row_list = None

    def slot(self, row: int) -> int:
        if self._identity:
            return row
        if self._slot_list is None:
            self._slot_list = self._slot_of_row.tolist()
        return self._slot_list[row]

    def row(self, slot: int) -> int:
        if self._identity:
            return slot
        if self._row_list is None:
            self._row_list = self._row_of_slot.tolist()
        return self._row_list[slot]

    def rows(self, slots: np.ndarray) -> np.ndarray:
        return slots if self._identity else self._row_of_slot[slots]


class PodLabelIndex:
    """Assigned pods findable by namespace and label selector, each with its node's snapshot row."""

    def __init__(self, slots: NodeSlots | None = None) -> None:
        self._slots = slots if slots is not None else NodeSlots()
        #: uid -> (pod, node slot); the maps below hold node slots too.
        self._pods: dict[str, tuple[Pod, int]] = {}
        self._by_namespace: dict[str, dict[str, int]] = {}
        #: (namespace, key, value) -> {uid: slot}
        self._by_label: dict[tuple[str, str, str], dict[str, int]] = {}
        #: (namespace, key) -> {value: number of pods with it}, for ``Exists`` requirements.
        self._values: dict[tuple[str, str], dict[str, int]] = {}
        self._terminating: set[str] = set()
        #: Slot arrays of single label entries (the common one-requirement selector), dropped on change.
        self._arrays: dict[tuple[str, str, str], np.ndarray] = {}

    # -- writing (by the snapshot) ----------------------------------------------------------------------
    def add(self, pod: Pod, row: int) -> None:
        meta = pod.meta  # uid, namespace and labels read from it directly, not through the pod's properties
        uid = meta.uid
        found = self._pods.get(uid)
        if found is not None:
            self.remove(found[0], self._slots.row(found[1]))
        ns = meta.namespace
        slot = self._slots.slot(row)
        self._pods[uid] = (pod, slot)
        members = self._by_namespace.get(ns)
        if members is None:
            members = self._by_namespace[ns] = {}
        members[uid] = slot
        for key, value in meta.labels.items():
            entry = (ns, key, value)
            self._by_label.setdefault(entry, {})[uid] = slot
            self._arrays.pop(entry, None)
            values = self._values.setdefault((ns, key), {})
            values[value] = values.get(value, 0) + 1
        if meta.deletion_timestamp is not None:
            self._terminating.add(uid)

    def replace(self, old: Pod, new: Pod, row: int) -> None:
        """``new`` in place of ``old``, the same pod on the same node (a binding confirmed, a status
        written): when what it is indexed under is unchanged, only the object it hands out moves."""
        found = self._pods.get(old.uid)
        if (
            found is not None
            and found[1] == self._slots.slot(row)
            and new.uid == old.uid
            and new.namespace == old.namespace
            and new.labels == old.labels
            and (new.meta.deletion_timestamp is None) == (old.meta.deletion_timestamp is None)
        ):
            self._pods[new.uid] = (new, found[1])
            return
        self.remove(old, row)
        self.add(new, row)

    def remove(self, pod: Pod, row: int) -> None:
        """Drop ``pod`` from node ``row`` (a no-op when it has meanwhile been indexed on another node)."""
        uid = pod.meta.uid
        found = self._pods.get(uid)
        if found is None or found[1] != self._slots.slot(row):
            return
        del self._pods[uid]
        meta = found[0].meta  # the labels it was indexed under, which ``pod`` may no longer carry
        ns = meta.namespace
        members = self._by_namespace[ns]
        del members[uid]
        if not members:
            del self._by_namespace[ns]
        for key, value in meta.labels.items():
            entry = (ns, key, value)
            holders = self._by_label[entry]
            del holders[uid]
            if not holders:
                del self._by_label[entry]
            self._arrays.pop(entry, None)
            values = self._values[(ns, key)]
            values[value] -= 1
            if not values[value]:
                del values[value]
                if not values:
                    del self._values[(ns, key)]
        self._terminating.discard(uid)

    def clear(self) -> None:
        self.__init__(self._slots)  # type: ignore[misc]

    # -- reading ------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._pods)

    def row_of(self, uid: str) -> int | None:
        found = self._pods.get(uid)
        return None if found is None else self._slots.row(found[1])

    def namespaces(self) -> Iterable[str]:
        return self._by_namespace.keys()

    def rows_matching(
        self, namespaces: Collection[str] | None, selector: LabelSelector | None, *, skip_terminating: bool = False
    ) -> np.ndarray:
        """The node row of every matching pod (a row repeats once per pod on that node).

        ``namespaces`` None means every namespace; a ``None`` selector matches nothing and ``{}``
        everything. ``skip_terminating`` leaves out pods being deleted (PodTopologySpread does).
        """
        if selector is None:
            return _EMPTY_ROWS
        parts: list[np.ndarray] = []
        for ns in self._namespaces(namespaces):
            fast = self._single_entry(ns, selector)
            if fast is not None and not (skip_terminating and self._terminating):
                slots = self._arrays.get(fast)
                if slots is None:
                    members = self._by_label.get(fast)
                    if members is None:
                        continue
                    slots = self._arrays[fast] = _slots_array(members)
                parts.append(self._slots.rows(slots))
                continue
            rows_list = [
                row for pod, row in self._scan(ns, selector) if not (skip_terminating and pod.uid in self._terminating)
            ]
            if rows_list:
                parts.append(np.asarray(rows_list, dtype=np.int64))
        if not parts:
            return _EMPTY_ROWS
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def pods_matching(
        self, namespaces: Collection[str] | None, selector: LabelSelector | None
    ) -> Iterator[tuple[Pod, int]]:
        """Every matching pod with its node row (same conventions as :meth:`rows_matching`)."""
        if selector is None:
            return
        for ns in self._namespaces(namespaces):
            yield from self._scan(ns, selector)

    def count_per_node(
        self,
        n_rows: int,
        namespaces: Collection[str] | None,
        selector: LabelSelector | None,
        *,
        skip_terminating: bool = False,
    ) -> np.ndarray:
        """Matching pods per snapshot row (int64, length ``n_rows``)."""
        rows = self.rows_matching(namespaces, selector, skip_terminating=skip_terminating)
        return np.bincount(rows, minlength=n_rows).astype(np.int64, copy=False)

    # -- internals --------------------------------------------------------------------------------------
    def _namespaces(self, namespaces: Collection[str] | None) -> Iterable[str]:
        if namespaces is None:
            return list(self._by_namespace)
        return [ns for ns in namespaces if ns in self._by_namespace]

    @staticmethod
    def _single_entry(ns: str, selector: LabelSelector) -> tuple[str, str, str] | None:
        """The one label entry a ``key=value`` selector picks, when the selector is just that."""
        reqs = selector.requirements
        if len(reqs) == 1 and reqs[0].operator == IN and len(reqs[0].values) == 1:
            (value,) = reqs[0].values
            return (ns, reqs[0].key, value)
        return None

    def _candidates(self, ns: str, requirement: LabelRequirement) -> list[dict[str, int]]:
        if requirement.operator == IN:
            values: Iterable[str] = requirement.values
        else:  # Exists
            values = self._values.get((ns, requirement.key), {}).keys()
        found = (self._by_label.get((ns, requirement.key, v)) for v in values)
        return [members for members in found if members]

    def _scan(self, ns: str, selector: LabelSelector) -> Iterator[tuple[Pod, int]]:
        """Pods of ``ns`` matching ``selector``, starting from its most selective positive requirement."""
        best: list[dict[str, int]] | None = None
        best_size = 0
        best_req: LabelRequirement | None = None
        for req in selector.requirements:
            if req.operator not in (IN, EXISTS):
                continue
            groups = self._candidates(ns, req)
            size = sum(len(g) for g in groups)
            if best is None or size < best_size:
                best, best_size, best_req = groups, size, req
                if not size:
                    return
        rest = [r for r in selector.requirements if r is not best_req]
        groups = best if best is not None else [self._by_namespace.get(ns, {})]
        pods, row_of = self._pods, self._slots.row
        for members in groups:
            for uid, slot in members.items():
                pod = pods[uid][0]
                if not rest or all(r.matches(pod.labels) for r in rest):
                    yield pod, row_of(slot)


# -- existing pods' terms ------------------------------------------------------------------------------

REQUIRED_AFFINITY = 0
REQUIRED_ANTI_AFFINITY = 1
PREFERRED_AFFINITY = 2
PREFERRED_ANTI_AFFINITY = 3


@dataclass(eq=False)
class TermCounts:
    """One distinct term of existing pods (with its weight; 0 for required terms) and where it sits."""

    term: PodAffinityTerm
    weight: int
    slots: NodeSlots
    #: node slot -> number of pods on that node carrying this term (once per occurrence)
    per_slot: dict[int, int] = field(default_factory=dict)
    _arrays: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @property
    def per_row(self) -> dict[int, int]:
        """Snapshot row -> number of pods there carrying this term."""
        return {self.slots.row(slot): count for slot, count in self.per_slot.items()}

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, counts) as int64 arrays (the slot side cached until the term's placement changes)."""
        if self._arrays is None:
            n = len(self.per_slot)
            self._arrays = (
                np.fromiter(self.per_slot.keys(), dtype=np.int64, count=n),
                np.fromiter(self.per_slot.values(), dtype=np.int64, count=n),
            )
        slots, counts = self._arrays
        return self.slots.rows(slots), counts


class AffinityTermIndex:
    """Existing pods' pod-affinity terms by kind, identical (term, weight) pairs merged."""

    def __init__(self, slots: NodeSlots | None = None) -> None:
        self._slots = slots if slots is not None else NodeSlots()
        self._kinds: tuple[dict[tuple[PodAffinityTerm, int], TermCounts], ...] = ({}, {}, {}, {})

    def terms(self, kind: int) -> Iterable[TermCounts]:
        """The distinct terms of one kind (``REQUIRED_AFFINITY`` …) present in the snapshot."""
        return self._kinds[kind].values()

    def add(self, pod: Pod, row: int) -> None:
        if pod.pod_affinity.declared:  # most pods have no terms: no call to make
            self._update(pod, row, +1)

    def remove(self, pod: Pod, row: int) -> None:
        if pod.pod_affinity.declared:
            self._update(pod, row, -1)

    def clear(self) -> None:
        self._kinds = ({}, {}, {}, {})

    def _update(self, pod: Pod, row: int, delta: int) -> None:
        aff = pod.pod_affinity
        slot = self._slots.slot(row)
        for kind, pairs in (
            (REQUIRED_AFFINITY, ((t, 0) for t in aff.required_affinity)),
            (REQUIRED_ANTI_AFFINITY, ((t, 0) for t in aff.required_anti_affinity)),
            (PREFERRED_AFFINITY, ((w.term, w.weight) for w in aff.preferred_affinity)),
            (PREFERRED_ANTI_AFFINITY, ((w.term, w.weight) for w in aff.preferred_anti_affinity)),
        ):
            table = self._kinds[kind]
            for key in pairs:
                entry = table.get(key)
                if entry is None:
                    if delta < 0:
                        continue
                    entry = table[key] = TermCounts(term=key[0], weight=key[1], slots=self._slots)
                count = entry.per_slot.get(slot, 0) + delta
                if count > 0:
                    entry.per_slot[slot] = count
                else:
                    entry.per_slot.pop(slot, None)
                    if not entry.per_slot:
                        del table[key]
                entry._arrays = None
