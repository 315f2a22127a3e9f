"""InterPodAffinity: required and preferred pod (anti-)affinity, both directions.

The incoming pod's terms look for matching assigned pods, and assigned pods' terms look at the
incoming pod (symmetry). Both are answered from the snapshot's indexes rather than by walking every
pod: the incoming pod's selectors go through ``snapshot.pods`` (cost ~ matching pods) and existing
pods' terms come from ``snapshot.affinity_terms``, one match per *distinct* term, whose per-node
counts are then folded per topology domain with ``np.bincount`` over the label column's codes.

PreFilter keeps the per-domain counts both as per-key NumPy arrays (one count per label value code,
read by the batch filter) and, built on demand, as the ``(key, value) -> count`` maps kube-scheduler
uses: those are what AddPod / RemovePod adjust for nominated pods and preemption dry runs, and what
the per-node filter reads.

The incoming pod's namespace selectors are folded into namespace sets, and its terms are then
matched without namespace labels. v1.30 also dropped the selector; v1.34 keeps it, so a selector
that an unlabelled namespace satisfies (only NotIn / DoesNotExist requirements) selects pods of
every namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.labels import LabelSelector, selector_matches
from kubesched.api.objects import Node, Pod
from kubesched.api.pod_affinity import PodAffinityTerm
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.pod_index import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    ClusterEventWithHint,
    NodeScore,
    PreFilterResult,
    QueueingHint,
    minus_ones,
    queueing_hints_enabled,
)
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS, features_of

if TYPE_CHECKING:
    from kubesched.cache.snapshot import LabelColumn, NodeInfoList, Snapshot

NAME = names.INTER_POD_AFFINITY

PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

_STATUSES_ORDER = (ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY, ERR_REASON_EXISTING_ANTI_AFFINITY)

Pair = tuple[str, str]
Counts = dict[Pair, int]


# -- the incoming pod's terms ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class IncomingTerm:
    """An incoming pod's term with its namespace selector already resolved into namespaces.

    ``namespaces`` None means every namespace (a ``{}`` namespace selector). Once resolved, matching
    never needs the other pod's namespace labels, which is how kube-scheduler treats the incoming
    pod's terms.
    """

    namespaces: frozenset[str] | None
    selector: LabelSelector | None
    topology_key: str

    def matches(self, pod: Pod) -> bool:
        if self.namespaces is not None and pod.namespace not in self.namespaces:
            return False
        return selector_matches(self.selector, pod.labels)


def resolve_term(term: PodAffinityTerm, listers: Any, keep_selector: bool = False) -> IncomingTerm:
    """Fold ``term``'s namespace selector into its namespace set, using the watched namespaces.

    ``keep_selector`` (v1.34): the selector stays beside the set and is matched against no labels,
    so one that accepts an empty label set selects every namespace.
    """
    ns_selector = term.namespace_selector
    if ns_selector is not None and (ns_selector.empty or (keep_selector and ns_selector.matches({}))):
        return IncomingTerm(None, term.selector, term.topology_key)
    namespaces = term.namespaces
    if ns_selector is not None and listers is not None:
        namespaces = namespaces | frozenset(listers.namespaces_matching(ns_selector))
    return IncomingTerm(namespaces, term.selector, term.topology_key)


def matches_all(terms: Sequence[IncomingTerm], pod: Pod) -> bool:
    """Whether ``pod`` matches every term (never true for no terms)."""
    return bool(terms) and all(t.matches(pod) for t in terms)


def _bump(counts: Counts, labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    pair = (key, value)
    total = counts.get(pair, 0) + delta
    if total:
        counts[pair] = total
    else:
        counts.pop(pair, None)


# -- per-domain aggregation -----------------------------------------------------------------------------
class _DomainTotals:
    """Per topology key, a total per label value code of that key (the array form of the counts)."""

    __slots__ = ("_tables", "columns", "totals", "touched")

    def __init__(self) -> None:
        self._tables: list[tuple[np.ndarray, np.ndarray]] | None = None
        self.columns: dict[str, LabelColumn] = {}
        self.totals: dict[str, np.ndarray] = {}
        #: Some matched pod sat on a node carrying the key (an entry would exist in Go's map).
        self.touched = False

    def add(self, snapshot: Snapshot, key: str, rows: np.ndarray, counts: np.ndarray | None, factor: int) -> None:
        """Add ``factor`` x ``counts`` (1 each when None) for pods on ``rows`` to their ``key`` domain."""
        if len(rows) == 0:
            return
        column = self.columns.get(key)
        if column is None:
            column = self.columns[key] = snapshot.label_column(key)
        codes = column.codes[rows]
        present = codes >= 0
        if not present.all():
            codes = codes[present]
            if counts is not None:
                counts = counts[present]
            if len(codes) == 0:
                return
        n_values = len(column.values)
        if counts is None:
            per_code = np.bincount(codes, minlength=n_values)
        else:
            per_code = np.rint(np.bincount(codes, weights=counts, minlength=n_values)).astype(np.int64)
        if factor != 1:
            per_code = per_code * factor
        total = self.totals.get(key)
        self.totals[key] = per_code if total is None else total + per_code
        self.touched = True
        self._tables = None

    def nonzero(self) -> bool:
        return bool(self.totals) and any(bool(t.any()) for t in self.totals.values())

    def lookup_tables(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(codes of every row, totals with a trailing 0 for "key missing") per key with a nonzero total.

        Built once: the totals are final by the time anything looks nodes up.
        """
        if self._tables is None:
            self._tables = [
                (self.columns[key].codes, np.append(total, 0)) for key, total in self.totals.items() if total.any()
            ]
        return self._tables

    def as_counts(self) -> Counts:
        out: Counts = {}
        for key, total in self.totals.items():
            values = self.columns[key].values
            for code in total.nonzero()[0].tolist():
                out[(key, values[code])] = int(total[code])
        return out

    def as_score_map(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for key, total in self.totals.items():
            values = self.columns[key].values
            out[key] = {values[code]: int(total[code]) for code in total.nonzero()[0].tolist()}
        return out


# -- PreFilter state ------------------------------------------------------------------------------------
class _PreFilterState:
    """What Filter needs: the three per-domain counts, as arrays and (on demand) as Go-style maps.

    The arrays describe the snapshot as PreFilter saw it; once AddPod / RemovePod change the maps
    (on a clone), only the maps are authoritative and the batch filter falls back to them.
    """

    __slots__ = (
        "_arrays",
        "_maps",
        "affinity_terms",
        "anti_affinity_terms",
        "namespace_labels",
        "pod",
        "self_affine",
        "snapshot",
        "version",
    )

    def __init__(
        self,
        pod: Pod,
        affinity_terms: tuple[IncomingTerm, ...],
        anti_affinity_terms: tuple[IncomingTerm, ...],
        namespace_labels: Mapping[str, str],
    ) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        #: The pod matches all of its own required affinity terms (first pod of a self-affine group).
        self.self_affine = matches_all(affinity_terms, pod)
        self.snapshot: Snapshot | None = None
        self.version = -1
        #: (existing anti-affinity, affinity, anti-affinity) totals; None once the maps were edited.
        self._arrays: tuple[_DomainTotals, _DomainTotals, _DomainTotals] | None = None
        self._maps: tuple[Counts, Counts, Counts] | None = None

    def clone(self) -> _PreFilterState:
        copy = _PreFilterState.__new__(_PreFilterState)
        for slot in _PreFilterState.__slots__:
            setattr(copy, slot, getattr(self, slot))
        if self._maps is not None:
            copy._maps = (dict(self._maps[0]), dict(self._maps[1]), dict(self._maps[2]))
        return copy

    @property
    def arrays(self) -> tuple[_DomainTotals, _DomainTotals, _DomainTotals] | None:
        return self._arrays

    def maps(self) -> tuple[Counts, Counts, Counts]:
        """(existing anti-affinity, affinity, anti-affinity) counts keyed by (topology key, value)."""
        if self._maps is None:
            assert self._arrays is not None
            self._maps = (self._arrays[0].as_counts(), self._arrays[1].as_counts(), self._arrays[2].as_counts())
        return self._maps

    def update_with_pod(self, other: Pod, node: Node | None, delta: int) -> None:
        """Account ``other`` joining (+1) or leaving (-1) ``node``, as kube-scheduler's updateWithPod."""
        if node is None:
            return
        existing_anti, affinity, anti = self.maps()
        self._arrays = None
        labels = node.labels
        for term in other.pod_affinity.required_anti_affinity:
            if term.matches(self.pod, self.namespace_labels):
                _bump(existing_anti, labels, term.topology_key, delta)
        if matches_all(self.affinity_terms, other):
            for t in self.affinity_terms:
                _bump(affinity, labels, t.topology_key, delta)
        for t in self.anti_affinity_terms:
            if t.matches(other):
                _bump(anti, labels, t.topology_key, delta)

    # -- per-node verdicts (Go's satisfy* checks) --
    def satisfies_affinity(self, labels: Mapping[str, str]) -> bool:
        affinity = self.maps()[1]
        pods_exist = True
        for t in self.affinity_terms:
            value = labels.get(t.topology_key)
            if value is None:
                return False
            if affinity.get((t.topology_key, value), 0) <= 0:
                pods_exist = False
        return pods_exist or (not affinity and self.self_affine)

    def satisfies_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        anti = self.maps()[2]
        if not anti:
            return True
        for t in self.anti_affinity_terms:
            value = labels.get(t.topology_key)
            if value is not None and anti.get((t.topology_key, value), 0) > 0:
                return False
        return True

    def satisfies_existing_anti_affinity(self, labels: Mapping[str, str]) -> bool:
        existing = self.maps()[0]
        if not existing:
            return True
        return not any(existing.get(pair, 0) > 0 for pair in labels.items())


# -- PreScore state -------------------------------------------------------------------------------------
class _PreScoreState:
    """Score per topology domain, summed over every contributing term."""

    __slots__ = ("_map", "_tables", "snapshot", "totals", "version")

    def __init__(self, totals: _DomainTotals, snapshot: Snapshot) -> None:
        self.totals = totals
        self.snapshot = snapshot
        self.version = snapshot.node_objects_version
        self._tables = totals.lookup_tables()
        self._map: dict[str, dict[str, int]] | None = None

    def clone(self) -> _PreScoreState:
        return self

    def score_map(self) -> dict[str, dict[str, int]]:
        if self._map is None:
            self._map = self.totals.as_score_map()
        return self._map

    def node_score(self, labels: Mapping[str, str]) -> int:
        score = 0
        for key, per_value in self.score_map().items():
            value = labels.get(key)
            if value is not None:
                score += per_value.get(value, 0)
        return score


def _state_error(message: str) -> Status:
    return Status(Code.ERROR, (message,))


def _normalize(scores: np.ndarray) -> np.ndarray:
    """(s - min) / (max - min) scaled to 100 in float64, truncated, exactly as kube-scheduler orders it."""
    if scores.size == 0:
        return scores
    low, high = int(scores.min()), int(scores.max())
    spread = high - low
    if spread <= 0:
        return np.zeros(scores.shape, dtype=np.int64)
    shifted = (scores - low).astype(np.float64)
    return (float(MAX_NODE_SCORE) * (shifted / float(spread))).astype(np.int64)


# -- the plugin -----------------------------------------------------------------------------------------
class InterPodAffinity:
    name = NAME

    def __init__(
        self,
        hard_pod_affinity_weight: int = 1,
        ignore_preferred_terms_of_existing_pods: bool = False,
        handle: Any = None,
    ) -> None:
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = ignore_preferred_terms_of_existing_pods
        self.handle = handle
        #: v1.34 keeps the incoming pod's namespace selectors (see :func:`resolve_term`).
        self.keep_namespace_selector = features_of(handle).at_least("1.34")

    # -- helpers --
    def _snapshot(self) -> Snapshot:
        snapshot: Snapshot = self.handle.snapshot
        return snapshot

    def _listers(self) -> Any:
        return getattr(self.handle, "listers", None)

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        listers = self._listers()
        labels = listers.namespace_labels(namespace) if listers is not None else None
        return labels if labels is not None else {}

    # -- PreFilter ------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        snapshot = self._snapshot()
        aff = pod.pod_affinity
        if not (
            aff.required_affinity or aff.required_anti_affinity or snapshot.affinity_terms.terms(REQUIRED_ANTI_AFFINITY)
        ):
            return None, SKIP_STATUS  # what the full check below ends in, without resolving anything
        listers = self._listers()
        s = _PreFilterState(
            pod,
            tuple(resolve_term(t, listers, self.keep_namespace_selector) for t in aff.required_affinity),
            tuple(resolve_term(t, listers, self.keep_namespace_selector) for t in aff.required_anti_affinity),
            self._namespace_labels(pod.namespace),
        )
        existing_anti = _DomainTotals()
        for tc in snapshot.affinity_terms.terms(REQUIRED_ANTI_AFFINITY):
            if tc.term.matches(pod, s.namespace_labels):
                rows, counts = tc.arrays()
                existing_anti.add(snapshot, tc.term.topology_key, rows, counts, 1)
        if not s.affinity_terms and not s.anti_affinity_terms and not existing_anti.nonzero():
            return None, SKIP_STATUS
        affinity = _DomainTotals()
        if s.affinity_terms:
            rows = self._rows_matching_all(snapshot, s.affinity_terms)
            for t in s.affinity_terms:
                affinity.add(snapshot, t.topology_key, rows, None, 1)
        anti = _DomainTotals()
        for t in s.anti_affinity_terms:
            anti.add(snapshot, t.topology_key, snapshot.pods.rows_matching(t.namespaces, t.selector), None, 1)
        s.snapshot, s.version = snapshot, snapshot.node_objects_version
        s._arrays = (existing_anti, affinity, anti)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    @staticmethod
    def _rows_matching_all(snapshot: Snapshot, terms: Sequence[IncomingTerm]) -> np.ndarray:
        """Node rows of the assigned pods matching every term (one entry per pod)."""
        first, rest = terms[0], terms[1:]
        if not rest:
            return snapshot.pods.rows_matching(first.namespaces, first.selector)
        rows = [
            row
            for other, row in snapshot.pods.pods_matching(first.namespaces, first.selector)
            if all(t.matches(other) for t in rest)
        ]
        return np.asarray(rows, dtype=np.int64)

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return _state_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        s.update_with_pod(pod_to_add, node_info.node, 1)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return _state_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        s.update_with_pod(pod_to_remove, node_info.node, -1)
        return None

    # -- Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return _state_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        labels: Mapping[str, str] = node.labels if node is not None else {}
        if not s.satisfies_affinity(labels):
            return unresolvable(ERR_REASON_AFFINITY)
        if not s.satisfies_anti_affinity(labels):
            return unschedulable(ERR_REASON_ANTI_AFFINITY)
        if not s.satisfies_existing_anti_affinity(labels):
            return unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        rows = np.asarray(indices, dtype=np.int64)
        statuses = [
            unresolvable(ERR_REASON_AFFINITY),
            unschedulable(ERR_REASON_ANTI_AFFINITY),
            unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY),
        ]
        s = state.get(PRE_FILTER_STATE_KEY)
        if (
            not isinstance(s, _PreFilterState)
            or s.arrays is None
            or s.snapshot is not snapshot
            or s.version != snapshot.node_objects_version
        ):
            return self._filter_each(state, pod, snapshot, rows)
        existing_anti, affinity, anti = s.arrays
        verdict = minus_ones(len(rows))
        if s.affinity_terms:
            has_keys = np.ones(len(rows), dtype=bool)
            pods_exist = np.ones(len(rows), dtype=bool)
            for key in dict.fromkeys(t.topology_key for t in s.affinity_terms):
                codes = snapshot.label_column(key).codes[rows]
                has_keys &= codes >= 0
                total = affinity.totals.get(key)
                if total is None:
                    pods_exist[:] = False
                else:
                    pods_exist &= np.append(total, 0)[codes] > 0
            passed = has_keys & pods_exist
            if s.self_affine and not affinity.nonzero():
                passed = has_keys
            verdict[~passed] = 0
        for slot, totals in ((1, anti), (2, existing_anti)):
            rejected = np.zeros(len(rows), dtype=bool)
            for codes, table in totals.lookup_tables():
                rejected |= table[codes[rows]] > 0
            verdict[(verdict < 0) & rejected] = slot
        return BatchFilterResult(verdict, statuses)

    def _filter_each(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray) -> BatchFilterResult:
        """The batch verdicts from the per-node form (state edited by AddPod/RemovePod, or missing)."""
        verdict = minus_ones(len(rows))
        statuses: list[Status] = []
        infos = snapshot.node_infos
        for k, row in enumerate(rows.tolist()):
            status = self.filter(state, pod, infos[row])
            if status is not None:
                statuses.append(status)
                verdict[k] = len(statuses) - 1
        return BatchFilterResult(verdict, statuses)

    # -- PreScore / Score -------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList | Sequence[NodeInfo]) -> Status | None:
        if len(nodes) == 0:
            return SKIP_STATUS
        aff = pod.pod_affinity
        has_preferences = bool(aff.preferred_affinity or aff.preferred_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_preferences:
            return SKIP_STATUS
        snapshot = getattr(nodes, "snapshot", None)
        if snapshot is None:
            snapshot = self._snapshot()
        terms = snapshot.affinity_terms
        if not (
            has_preferences
            or terms.terms(PREFERRED_AFFINITY)
            or terms.terms(PREFERRED_ANTI_AFFINITY)
            or (self.hard_pod_affinity_weight > 0 and terms.terms(REQUIRED_AFFINITY))
        ):
            return SKIP_STATUS  # no term to count, on either side: the loops below touch nothing
        listers = self._listers()
        totals = _DomainTotals()
        for weighted_terms, sign in ((aff.preferred_affinity, 1), (aff.preferred_anti_affinity, -1)):
            for wt in weighted_terms:
                t = resolve_term(wt.term, listers, self.keep_namespace_selector)
                rows = snapshot.pods.rows_matching(t.namespaces, t.selector)
                totals.add(snapshot, t.topology_key, rows, None, sign * wt.weight)
        ns_labels = self._namespace_labels(pod.namespace)
        kinds: list[tuple[int, int | None]] = [(PREFERRED_AFFINITY, None), (PREFERRED_ANTI_AFFINITY, None)]
        if self.hard_pod_affinity_weight > 0:
            kinds.insert(0, (REQUIRED_AFFINITY, self.hard_pod_affinity_weight))
        for kind, fixed_weight in kinds:
            sign = -1 if kind == PREFERRED_ANTI_AFFINITY else 1
            for tc in snapshot.affinity_terms.terms(kind):
                if tc.term.matches(pod, ns_labels):
                    rows, counts = tc.arrays()
                    weight = fixed_weight if fixed_weight is not None else tc.weight
                    totals.add(snapshot, tc.term.topology_key, rows, counts, sign * weight)
        if not totals.touched:
            return SKIP_STATUS
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(totals, snapshot))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return 0, _state_error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        return (s.node_score(node.labels) if node is not None else 0), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> np.ndarray:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            raise RuntimeError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        snapshot = nodes.snapshot
        if snapshot is not s.snapshot or snapshot.node_objects_version != s.version:
            return np.fromiter((self.score(state, pod, info)[0] for info in nodes), dtype=np.int64, count=len(nodes))
        rows = np.asarray(nodes.indices, dtype=np.int64)
        total = np.zeros(len(rows), dtype=np.int64)
        for codes, table in s._tables:
            total += table[codes[rows]]
        return total

    # -- NormalizeScore ---------------------------------------------------------------------------------
    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        if not isinstance(state.get(PRE_SCORE_STATE_KEY), _PreScoreState):
            return _state_error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        if not scores:
            return None
        low = min(s.score for s in scores)
        spread = max(s.score for s in scores) - low
        for s in scores:
            s.score = int(float(MAX_NODE_SCORE) * (float(s.score - low) / float(spread))) if spread > 0 else 0
        return None

    def normalize_scores(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        if not isinstance(state.get(PRE_SCORE_STATE_KEY), _PreScoreState):
            raise RuntimeError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        return _normalize(np.asarray(scores, dtype=np.int64))

    # -- queueing -------------------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        # Pods coming, going or relabelled change what matches; a node that is added, relabelled (new
        # topology domains) or untainted (added while not ready) may now host the pod.
        if queueing_hints_enabled(self.handle):
            return (
                ClusterEventWithHint(
                    ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                    is_schedulable_after_pod_change,
                ),
                ClusterEventWithHint(
                    ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                    is_schedulable_after_node_change,
                ),
            )
        return (
            ClusterEvent("Pod", ActionType.ALL),
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
        )


def _matches_all(terms: Sequence[PodAffinityTerm], pod: Pod) -> bool:
    """Whether one pod satisfies every term (required affinity asks a single pod for all of them)."""
    return bool(terms) and all(term.matches(pod, None) for term in terms)


def is_schedulable_after_pod_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A bound pod that now satisfies the pod's affinity (added, or relabelled into it), or that no
    longer trips its anti-affinity (deleted, or relabelled out of it)."""
    if (new_obj is not None and not new_obj.node_name) or (old_obj is not None and not old_obj.node_name):
        return QueueingHint.QUEUE_SKIP
    affinity = pod.pod_affinity
    terms, anti_terms = affinity.required_affinity, affinity.required_anti_affinity
    if new_obj is not None and old_obj is not None:
        if not _matches_all(terms, old_obj) and _matches_all(terms, new_obj):
            return QueueingHint.QUEUE
        if _matches_all(anti_terms, old_obj) and not _matches_all(anti_terms, new_obj):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if new_obj is not None:
        return QueueingHint.QUEUE if _matches_all(terms, new_obj) else QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if _matches_all(anti_terms, old_obj) else QueueingHint.QUEUE_SKIP


def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A node that brings an affinity topology key (new, gained, or another domain), any new node
    for anti-affinity, or a node that left an anti-affinity domain."""
    affinity = pod.pod_affinity
    new_labels = new_obj.labels
    old_labels = old_obj.labels if old_obj is not None else None
    for term in affinity.required_affinity:
        key = term.topology_key
        if old_labels is None:
            if key in new_labels:
                return QueueingHint.QUEUE
        elif key in new_labels and (key not in old_labels or old_labels[key] != new_labels[key]):
            return QueueingHint.QUEUE
    for term in affinity.required_anti_affinity:
        key = term.topology_key
        if old_labels is None:
            return QueueingHint.QUEUE
        if key in old_labels and (key not in new_labels or old_labels[key] != new_labels[key]):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: Any, handle: Handle) -> InterPodAffinity:
    """Build the plugin from ``InterPodAffinityArgs`` (its raw dict form, or None for the defaults)."""
    from kubesched.config.pluginargs import InterPodAffinityArgs

    if args is None or isinstance(args, Mapping):
        args = InterPodAffinityArgs.from_dict(args)
    errors = args.validate()
    if errors:
        raise ValueError("; ".join(str(e) for e in errors))
    return InterPodAffinity(args.hard_pod_affinity_weight, args.ignore_preferred_terms_of_existing_pods, handle)
