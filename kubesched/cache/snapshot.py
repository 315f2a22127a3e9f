"""Snapshot: the frozen view of the cluster one scheduling cycle works on.

Besides the per-node :class:`NodeInfo` list (in node-tree order, which interleaves zones), the snapshot
keeps the numbers the hot plugins read as NumPy columns indexed like that list, so a filter or a
score over thousands of nodes is a few array operations. The cache refreshes only the rows of nodes
whose generation moved since the previous cycle.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import is_
from typing import Any, overload

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.api.taints import Taint
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.pod_index import AffinityTermIndex, NodeSlots, PodLabelIndex

_layouts = itertools.count(1)

#: Fixed resource columns; scalar (extended) resources get further columns when first seen.
BASE_RESOURCES: tuple[str, ...] = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True, slots=True)
class LabelColumn:
    """One label key over all nodes: ``codes[i]`` indexes ``values``, or is -1 where the node lacks the key."""

    codes: np.ndarray
    values: tuple[str, ...]
    #: value -> code, built on first lookup (the column lives as long as the node objects it reflects).
    _positions: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def code_of(self, value: str) -> int | None:
        """The code of ``value``, or None when no node carries it."""
        positions = self._positions
        if not positions and self.values:
            positions.update((v, i) for i, v in enumerate(self.values))
        return positions.get(value)

    def mask(self, predicate_per_value: np.ndarray, when_missing: bool) -> np.ndarray:
        """Evaluate a per-value predicate (one bool per entry of ``values``) for every node."""
        table = np.append(predicate_per_value.astype(bool), when_missing)
        per_node: np.ndarray = table[self.codes]  # code -1 picks the trailing "missing" entry
        return per_node


class NodeInfoList(Sequence[NodeInfo]):
    """A sequence of snapshot nodes given by their indices, materialised only when iterated per node."""

    __slots__ = ("_infos", "indices", "snapshot")

    def __init__(self, snapshot: Snapshot, indices: np.ndarray) -> None:
        self.snapshot = snapshot
        self.indices = indices
        self._infos: list[NodeInfo] | None = None

    def _materialise(self) -> list[NodeInfo]:
        if self._infos is None:
            infos = self.snapshot.node_infos
            self._infos = [infos[i] for i in self.indices.tolist()]
        return self._infos

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...
    @overload
    def __getitem__(self, i: slice) -> list[NodeInfo]: ...
    def __getitem__(self, i: int | slice) -> NodeInfo | list[NodeInfo]:
        return self._materialise()[i]

    def __len__(self) -> int:
        return len(self.indices)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._materialise())


class Snapshot:
    """Node infos plus columnar per-node numbers, consistent for the duration of one cycle."""

    def __init__(self) -> None:
        self.node_infos: list[NodeInfo] = []
        self.index: dict[str, int] = {}
        #: Node names as an object array, for gathering names of many rows at once.
        self.names = np.zeros(0, dtype=object)
        self.generation = 0
        self.resource_columns: dict[str, int] = {name: i for i, name in enumerate(BASE_RESOURCES)}
        self.allocatable = np.zeros((0, len(BASE_RESOURCES)), dtype=np.int64)
        self.requested = np.zeros((0, len(BASE_RESOURCES)), dtype=np.int64)
        #: cpu (milli) and memory requested on each node counting scoring defaults for missing requests.
        self.non_zero_requested = np.zeros((0, 2), dtype=np.int64)
        self.pod_count = np.zeros(0, dtype=np.int64)
        self.allowed_pods = np.zeros(0, dtype=np.int64)
        #: Assigned pods by namespace and label, and existing pods' affinity terms (see pod_index).
        #: Stable numbers for nodes across joins (see pod_index): what row-keyed caches key on instead.
        self.slots = NodeSlots()
        self.pods = PodLabelIndex(self.slots)
        self.affinity_terms = AffinityTermIndex(self.slots)
        self.used_pvcs: set[str] = set()
        #: PVC key -> how many nodes have a pod using it (keeps ``used_pvcs`` current node by node).
        self._pvc_nodes: dict[str, int] = {}
        #: Generation of each row's NodeInfo: consumers find the rows changed since they last looked.
        self.row_generation = np.zeros(0, dtype=np.int64)
        self._label_columns: dict[str, LabelColumn] = {}
        self._node_columns: dict[Callable[[Node], Any], np.ndarray] = {}
        self._taint_groups: tuple[np.ndarray, list[tuple[Taint, ...]]] | None = None
        #: Bumped whenever node objects (labels, taints, images) change: derived per-node caches key on it.
        self.node_objects_version = 0
        #: Changes (to a number no snapshot has had) when nodes join, leave or move rows: per-row caches
        #: are valid only within one layout of one snapshot.
        self.layout_version = next(_layouts)
        #: Two copies of 0..n-1 end to end, so that every rotation of the rows is a view (see rotated_rows).
        self._doubled_rows = np.zeros(0, dtype=np.int64)
        #: Rows written since the log was last started over (see rows_written_since), and which log it is.
        self._written: list[int] = []
        self._write_epoch = 0
        #: Bumped when some node's image states change (not when nodes without images join).
        self.images_version = 0

    # -- reading -------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.node_infos)

    def get(self, name: str) -> NodeInfo | None:
        i = self.index.get(name)
        return None if i is None else self.node_infos[i]

    def all_nodes(self) -> NodeInfoList:
        return NodeInfoList(self, np.arange(len(self.node_infos)))

    def write_mark(self) -> tuple[int, int]:
        """Where the log of written rows stands now (hand it to :meth:`rows_written_since` later)."""
        return self._write_epoch, len(self._written)

    def rows_written_since(self, mark: tuple[int, int]) -> list[int] | None:
        """Rows written since ``mark`` (a row may repeat); None when the log was started over since,
        and every row must be taken as written."""
        epoch, position = mark
        if epoch != self._write_epoch:
            return None
        return self._written[position:]

    def _restart_write_log(self) -> None:
        self._written = []
        self._write_epoch += 1

    def rotated_rows(self, start: int) -> np.ndarray:
        """Every row, from ``start`` round to ``start - 1``: a read-only view, so that walking a
        million nodes from a moving start index copies nothing per cycle."""
        n = len(self.node_infos)
        if len(self._doubled_rows) != 2 * n:
            rows = np.arange(n, dtype=np.int64)
            self._doubled_rows = np.concatenate([rows, rows])
            self._doubled_rows.flags.writeable = False
        return self._doubled_rows[start : start + n]

    def nodes(self, indices: np.ndarray) -> NodeInfoList:
        return NodeInfoList(self, indices)

    def resource_column(self, name: str) -> int | None:
        return self.resource_columns.get(name)

    def label_column(self, key: str) -> LabelColumn:
        """Codes of ``key``'s values on every node, built once per node-object version."""
        col = self._label_columns.get(key)
        if col is None:
            vocab: dict[str, int] = {}
            codes = np.full(len(self.node_infos), -1, dtype=np.int32)
            for i, info in enumerate(self.node_infos):
                assert info.node is not None
                value = info.node.labels.get(key)
                if value is not None:
                    codes[i] = vocab.setdefault(value, len(vocab))
            col = LabelColumn(codes=codes, values=tuple(vocab))
            self._label_columns[key] = col
        return col

    def node_column(self, value: Callable[[Node], Any], dtype: Any) -> np.ndarray:
        """``value(node)`` for every node, as one array: built once per function (pass the same one each
        time), then carried through nodes joining (only their rows are computed) until a node object
        changes in place."""
        column = self._node_columns.get(value)
        if column is None:
            column = self._node_columns[value] = np.fromiter(
                (value(info.node) for info in self.node_infos),  # type: ignore[arg-type]
                dtype=dtype,
                count=len(self.node_infos),
            )
        return column

    def taint_groups(self) -> tuple[np.ndarray, list[tuple[Taint, ...]]]:
        """Nodes grouped by identical taint lists: (group of each node, taints of each group).

        Clusters have few distinct taint lists, so a toleration check per group plus one gather
        replaces a check per node.
        """
        if self._taint_groups is None:
            groups: dict[tuple[Taint, ...], int] = {}
            ids = np.empty(len(self.node_infos), dtype=np.int32)
            for i, info in enumerate(self.node_infos):
                assert info.node is not None
                ids[i] = groups.setdefault(info.node.taints, len(groups))
            self._taint_groups = (ids, list(groups))
        return self._taint_groups

    # -- writing (by the cache only) -----------------------------------------------------------------
    def _ensure_resource_columns(self, names: Sequence[str]) -> None:
        missing = [n for n in names if n not in self.resource_columns and n != PODS]
        if not missing:
            return
        for name in missing:
            self.resource_columns[name] = len(self.resource_columns)
        extra = len(missing)
        n = len(self.node_infos)
        self.allocatable = np.hstack([self.allocatable, np.zeros((n, extra), dtype=np.int64)])
        self.requested = np.hstack([self.requested, np.zeros((n, extra), dtype=np.int64)])
        for i, info in enumerate(self.node_infos):
            self._write_row(i, info)

    def _write_row(self, i: int, info: NodeInfo, *, allocatable: bool = True) -> None:
        """Write row ``i`` from ``info``; ``allocatable=False`` when the row already holds the allocatable
        of the same Node object (a pod came or went)."""
        written = self._written
        written.append(i)
        if len(written) > 4 * len(self.node_infos) + 1024:
            self._restart_write_log()  # readers recompute every row: a cost spread over this many writes
        # Whole rows assigned from lists: one conversion instead of an item set per resource.
        if allocatable:
            self.allocatable[i] = self._row_of(info.allocatable)
            self.allowed_pods[i] = info.allocatable.get(PODS, 0)
        self.requested[i] = self._row_of(info.requested)
        nonzero = self.non_zero_requested  # two items set: half the cost of assigning a tuple to the row
        nonzero[i, 0] = info.non_zero_cpu
        nonzero[i, 1] = info.non_zero_memory
        self.pod_count[i] = len(info.pods)
        self.row_generation[i] = info.generation

    def _row_of(self, amounts: Mapping[str, int]) -> list[int]:
        """``amounts`` laid out in the resource columns (resources without a column left out)."""
        cols = self.resource_columns
        values = [0] * self.requested.shape[1]
        for name, value in amounts.items():
            c = cols.get(name)
            if c is not None:
                values[c] = value
        return values

    def replace_all(self, infos: list[NodeInfo]) -> None:
        """Rebuild every list and column (node set changed)."""
        self.node_infos = infos
        self.index = {info.name: i for i, info in enumerate(infos)}
        self.names = np.array([info.name for info in infos], dtype=object)
        self.layout_version = next(_layouts)
        self._restart_write_log()
        n = len(infos)
        names = {name for info in infos for name in (*info.allocatable, *info.requested)}
        for name in sorted(names):
            if name not in self.resource_columns and name != PODS:
                self.resource_columns[name] = len(self.resource_columns)
        r = len(self.resource_columns)
        self.allocatable = np.zeros((n, r), dtype=np.int64)
        self.requested = np.zeros((n, r), dtype=np.int64)
        self.non_zero_requested = np.zeros((n, 2), dtype=np.int64)
        self.pod_count = np.zeros(n, dtype=np.int64)
        self.allowed_pods = np.zeros(n, dtype=np.int64)
        self.row_generation = np.zeros(n, dtype=np.int64)
        self.slots.reset()
        self.pods.clear()
        self.affinity_terms.clear()
        for i, info in enumerate(infos):
            self._write_row(i, info)
            for pod in info.pods:
                self.pods.add(pod, i)
                self.affinity_terms.add(pod, i)
        self.invalidate_node_objects()
        self.images_version += 1
        self.refresh_used_pvcs()

    def update_nodes(
        self, infos: list[NodeInfo], names: list[str], index: dict[str, int], old_rows: np.ndarray, fresh: list[int]
    ) -> None:
        """Take the node list ``infos`` (node-tree order) when nodes joined or moved, reusing every row
        whose NodeInfo object is unchanged.

        A joining node usually lands mid-list (zones are interleaved), shifting later rows. Rather than
        rebuilding every row and pod index, kept rows are gathered into their new positions with NumPy,
        the pod indexes' slot-to-row map is rewritten, and only new or changed nodes are written. A
        node leaving falls back to :meth:`replace_all`. The cache hands over what it worked out while
        picking the infos: their ``names``, ``index`` (name -> new row), ``old_rows`` (each one's row
        in this snapshot, -1 when joining) and the ``fresh`` rows (joining or changed nodes).
        """
        old_infos = self.node_infos
        kept = old_rows >= 0
        if not old_infos or int(np.count_nonzero(kept)) != len(old_infos):
            self.replace_all(infos)  # first fill, or some node left: renumber from scratch
            return
        self._ensure_resource_columns(
            sorted({name for i in fresh for name in (*infos[i].allocatable, *infos[i].requested)})
        )
        self.slots.move(old_rows)
        source = np.where(kept, old_rows, 0)
        self.allocatable = self.allocatable[source]
        self.requested = self.requested[source]
        self.non_zero_requested = self.non_zero_requested[source]
        self.pod_count = self.pod_count[source]
        self.allowed_pods = self.allowed_pods[source]
        self.row_generation = self.row_generation[source]
        self.node_infos = infos
        self.index = index
        self.names = np.array(names, dtype=object)
        self.layout_version = next(_layouts)
        self._restart_write_log()
        node_changed: list[int] = []
        for i in fresh:
            info = infos[i]
            self._write_row(i, info)
            r = int(old_rows[i])
            old = old_infos[r] if r >= 0 else None
            self._reindex_pods(i, old.pods if old is not None else (), info.pods)
            old_pvcs = old.pvc_ref_counts.keys() if old is not None else ()
            if old_pvcs != info.pvc_ref_counts.keys():
                self._move_pvc_users(old_pvcs, info.pvc_ref_counts.keys())
            if old is None or old.node is not info.node:
                node_changed.append(i)
            if (old.image_states if old is not None else {}) != info.image_states:
                self.images_version += 1
        self._carry_node_objects(source, kept, node_changed)

    def _carry_node_objects(self, source: np.ndarray, kept: np.ndarray, changed: list[int]) -> None:
        """Move the cached label columns, node columns and taint groups to the new row order,
        recomputing the ``changed`` rows."""
        columns = self._label_columns
        self._label_columns = {}
        for key, col in columns.items():
            codes = np.where(kept, col.codes[source], -1).astype(np.int32)
            vocab = (
                dict(col._positions) if col._positions or not col.values else {v: i for i, v in enumerate(col.values)}
            )
            for i in changed:
                node = self.node_infos[i].node
                assert node is not None
                value = node.labels.get(key)
                codes[i] = -1 if value is None else vocab.setdefault(value, len(vocab))
            self._label_columns[key] = LabelColumn(codes=codes, values=tuple(vocab), _positions=vocab)
        for of_node, column in list(self._node_columns.items()):
            carried = column[source]
            for i in changed:
                carried[i] = of_node(self.node_infos[i].node)  # type: ignore[arg-type]
            self._node_columns[of_node] = carried
        if self._taint_groups is not None:
            ids, lists = self._taint_groups
            groups = {taints: g for g, taints in enumerate(lists)}
            new_ids = np.where(kept, ids[source], 0).astype(np.int32)
            for i in changed:
                node = self.node_infos[i].node
                assert node is not None
                new_ids[i] = groups.setdefault(node.taints, len(groups))
            self._taint_groups = (new_ids, list(groups))
        self.node_objects_version += 1

    def replace_node(self, info: NodeInfo) -> None:
        """Swap in a fresh copy of one node's info and rewrite its row."""
        i = self.index[info.name]
        old = self.node_infos[i]
        self.node_infos[i] = info
        # The same Node object has the same allocatable, whose resources have columns already.
        same_node = old.node is info.node
        if not same_node or not info.requested.keys() <= self.resource_columns.keys():
            self._ensure_resource_columns([*info.allocatable, *info.requested])
        self._write_row(i, info, allocatable=not same_node)
        self._reindex_pods(i, old.pods, info.pods)
        old_pvcs, pvcs = old.pvc_ref_counts, info.pvc_ref_counts
        if (old_pvcs or pvcs) and old_pvcs.keys() != pvcs.keys():  # two empty maps: no views to compare
            self._move_pvc_users(old_pvcs.keys(), pvcs.keys())
        if old.node is not info.node:
            self.invalidate_node_objects()
        if old.image_states != info.image_states:
            self.images_version += 1

    def _reindex_pods(self, row: int, old: Sequence[Pod], new: Sequence[Pod]) -> None:
        """Move the pod indexes from a node's old pod list to its new one (pods compare by identity).

        Usually one pod came or went, or one was re-made (a binding confirmed): the lists share a
        prefix, and only the tails after it are compared."""
        same = list(map(is_, old, new))  # pairwise identity up to the shorter list's end, in one C loop
        k = same.index(False) if False in same else len(same)
        old_tail, new_tail = old[k:], new[k:]
        if not old_tail:  # pods only came (appended): nothing left, nothing re-made
            for pod in new_tail:
                self._index_pod(pod, row)
            return
        if not new_tail:  # pods only left (the last ones)
            for pod in old_tail:
                self._unindex_pod(pod, row)
            return
        first = old_tail[0]
        if len(old_tail) == len(new_tail) + 1 and all(map(is_, old_tail[1:], new_tail)):
            # One pod left from mid-list, the rest stayed in order: it is gone unless it is also
            # further on (a node never holds one pod twice, but the general case would keep it).
            if id(first) not in map(id, new_tail):
                self._unindex_pod(first, row)
                return
        elif len(old_tail) == 1 == len(new_tail):
            # One pod swapped for another at the end (``first`` is not ``came``: the prefix stops here).
            came = new_tail[0]
            if first.uid != came.uid:
                self._unindex_pod(first, row)
                self._index_pod(came, row)
                return
            self._swap_remade(first, came, row)
            return
        self._reindex_tails(row, old_tail, new_tail)

    def _reindex_tails(self, row: int, old_tail: Sequence[Pod], new_tail: Sequence[Pod]) -> None:
        """The general case of :meth:`_reindex_pods`: pods in one tail and not the other left or came; a
        pod that left and came under the same uid was re-made, and its entries are swapped."""
        kept = {id(p) for p in new_tail}
        gone = [p for p in old_tail if id(p) not in kept]
        before = {id(p) for p in old_tail}
        came = [p for p in new_tail if id(p) not in before]
        came_uids = {p.uid for p in came} if gone else set()
        remade: dict[str, Pod] = {}  # uid -> the version of a re-made pod that leaves
        for pod in gone:
            if pod.uid in came_uids:
                remade[pod.uid] = pod
                continue
            self._unindex_pod(pod, row)
        for pod in came:
            previous = remade.pop(pod.uid, None)
            if previous is None:
                self._index_pod(pod, row)
                continue
            self._swap_remade(previous, pod, row)

    def _swap_remade(self, previous: Pod, pod: Pod, row: int) -> None:
        """``pod`` is a new version of ``previous`` (same uid) on the same node."""
        self.pods.replace(previous, pod, row)
        self.affinity_terms.remove(previous, row)
        self.affinity_terms.add(pod, row)

    def _index_pod(self, pod: Pod, row: int) -> None:
        self.pods.add(pod, row)
        self.affinity_terms.add(pod, row)

    def _unindex_pod(self, pod: Pod, row: int) -> None:
        self.pods.remove(pod, row)
        self.affinity_terms.remove(pod, row)

    def invalidate_node_objects(self) -> None:
        self._label_columns.clear()
        self._node_columns.clear()
        self._taint_groups = None
        self.node_objects_version += 1

    def refresh_used_pvcs(self) -> None:
        """Recompute the PVCs some pod in the snapshot uses from every node."""
        self._pvc_nodes = {}
        for info in self.node_infos:
            for key in info.pvc_ref_counts:
                self._pvc_nodes[key] = self._pvc_nodes.get(key, 0) + 1
        self.used_pvcs = set(self._pvc_nodes)

    def _move_pvc_users(self, old: Iterable[str], new: Iterable[str]) -> None:
        """One node's PVC references changed from ``old`` to ``new``: update ``used_pvcs`` for them."""
        old_set, new_set = set(old), set(new)
        for key in old_set - new_set:
            left = self._pvc_nodes.get(key, 0) - 1
            if left > 0:
                self._pvc_nodes[key] = left
            else:
                self._pvc_nodes.pop(key, None)
                self.used_pvcs.discard(key)
        for key in new_set - old_set:
            self._pvc_nodes[key] = self._pvc_nodes.get(key, 0) + 1
            self.used_pvcs.add(key)
