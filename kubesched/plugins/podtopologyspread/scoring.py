"""PodTopologySpread's ``ScheduleAnyway`` half: PreScore, Score and NormalizeScore (kube-scheduler's scoring.go).

Fewer matching pods in a node's domains is better. Scoring is kept apart from filtering because
it reads its own constraints and keeps a different, read-only state: per constraint a weight
(Go's ``log(domains + 2)``) and the matching pods per domain, plus the filtered nodes it leaves
out (a topology key missing). Sums are rounded as Go's ``math.Round`` does, so scores match
kube-scheduler's to the last unit; the batch forms score every node row at once with NumPy.

v1.34 counts and sizes each constraint's domains on its own. v1.30 kept one counter per
(key, value): constraints sharing a non-hostname key all read the sum of their matches, and only the
first of them is weighted by the key's domain count (the others by ``log(2)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

import numpy as np

from kubesched.api.node_affinity import RequiredNodeAffinity
from kubesched.api.objects import Pod
from kubesched.api.topology_spread import SCHEDULE_ANYWAY
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import MAX_NODE_SCORE, NodeScore
from kubesched.framework.status import Code, Status
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS
from kubesched.plugins.podtopologyspread.common import HOSTNAME_LABEL, Constraint, PodTopologySpreadBase, go_log

if TYPE_CHECKING:
    from kubesched.cache.snapshot import LabelColumn, NodeInfoList, Snapshot

PRE_SCORE_STATE_KEY = "PreScore" + names.POD_TOPOLOGY_SPREAD

_log_cache: dict[int, float] = {}


def topology_normalizing_weight(size: int) -> float:
    w = _log_cache.get(size)
    if w is None:
        w = _log_cache[size] = go_log(float(size + 2))
    return w


def go_round(x: float) -> int:
    """math.Round (half away from zero) for the non-negative sums scoring produces."""
    r = math.floor(x)
    return int(r + 1 if x - r >= 0.5 else r)


def _go_round_array(x: np.ndarray) -> np.ndarray:
    r = np.floor(x)
    rounded: np.ndarray = r + (x - r >= 0.5)
    return rounded.astype(np.int64)


# -- PreScore state -------------------------------------------------------------------------------------
@dataclass(slots=True)
class _PreScoreState:
    constraints: list[Constraint]
    weights: list[float]
    columns: list[LabelColumn]
    #: Per constraint: for the hostname key the matching pods per snapshot row, else the counts per
    #: domain code of its key (indexed by the key's mapped codes, see ``_mapped_codes``).
    counts: list[np.ndarray]
    #: Filtered nodes left out of scoring (a topology key missing), over all snapshot rows.
    ignored: np.ndarray
    snapshot: Snapshot
    ignored_names: frozenset[str] | None = None
    last_ignored: np.ndarray | None = None

    def clone(self) -> _PreScoreState:
        return self


def _mapped_codes(column: LabelColumn) -> np.ndarray:
    """Label codes where nodes lacking the key share the domain of value "" (Go reads a missing label as "")."""
    codes = column.codes
    try:
        empty = column.values.index("")
    except ValueError:
        empty = len(column.values)
    return np.where(codes >= 0, codes, empty)


# -- the extension points -------------------------------------------------------------------------------
class ScoringMixin(PodTopologySpreadBase):
    """PreScore, Score / NormalizeScore and their batch forms."""

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        snapshot = nodes.snapshot
        n = len(snapshot)
        if n == 0:
            return SKIP_STATUS
        constraints = self._constraints(state, pod, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP_STATUS
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        rows = np.asarray(nodes.indices, dtype=np.int64)
        columns = [snapshot.label_column(c.topology_key) for c in constraints]
        all_keys: np.ndarray | None = None
        if require_all:
            for col in columns:
                has = col.codes >= 0
                all_keys = has if all_keys is None else all_keys & has
        ignored = np.zeros(n, dtype=bool)
        kept = rows
        if all_keys is not None:
            ignored[rows] = ~all_keys[rows]
            kept = rows[all_keys[rows]]
        required = RequiredNodeAffinity.of(pod)
        affinity, taints = self._inclusion_masks(snapshot, pod, constraints, required)
        weights, counts = self._domain_counts(snapshot, pod, constraints, columns, kept, all_keys, (affinity, taints))
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(constraints, weights, columns, counts, ignored, snapshot))
        return None

    def _domain_counts(
        self,
        snapshot: Snapshot,
        pod: Pod,
        constraints: list[Constraint],
        columns: list[LabelColumn],
        kept: np.ndarray,
        all_keys: np.ndarray | None,
        inclusion: tuple[np.ndarray | None, np.ndarray | None],
    ) -> tuple[list[float], list[np.ndarray]]:
        """Per constraint, its weight and its counts (per row for hostname, else per domain code)."""
        n = len(snapshot)
        mapped: dict[str, np.ndarray] = {}
        per_key: dict[str, np.ndarray] = {}
        weights: list[float] = []
        counts: list[np.ndarray] = []
        sized: set[str] = set()
        for c, col in zip(constraints, columns, strict=True):
            key = c.topology_key
            if key == HOSTNAME_LABEL:
                weights.append(topology_normalizing_weight(len(kept)))
                counts.append(self._count(snapshot, pod, c))
                continue
            codes = mapped.get(key)
            if codes is None:
                codes = mapped[key] = _mapped_codes(col) if all_keys is None else col.codes
            nvals = len(col.values) + 1
            size = 0  # v1.30: the domains were already credited to the first constraint on this key
            if self.per_constraint_state or key not in sized:
                sized.add(key)
                size = int(np.count_nonzero(np.bincount(codes[kept], minlength=nvals)))
            weights.append(topology_normalizing_weight(size))
            elig = self._eligible(c, all_keys, *inclusion, n)
            cnt = self._count(snapshot, pod, c)
            add = np.bincount(codes[elig], weights=cnt[elig], minlength=nvals).astype(np.int64)
            counts.append(add)
            # v1.30: every constraint on the key adds its matches into the key's shared domain counts.
            per_key[key] = add if key not in per_key else per_key[key] + add
        if not self.per_constraint_state:
            counts = [
                per_key[c.topology_key] if c.topology_key != HOSTNAME_LABEL else cnt
                for c, cnt in zip(constraints, counts, strict=True)
            ]
        return weights, counts

    @staticmethod
    def _pre_score_state(state: CycleState) -> _PreScoreState | Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return Status(Code.ERROR, (f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found',))
        return s

    # -- Score ----------------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = self._pre_score_state(state)
        if isinstance(s, Status):
            return 0, s
        node = node_info.node
        if node is None:
            return 0, Status(Code.ERROR, (f'getting node "{node_info.name}" from Snapshot: not found',))
        if node.name in self._ignored_names(s):
            return 0, None
        total = 0.0
        for c, w, col, cnts in zip(s.constraints, s.weights, s.columns, s.counts, strict=True):
            value = node.labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == HOSTNAME_LABEL:
                cnt = (
                    sum(
                        1
                        for p in node_info.pods
                        if p.meta.deletion_timestamp is None and p.namespace == pod.namespace and c.matches(p.labels)
                    )
                    if c.counts_pods
                    else 0
                )
            else:
                code = col.code_of(value)
                if code is None:
                    return 0, Status(Code.ERROR, (f"no domain {c.topology_key}={value} in PreScore state",))
                cnt = int(cnts[code])
            total += float(cnt) * w + float(c.max_skew - 1)
        return go_round(total), None

    @staticmethod
    def _ignored_names(s: _PreScoreState) -> frozenset[str]:
        if s.ignored_names is None:
            s.ignored_names = frozenset(s.snapshot.names[s.ignored].tolist())
        return s.ignored_names

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> np.ndarray:
        s = self._pre_score_state(state)
        if isinstance(s, Status):
            raise RuntimeError(s.message)
        rows = np.asarray(nodes.indices, dtype=np.int64)
        total = np.zeros(len(rows), dtype=np.float64)
        for c, w, col, cnts in zip(s.constraints, s.weights, s.columns, s.counts, strict=True):
            codes = col.codes[rows]
            has = codes >= 0
            if c.topology_key == HOSTNAME_LABEL:
                cnt = cnts[rows]
            else:
                cnt = cnts[np.where(has, codes, 0)] if len(cnts) else np.zeros(len(rows), dtype=np.int64)
            total += np.where(has, cnt.astype(np.float64) * w + float(c.max_skew - 1), 0.0)
        ignored = s.ignored[rows]
        s.last_ignored = ignored
        out = _go_round_array(total)
        out[ignored] = 0
        return out

    # -- NormalizeScore -------------------------------------------------------------------------------
    def score_extensions(self) -> Self:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s = self._pre_score_state(state)
        if isinstance(s, Status):
            return s
        ignored = self._ignored_names(s)
        valid = [ns.score for ns in scores if ns.name not in ignored]
        low = min(valid, default=0)
        high = max(0, max(valid, default=0))
        for ns in scores:
            if ns.name in ignored:
                ns.score = 0
            elif high == 0:
                ns.score = MAX_NODE_SCORE
            else:
                ns.score = MAX_NODE_SCORE * (high + low - ns.score) // high
        return None

    def normalize_scores(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        s = self._pre_score_state(state)
        if isinstance(s, Status):
            raise RuntimeError(s.message)
        raw = np.asarray(scores, dtype=np.int64)
        ignored = s.last_ignored
        if ignored is None or len(ignored) != len(raw):
            ignored = np.zeros(len(raw), dtype=bool)
        valid = ~ignored
        out = np.zeros(len(raw), dtype=np.int64)
        if not valid.any():
            return out
        high = max(0, int(raw[valid].max()))
        low = int(raw[valid].min())
        if high == 0:
            out[valid] = MAX_NODE_SCORE
        else:
            out[valid] = MAX_NODE_SCORE * (high + low - raw[valid]) // high
        return out
