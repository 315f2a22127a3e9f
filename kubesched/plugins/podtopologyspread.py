"""PodTopologySpread: keep pods matching a selector evenly spread over topology domains.

``DoNotSchedule`` constraints filter (a node is refused when placing the pod there would make its
domain exceed the global minimum by more than ``maxSkew``), ``ScheduleAnyway`` constraints score
(fewer matching pods in a node's domains is better). Pods without constraints of their own get the
configured default constraints, with a selector deduced from the Services and the controller that
select the pod.

Counting never walks the cluster's pods: per constraint the snapshot's pod index gives matching
pods per node row, the eligible nodes are a NumPy mask (node affinity, taints, topology keys
present) and per-domain sums are one ``bincount`` over the topology key's label codes. The
PreFilter state keeps those sums per label code, plus kube-scheduler's "critical paths" (the two
least loaded domains), so AddPod / RemovePod can update it the way kube-scheduler does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelRequirement, LabelSelector, selector_from_set
from kubesched.api.objects import Node, Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.api.topology_spread import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    SCHEDULE_ANYWAY,
    TopologySpreadConstraint,
    parse_constraints,
)
from kubesched.cache.node_info import NodeInfo
from kubesched.config.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    NodeScore,
    PreFilterResult,
)
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.plugins import names
from kubesched.plugins.nodeaffinity import RequiredNodeAffinity, SelectorEvaluator
from kubesched.plugins.tainttoleration import DO_NOT_SCHEDULE_EFFECTS

if TYPE_CHECKING:
    from kubesched.cache.snapshot import LabelColumn, NodeInfoList, Snapshot

NAME = names.POD_TOPOLOGY_SPREAD

PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
# The default-constraint selector, deduced once per cycle and shared by PreFilter and PreScore.
_DEFAULT_SELECTOR_KEY = "DefaultSelector" + NAME

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

#: kube-scheduler's built-in defaults (defaultingType System).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(max_skew=3, topology_key=HOSTNAME_LABEL, when_unsatisfiable=SCHEDULE_ANYWAY,
                             selector=None),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE_LABEL, when_unsatisfiable=SCHEDULE_ANYWAY,
                             selector=None),
)

_MAX_INT32 = 2**31 - 1
_STATUS_MISSING_LABEL = 0
_STATUS_SKEW = 1


# -- constraints as the plugin uses them --------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Constraint:
    """A constraint with its defaults resolved and matchLabelKeys folded into the selector.

    ``selector`` None selects nothing (an omitted labelSelector).
    """

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int
    honor_affinity: bool
    honor_taints: bool

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and self.selector.matches(labels)

    @property
    def counts_pods(self) -> bool:
        """Whether existing pods can count at all: kube-scheduler counts none for an empty selector."""
        return self.selector is not None and not self.selector.empty


def resolve_constraints(constraints: Sequence[TopologySpreadConstraint], pod_labels: Mapping[str, str],
                        action: str, selector: LabelSelector | None = None,
                        use_own_selector: bool = True) -> list[Constraint]:
    """The constraints of one ``whenUnsatisfiable`` action, as kube-scheduler's filterTopologySpreadConstraints.

    ``use_own_selector`` False replaces each selector by ``selector`` (default constraints, whose
    matchLabelKeys are then ignored).
    """
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        sel = c.selector if use_own_selector else selector
        # Default constraints get the deduced selector as is: kube-scheduler overwrites the merged one.
        if use_own_selector and c.match_label_keys and sel is not None:
            extra = [LabelRequirement(key, "In", frozenset((pod_labels[key],)))
                     for key in dict.fromkeys(c.match_label_keys) if key in pod_labels]
            if extra:
                sel = LabelSelector((*extra, *sel.requirements))
        out.append(Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=sel,
            min_domains=c.min_domains if c.min_domains is not None else 1,
            honor_affinity=(c.node_affinity_policy or HONOR) == HONOR,
            honor_taints=(c.node_taints_policy or IGNORE) == HONOR,
        ))
    return out


def default_selector(pod: Pod, listers: Any) -> LabelSelector:
    """The selector default constraints use: kube-scheduler's helper.DefaultSelector.

    Selectors of the pod's namespace's Services that select it (merged, later ones winning on a
    key), then its controller: a ReplicationController's selector map is merged in too; a
    ReplicaSet's or StatefulSet's label selector requirements are added.
    """
    label_set: dict[str, str] = {}
    if listers is not None:
        for svc in listers.list("Service", pod.namespace):
            wanted = (svc.get("spec") or {}).get("selector")
            if wanted is None or not isinstance(wanted, Mapping):
                continue
            if all(pod.labels.get(k) == v for k, v in wanted.items()):
                label_set.update({str(k): str(v) for k, v in wanted.items()})
    extra: tuple[LabelRequirement, ...] = ()
    owner = next((o for o in pod.meta.owner_references if o.get("controller") is True), None)
    if owner is not None and listers is not None:
        group_version = str(owner.get("apiVersion") or "")
        kind, name = owner.get("kind"), str(owner.get("name") or "")
        parts = group_version.split("/")
        gv = ("", parts[0]) if len(parts) == 1 else (parts[0], parts[1]) if len(parts) == 2 else None
        if gv == ("", "v1") and kind == "ReplicationController":
            rc = listers.get("ReplicationController", pod.namespace, name)
            if rc is not None:
                label_set.update((rc.get("spec") or {}).get("selector") or {})
        elif gv == ("apps", "v1") and kind in ("ReplicaSet", "StatefulSet"):
            obj = listers.get(kind, pod.namespace, name)
            if obj is not None:
                try:
                    sel = LabelSelector.from_dict((obj.get("spec") or {}).get("selector"))
                except ObjectError:
                    sel = None
                if sel is not None:
                    extra = sel.requirements
    try:
        base = selector_from_set(label_set)
    except ObjectError:
        base = LabelSelector()
    return LabelSelector((*base.requirements, *extra))


# -- kube-scheduler's arithmetic ----------------------------------------------------------------------
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1, _L2, _L3, _L4 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, \
    2.222219843214978396e-01
_L5, _L6, _L7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01
_HALF_SQRT2 = math.sqrt(2) / 2
_log_cache: dict[int, float] = {}


def go_log(x: float) -> float:
    """Natural log computed as Go's math.Log does (same reduction and polynomial), bit for bit.

    Scores round ``count * log(size + 2)``, so a last-bit difference from the C library's log could
    flip a rounding; this keeps the weights identical to kube-scheduler's.
    """
    if x <= 0 or math.isnan(x) or math.isinf(x):
        return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    f1, ki = math.frexp(x)
    if f1 < _HALF_SQRT2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


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
    return (r + (x - r >= 0.5)).astype(np.int64)


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
    """Matching pods per domain of one topology key (kube-scheduler's TpPairToMatchNum for that key).

    ``sums[code]`` is the count of the domain whose value is ``column.values[code]``; domains that
    are not pairs count 0 either way. Values absent from the snapshot (only reachable through
    AddPod on a foreign node) go to ``extra``.
    """

    __slots__ = ("column", "domains", "extra", "paths", "sums")

    def __init__(self, column: LabelColumn, sums: np.ndarray, domains: int, paths: CriticalPaths,
                 extra: dict[str, int] | None = None) -> None:
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
    keys: dict[str, _KeyCounts]
    required: RequiredNodeAffinity
    tolerations: tuple[Any, ...]

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.constraints, self.self_match, {k: v.clone() for k, v in self.keys.items()},
                               self.required, self.tolerations)


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


# -- the plugin -----------------------------------------------------------------------------------------
class PodTopologySpread:
    name = NAME

    def __init__(self, default_constraints: Sequence[TopologySpreadConstraint], system_defaulted: bool,
                 handle: Any = None) -> None:
        self.handle = handle
        self.default_constraints = tuple(default_constraints)
        self.system_defaulted = system_defaulted
        self._eval = SelectorEvaluator()
        self._value_codes: dict[str, tuple[LabelColumn, dict[str, int]]] = {}

    # -- helpers --------------------------------------------------------------------------------------
    def _snapshot(self) -> Snapshot:
        return self.handle.snapshot

    def _listers(self) -> Any:
        return getattr(self.handle, "listers", None)

    def _default_selector(self, state: CycleState, pod: Pod) -> LabelSelector:
        sel = state.get(_DEFAULT_SELECTOR_KEY)
        if not isinstance(sel, LabelSelector):
            sel = default_selector(pod, self._listers())
            state.write(_DEFAULT_SELECTOR_KEY, sel)
        return sel

    def _constraints(self, state: CycleState, pod: Pod, action: str) -> list[Constraint]:
        """The pod's own constraints of ``action``, or else the default ones (when a selector is deduced)."""
        if pod.topology_spread_constraints:
            return resolve_constraints(pod.topology_spread_constraints, pod.labels, action)
        if not any(c.when_unsatisfiable == action for c in self.default_constraints):
            return []
        sel = self._default_selector(state, pod)
        if sel.empty:
            return []
        return resolve_constraints(self.default_constraints, pod.labels, action, sel, use_own_selector=False)

    def _code_of(self, column: LabelColumn, key: str, value: str) -> int | None:
        cached = self._value_codes.get(key)
        if cached is None or cached[0] is not column:
            if len(self._value_codes) > 256:
                self._value_codes.clear()
            cached = (column, {v: i for i, v in enumerate(column.values)})
            self._value_codes[key] = cached
        return cached[1].get(value)

    def _inclusion_masks(self, snapshot: Snapshot, pod: Pod, constraints: Sequence[Constraint],
                         required: RequiredNodeAffinity) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Rows passing the pod's required node affinity, and rows whose taints the pod tolerates.

        None stands for "every row" (or "not needed by any constraint").
        """
        n = len(snapshot)
        affinity = None
        if any(c.honor_affinity for c in constraints) and (required.node_selector or required.required is not None):
            affinity = self._eval.required_mask(snapshot, required, np.arange(n))
        taints = None
        if any(c.honor_taints for c in constraints):
            group_of_row, group_taints = snapshot.taint_groups()
            ok = np.fromiter(
                (find_untolerated_taint(t, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is None for t in group_taints),
                dtype=bool, count=len(group_taints))
            if not ok.all():
                taints = ok[group_of_row]
        return affinity, taints

    @staticmethod
    def _eligible(c: Constraint, base: np.ndarray | None, affinity: np.ndarray | None,
                  taints: np.ndarray | None, n: int) -> np.ndarray:
        mask = np.ones(n, dtype=bool) if base is None else base.copy()
        if c.honor_affinity and affinity is not None:
            mask &= affinity
        if c.honor_taints and taints is not None:
            mask &= taints
        return mask

    def _count(self, snapshot: Snapshot, pod: Pod, c: Constraint) -> np.ndarray:
        """Matching, non-terminating pods of the pod's namespace per snapshot row."""
        n = len(snapshot)
        if not c.counts_pods:
            return np.zeros(n, dtype=np.int64)
        return snapshot.pods.count_per_node(n, (pod.namespace,), c.selector, skip_terminating=True)

    # -- PreFilter ------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self._constraints(state, pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status(Code.SKIP)
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
        keys: dict[str, _KeyCounts] = {}
        for key, column in columns.items():
            # Within a node a later constraint on the same key overwrites the earlier one's count.
            contrib: np.ndarray | None = None
            counted: np.ndarray | None = None
            for c in constraints:
                if c.topology_key != key:
                    continue
                elig = self._eligible(c, all_keys, affinity, taints, n)
                cnt = self._count(snapshot, pod, c)
                if contrib is None or counted is None:
                    contrib, counted = np.where(elig, cnt, 0), elig
                else:
                    contrib = np.where(elig, cnt, contrib)
                    counted = counted | elig
            assert contrib is not None and counted is not None
            keys[key] = self._key_counts(column, contrib, counted)
        s = _PreFilterState(constraints, [int(c.matches(pod.labels)) for c in constraints], keys, required,
                            pod.tolerations)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    @staticmethod
    def _key_counts(column: LabelColumn, contrib: np.ndarray, counted: np.ndarray) -> _KeyCounts:
        nvals = len(column.values)
        codes = column.codes[counted]
        sums = np.bincount(codes, weights=contrib[counted], minlength=nvals).astype(np.int64)
        present = np.flatnonzero(np.bincount(codes, minlength=nvals))
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

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    @staticmethod
    def _pre_filter_state(state: CycleState) -> _PreFilterState | Status:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status(Code.ERROR, (f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',))
        return s

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

    def _update_with_pod(self, s: _PreFilterState, updated: Pod, preemptor: Pod, node: Node | None,
                         delta: int) -> None:
        if updated.namespace != preemptor.namespace or node is None:
            return
        labels = node.labels
        if any(c.topology_key not in labels for c in s.constraints):
            return
        for c in s.constraints:
            # Unlike the counting in PreFilter, any selector match counts here (terminating or not).
            if not c.matches(updated.labels):
                continue
            if not self._node_included(c, s, node):
                continue
            key = c.topology_key
            value = labels[key]
            kc = s.keys[key]
            code = self._code_of(kc.column, key, value)
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
        return not (c.honor_taints
                    and find_untolerated_taint(node.taints, s.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None)

    # -- Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return s
        node = node_info.node
        if node is None:
            return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
        labels = node.labels
        for c, self_match in zip(s.constraints, s.self_match, strict=True):
            key = c.topology_key
            value = labels.get(key)
            if value is None:
                return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            kc = s.keys[key]
            if not kc.domains:
                continue  # kube-scheduler cannot find a domain count for the key and skips it
            min_match = 0 if kc.domains < c.min_domains else kc.paths.min
            code = self._code_of(kc.column, key, value)
            match = kc.extra.get(value, 0) if code is None else int(kc.sums[code])
            if match + self_match - min_match > c.max_skew:
                return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     indices: np.ndarray) -> BatchFilterResult:
        s = self._pre_filter_state(state)
        if isinstance(s, Status):
            return BatchFilterResult.all_fail(len(indices), s)
        rows = np.asarray(indices)
        verdict = np.full(len(rows), -1, dtype=np.int32)
        for c, self_match in zip(s.constraints, s.self_match, strict=True):
            kc = s.keys[c.topology_key]
            codes = kc.column.codes[rows]
            missing = codes < 0
            verdict[missing & (verdict < 0)] = _STATUS_MISSING_LABEL
            if not kc.domains:
                continue
            min_match = 0 if kc.domains < c.min_domains else kc.paths.min
            sums = np.append(kc.sums, 0)  # code -1 reads the trailing 0
            too_many = sums[codes] > c.max_skew + min_match - self_match
            verdict[too_many & ~missing & (verdict < 0)] = _STATUS_SKEW
        return BatchFilterResult(verdict, [unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH),
                                           unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)])

    # -- PreScore -------------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        snapshot = nodes.snapshot
        n = len(snapshot)
        if n == 0:
            return Status(Code.SKIP)
        constraints = self._constraints(state, pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status(Code.SKIP)
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

        mapped: dict[str, np.ndarray] = {}
        per_key: dict[str, np.ndarray] = {}
        weights: list[float] = []
        counts: list[np.ndarray] = []
        sized: set[str] = set()
        for c, col in zip(constraints, columns, strict=True):
            key = c.topology_key
            if key == HOSTNAME_LABEL:
                weights.append(topology_normalizing_weight(len(kept)))
                cnt = self._count(snapshot, pod, c)
                counts.append(cnt)
                continue
            codes = mapped.get(key)
            if codes is None:
                codes = mapped[key] = _mapped_codes(col) if all_keys is None else col.codes
            nvals = len(col.values) + 1
            if key in sized:
                size = 0  # the domains were already credited to the first constraint on this key
            else:
                sized.add(key)
                size = int(np.count_nonzero(np.bincount(codes[kept], minlength=nvals)))
            weights.append(topology_normalizing_weight(size))
            # Every constraint on the key adds its matches into the key's shared domain counts.
            elig = self._eligible(c, all_keys, affinity, taints, n)
            cnt = self._count(snapshot, pod, c)
            add = np.bincount(codes[elig], weights=cnt[elig], minlength=nvals).astype(np.int64)
            per_key[key] = add if key not in per_key else per_key[key] + add
            counts.append(per_key[key])
        # Constraints sharing a key must all read the key's final counts.
        counts = [per_key[c.topology_key] if c.topology_key != HOSTNAME_LABEL else cnt
                  for c, cnt in zip(constraints, counts, strict=True)]
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(constraints, weights, columns, counts, ignored, snapshot))
        return None

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
                cnt = sum(1 for p in node_info.pods
                          if p.meta.deletion_timestamp is None and p.namespace == pod.namespace
                          and c.matches(p.labels)) if c.counts_pods else 0
            else:
                code = self._code_of(col, c.topology_key, value)
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
    def score_extensions(self) -> PodTopologySpread:
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

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (
            ClusterEvent("Pod", ActionType.ALL),
            ClusterEvent("Node", ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL
                         | ActionType.UPDATE_NODE_TAINT),
        )


def new(args: Any, handle: Any) -> PodTopologySpread:
    """Build the plugin from ``PodTopologySpreadArgs`` (or its raw dict form; None: kube-scheduler's defaults).

    Bad default constraints are reported here, naming the offending field.
    """
    from kubesched.config.pluginargs import PodTopologySpreadArgs

    if args is None:
        args = PodTopologySpreadArgs()
    elif isinstance(args, Mapping):
        args = PodTopologySpreadArgs.from_dict(args)
    err = ConfigError.aggregate(args.validate())
    if err is not None:
        raise err
    if args.defaulting_type == SYSTEM_DEFAULTING:
        return PodTopologySpread(SYSTEM_DEFAULT_CONSTRAINTS, True, handle)
    try:
        defaults = parse_constraints(list(args.default_constraints), "defaultConstraints")
    except ObjectError as error:
        raise ConfigError(f"args.{error.path}", error.reason) from None
    return PodTopologySpread(defaults, False, handle)
