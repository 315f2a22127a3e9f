"""PodTopologySpread's ``DoNotSchedule`` half: PreFilter, AddPod / RemovePod and Filter (kube-scheduler's filtering.go).

A node is refused when placing the pod there would make its domain exceed the global minimum by
more than ``maxSkew``. It is kept apart from scoring because its state differs in kind: it must
survive AddPod / RemovePod (preemption's what-if runs), so it keeps per-domain sums that can be
updated in place plus kube-scheduler's "critical paths" (the two least loaded domains), stale
minimum included.

Counting never walks the cluster's pods: per constraint the snapshot's pod index gives matching
pods per node row, the eligible nodes are a NumPy mask (node affinity, taints, topology keys
present) and per-domain sums are one ``bincount`` over the topology key's label codes.

v1.34 keeps counts, critical paths and domains per constraint. v1.30 kept them per topology key,
so constraints sharing a key share them: on a node the last such constraint's count wins, domains
and the minimum are the key's, and AddPod / RemovePod add their delta once per matching constraint.
Both are one structure here: a list with each constraint's counts, the same object for constraints
that share a key in v1.30.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from kubesched.api.node_affinity import RequiredNodeAffinity
from kubesched.api.objects import Node, Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.api.topology_spread import DO_NOT_SCHEDULE
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BatchFilterResult, PreFilterResult, minus_ones
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS
from kubesched.plugins.podtopologyspread.common import Constraint, PodTopologySpreadBase
from kubesched.plugins.tainttoleration import DO_NOT_SCHEDULE_EFFECTS

if TYPE_CHECKING:
    from kubesched.cache.snapshot import LabelColumn, Snapshot

PRE_FILTER_STATE_KEY = "PreFilter" + names.POD_TOPOLOGY_SPREAD

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

_MAX_INT32 = 2**31 - 1
_STATUS_MISSING_LABEL = 0
_STATUS_SKEW = 1


class CriticalPaths:
    """The two least loaded domains of a key, maintained exactly as kube-scheduler's criticalPaths.

    Updates after AddPod / RemovePod may leave a stale minimum (another domain drops below the
    tracked ones unseen); Filter must then see the same stale minimum kube-scheduler sees.
    """

    __slots__ = ("paths",)

    def __init__(self, paths: list[list[Any]] | None = None) -> None:
        self.paths: list[list[Any]] = paths if paths is not None else [["", _MAX_INT32], ["", _MAX_INT32]]

    def clone(self) -> CriticalPaths:
        return CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    @property
    def min(self) -> int:
        return int(self.paths[0][1])

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]


# -- PreFilter state ------------------------------------------------------------------------------------
class _KeyCounts:
    """Matching pods per domain of one topology key: v1.34's TpValueToMatchNum of a constraint, or
    v1.30's TpPairToMatchNum restricted to the key.

    ``sums[code]`` is the count of the domain whose value is ``column.values[code]``; domains that
    are not pairs count 0 either way. Values absent from the snapshot (only reachable through
    AddPod on a foreign node) go to ``extra``.
    """

    __slots__ = ("column", "domains", "extra", "paths", "sums")

    def __init__(
        self,
        column: LabelColumn,
        sums: np.ndarray,
        domains: int,
        paths: CriticalPaths,
        extra: dict[str, int] | None = None,
    ) -> None:
        self.column = column
        self.sums = sums
        self.domains = domains
        self.paths = paths
        self.extra = extra if extra is not None else {}

    def clone(self) -> _KeyCounts:
        return _KeyCounts(self.column, self.sums.copy(), self.domains, self.paths.clone(), dict(self.extra))


@dataclass(slots=True)
class _PreFilterState:
    constraints: list[Constraint]
    #: Whether the incoming pod matches each constraint's selector (its own +1 in the skew).
    self_match: list[int]
    #: Per constraint, its domain counts (shared by constraints on one key in v1.30).
    counts: list[_KeyCounts]
    required: RequiredNodeAffinity
    tolerations: tuple[Any, ...]

    def clone(self) -> _PreFilterState:
        clones: dict[int, _KeyCounts] = {}
        for kc in self.counts:
            if id(kc) not in clones:
                clones[id(kc)] = kc.clone()
        return _PreFilterState(
            self.constraints, self.self_match, [clones[id(kc)] for kc in self.counts], self.required, self.tolerations
        )


# -- the extension points -------------------------------------------------------------------------------
class FilteringMixin(PodTopologySpreadBase):
    """PreFilter (with its AddPod / RemovePod extensions), Filter and the batch filter."""

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self._constraints(state, pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP_STATUS
        snapshot = self._snapshot()
        n = len(snapshot)
        required = RequiredNodeAffinity.of(pod)
        affinity, taints = self._inclusion_masks(snapshot, pod, constraints, required)
        columns: dict[str, LabelColumn] = {}
        for c in constraints:
            if c.topology_key not in columns:
                columns[c.topology_key] = snapshot.label_column(c.topology_key)
        all_keys: np.ndarray | None = None
        for col in columns.values():
            has = col.codes >= 0
            all_keys = has if all_keys is None else all_keys & has
        counts: list[_KeyCounts | None] = [None] * len(constraints)
        for group in self._count_groups(constraints):
            # Within a node a later constraint of the group overwrites the earlier one's count (v1.30).
            contrib: np.ndarray | None = None
            counted: np.ndarray | None = None
            for i in group:
                elig = self._eligible(constraints[i], all_keys, affinity, taints, n)
                cnt = self._count(snapshot, pod, constraints[i])
                if contrib is None or counted is None:
                    contrib, counted = np.where(elig, cnt, 0), elig
                else:
                    contrib = np.where(elig, cnt, contrib)
                    counted = counted | elig
            assert contrib is not None and counted is not None
            kc = self._key_counts(columns[constraints[group[0]].topology_key], contrib, counted)
            for i in group:
                counts[i] = kc
        s = _PreFilterState(
            constraints,
            [int(c.matches(pod.labels)) for c in constraints],
            [kc for kc in counts if kc is not None],
            required,
            pod.tolerations,
        )
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def _count_groups(self, constraints: list[Constraint]) -> list[list[int]]:
        """Indexes of the constraints that share one count: each alone (v1.34), or by topology key (v1.30)."""
        if self.per_constraint_state:
            return [[i] for i in range(len(constraints))]
        by_key: dict[str, list[int]] = {}
        for i, c in enumerate(constraints):
            by_key.setdefault(c.topology_key, []).append(i)
        return list(by_key.values())

    @staticmethod
    def _key_counts(column: LabelColumn, contrib: np.ndarray, counted: np.ndarray) -> _KeyCounts:
        nvals = len(column.values)
        codes = column.codes[counted]
        sums = np.bincount(codes, weights=contrib[counted], minlength=nvals).astype(np.int64)
        present = (np.bincount(codes, minlength=nvals)).nonzero()[0]
        paths = CriticalPaths()
        if len(present) == 1:
            code = int(present[0])
            paths.update(column.values[code], int(sums[code]))
        elif len(present) > 1:
            sub = sums[present]
            two = np.argpartition(sub, 1)[:2]
            for k in sorted(two.tolist(), key=lambda j: int(sub[j])):
                code = int(present[k])
                paths.update(column.values[code], int(sums[code]))
        return _KeyCounts(column, sums, len(present), paths)

    def pre_filter_extensions(self) -> Self:
        return self

    @staticmethod
    def _pre_filter_state(state: CycleState) -> _PreFilterState | Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status(Code.ERROR, (f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',))
        return s

    # -- AddPod / RemovePod ---------------------------------------------------------------------------
    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        self._update_with_pod(s, pod_to_add, pod, node_info.node, 1)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        self._update_with_pod(s, pod_to_remove, pod, node_info.node, -1)
        return None

    def _update_with_pod(self, s: _PreFilterState, updated: Pod, preemptor: Pod, node: Node | None, delta: int) -> None:
        if updated.namespace != preemptor.namespace or node is None:
            return
        labels = node.labels
        if any(c.topology_key not in labels for c in s.constraints):
            return
        for c, kc in zip(s.constraints, s.counts, strict=True):
            # Unlike the counting in PreFilter, any selector match counts here (terminating or not).
            if not c.matches(updated.labels):
                continue
            if not self._node_included(c, s, node):
                continue
            value = labels[c.topology_key]
            code = kc.column.code_of(value)
            if code is None:
                num = kc.extra.get(value, 0) + delta
                kc.extra[value] = num
            else:
                kc.sums[code] += delta
                num = int(kc.sums[code])
            kc.paths.update(value, num)

    @staticmethod
    def _node_included(c: Constraint, s: _PreFilterState, node: Node) -> bool:
        if c.honor_affinity and not s.required.matches(node):
            return False
        return not (
            c.honor_taints and find_untolerated_taint(node.taints, s.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
        )

    # -- Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        node = node_info.node
        if node is None:
            return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
        labels = node.labels
        for c, self_match, kc in zip(s.constraints, s.self_match, s.counts, strict=True):
            value = labels.get(c.topology_key)
            if value is None:
                return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            if not kc.domains:
                continue  # kube-scheduler cannot find a domain count for the key and skips it
            min_match = 0 if kc.domains < c.min_domains else kc.paths.min
            code = kc.column.code_of(value)
            match = kc.extra.get(value, 0) if code is None else int(kc.sums[code])
            if match + self_match - min_match > c.max_skew:
                return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return BatchFilterResult.all_fail(len(indices), s)
        rows = np.asarray(indices)
        verdict = minus_ones(len(rows))
        for c, self_match, kc in zip(s.constraints, s.self_match, s.counts, strict=True):
            codes = kc.column.codes[rows]
            missing = codes < 0
            verdict[missing & (verdict < 0)] = _STATUS_MISSING_LABEL
            if not kc.domains:
                continue
            min_match = 0 if kc.domains < c.min_domains else kc.paths.min
            sums = np.append(kc.sums, 0)  # code -1 reads the trailing 0
            too_many = sums[codes] > c.max_skew + min_match - self_match
            verdict[too_many & ~missing & (verdict < 0)] = _STATUS_SKEW
        return BatchFilterResult(
            verdict, [unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH), unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)]
        )
