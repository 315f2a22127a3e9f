"""NodeAffinity: ``nodeSelector``, required / preferred node affinity, and the profile's added affinity.

The batch forms evaluate each selector requirement once per distinct value of its label key (via
the snapshot's label columns) and gather the verdicts per node, instead of matching every node's
labels one by one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.labels import (
    DOES_NOT_EXIST,
    EXISTS,
    IN,
    NODE_NAME_FIELD,
    NOT_IN,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from kubesched.api.node_affinity import RequiredNodeAffinity
from kubesched.api.objects import Node, Pod
from kubesched.api.objects import NodeAffinity as NodeAffinitySpec
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    ClusterEventWithHint,
    NodeScore,
    PreFilterExtensions,
    PreFilterResult,
    QueueingHint,
    minus_ones,
    queueing_hints_enabled,
)
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS, default_normalize_score

if TYPE_CHECKING:
    from kubesched.cache.snapshot import LabelColumn, NodeInfoList, Snapshot

NAME = names.NODE_AFFINITY

PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_STATUS_ENFORCED = 0
_STATUS_POD = 1


# -- per-pod compiled state --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The pod's preferred terms that can count (kube-scheduler drops empty preferences)."""

    preferred: tuple[PreferredSchedulingTerm, ...]

    def clone(self) -> _PreScoreState:
        return self


def scoring_terms(terms: Iterable[PreferredSchedulingTerm]) -> tuple[PreferredSchedulingTerm, ...]:
    return tuple(t for t in terms if t.weight != 0 and not t.preference.empty)


def preferred_score(terms: Sequence[PreferredSchedulingTerm], node: Node) -> int:
    labels, name = node.labels, node.name
    return sum(t.weight for t in terms if t.preference.matches(labels, name))


def pinned_node_names(required: NodeSelector) -> frozenset[str] | None:
    """Node names the required terms restrict the pod to via ``matchFields metadata.name In``.

    None when some term does not pin names (terms are ORed, so any node may then match); an
    empty set when every term pins names but each to an empty intersection.
    """
    names_union: set[str] = set()
    for term in required.terms:
        term_names: set[str] | None = None
        for req in term.match_fields:
            if req.key == NODE_NAME_FIELD and req.operator == IN:
                term_names = set(req.values) if term_names is None else term_names & req.values
        if term_names is None:
            return None
        names_union |= term_names
    return frozenset(names_union)


def _has_node_selector(pod: Pod) -> bool:
    """Whether ``spec.nodeSelector`` is set at all (``{}`` counts, as a non-nil Go map does)."""
    spec = pod.raw.get("spec") or {}
    return bool(pod.node_selector) or spec.get("nodeSelector") is not None


def _has_preferred_field(pod: Pod) -> bool:
    """Whether the pod sets preferred node affinity at all (an empty list counts, as in Go)."""
    if pod.node_affinity is not None and pod.node_affinity.preferred:
        return True
    node_affinity = pod.affinity.get("nodeAffinity") or {}
    return node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") is not None


# -- vectorised evaluation -----------------------------------------------------------------------------
class SelectorEvaluator:
    """Evaluates selectors over snapshot rows, one decision per distinct label value.

    ``In``/``NotIn`` look their values up through the column's value -> code map, so they cost
    O(len(values)) rather than a pass over every distinct value.
    """

    def _per_value(self, req: NodeSelectorRequirement, column: LabelColumn) -> np.ndarray:
        """The requirement's verdict for each distinct value of its label key."""
        n = len(column.values)
        op = req.operator
        if op == EXISTS:
            return np.ones(n, dtype=bool)
        if op == DOES_NOT_EXIST:
            return np.zeros(n, dtype=bool)
        if op in (IN, NOT_IN):
            listed = np.zeros(n, dtype=bool)
            for value in req.values:
                pos = column.code_of(value)
                if pos is not None:
                    listed[pos] = True
            return listed if op == IN else ~listed
        return np.fromiter((req.matches_value(v) for v in column.values), dtype=bool, count=n)

    def label_mask(self, snapshot: Snapshot, req: NodeSelectorRequirement, rows: np.ndarray) -> np.ndarray:
        column = snapshot.label_column(req.key)
        table = np.append(self._per_value(req, column), req.matches_value(None))
        mask: np.ndarray = table[column.codes[rows]]
        return mask

    @staticmethod
    def field_mask(snapshot: Snapshot, req: NodeSelectorRequirement, rows: np.ndarray) -> np.ndarray:
        # Only metadata.name with In / NotIn and one value gets past parsing.
        matched = np.zeros(len(rows), dtype=bool)
        for value in req.values:
            row = snapshot.index.get(value)
            if row is not None:
                matched |= rows == row
        return matched if req.operator == IN else ~matched

    def term_mask(self, snapshot: Snapshot, term: NodeSelectorTerm, rows: np.ndarray) -> np.ndarray:
        if term.empty:
            return np.zeros(len(rows), dtype=bool)
        mask = np.ones(len(rows), dtype=bool)
        for req in term.match_expressions:
            mask &= self.label_mask(snapshot, req, rows)
        for req in term.match_fields:
            mask &= self.field_mask(snapshot, req, rows)
        return mask

    def selector_mask(self, snapshot: Snapshot, selector: NodeSelector, rows: np.ndarray) -> np.ndarray:
        mask = np.zeros(len(rows), dtype=bool)
        for term in selector.terms:
            mask |= self.term_mask(snapshot, term, rows)
        return mask

    def equals_mask(
        self, snapshot: Snapshot, labels: Mapping[str, str] | Iterable[tuple[str, str]], rows: np.ndarray
    ) -> np.ndarray:
        mask = np.ones(len(rows), dtype=bool)
        pairs = labels.items() if isinstance(labels, Mapping) else labels
        for key, value in pairs:
            column = snapshot.label_column(key)
            pos = column.code_of(value)
            if pos is None:
                return np.zeros(len(rows), dtype=bool)
            mask &= column.codes[rows] == pos
        return mask

    def required_mask(self, snapshot: Snapshot, required: RequiredNodeAffinity, rows: np.ndarray) -> np.ndarray:
        mask = self.equals_mask(snapshot, required.node_selector, rows)
        if required.required is not None:
            mask &= self.selector_mask(snapshot, required.required, rows)
        return mask

    def preferred_scores(
        self, snapshot: Snapshot, terms: Sequence[PreferredSchedulingTerm], rows: np.ndarray
    ) -> np.ndarray:
        total = np.zeros(len(rows), dtype=np.int64)
        for term in terms:
            total += term.weight * self.term_mask(snapshot, term.preference, rows)
        return total


# -- the plugin -------------------------------------------------------------------------------------------
class NodeAffinity:
    name = NAME
    #: Filter reads the node's labels and name, never its pods.
    filter_reads_node_only = True

    def __init__(self, added: NodeAffinitySpec | None = None, handle: Any = None) -> None:
        self.handle = handle
        #: Scheduler-enforced required selector (None when the profile adds none).
        self.added_selector: NodeSelector | None = added.required if added is not None else None
        #: Scheduler-added preferred terms (None when none are configured).
        added_terms = scoring_terms(added.preferred) if added is not None else ()
        self.added_preferred: tuple[PreferredSchedulingTerm, ...] | None = (
            added_terms if added is not None and added.preferred else None
        )
        self._eval = SelectorEvaluator()
        # The added selector's verdict over all snapshot rows, per node-object version.
        self._added_mask: tuple[Snapshot, int, np.ndarray] | None = None

    # -- PreFilter ------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        required = pod.node_affinity.required if pod.node_affinity is not None else None
        if required is None and self.added_selector is None and not _has_node_selector(pod):
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, RequiredNodeAffinity.of(pod))
        if required is None or not required.terms:
            return None, None
        pinned = pinned_node_names(required)
        if pinned is None:
            return None, None
        if not pinned:
            return None, unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(pinned), None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _required(self, state: CycleState, pod: Pod) -> RequiredNodeAffinity:
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, RequiredNodeAffinity):
            return s
        # PreFilter did not run (or was disabled): compile now and keep it for the next node.
        s = RequiredNodeAffinity.of(pod)
        state.write(PRE_FILTER_STATE_KEY, s)
        return s

    # -- Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return unresolvable(ERR_REASON_POD)
        if self.added_selector is not None and not self.added_selector.matches(node.labels, node.name):
            return unresolvable(ERR_REASON_ENFORCED)
        if not self._required(state, pod).matches(node):
            return unresolvable(ERR_REASON_POD)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        rows = np.asarray(indices)
        verdict = minus_ones(len(rows))
        pod_ok = self._eval.required_mask(snapshot, self._required(state, pod), rows)
        verdict[~pod_ok] = _STATUS_POD
        if self.added_selector is not None:
            verdict[~self._added_rows(snapshot)[rows]] = _STATUS_ENFORCED
        return BatchFilterResult(verdict, [unresolvable(ERR_REASON_ENFORCED), unresolvable(ERR_REASON_POD)])

    def _added_rows(self, snapshot: Snapshot) -> np.ndarray:
        cached = self._added_mask
        if cached is not None and cached[0] is snapshot and cached[1] == snapshot.node_objects_version:
            return cached[2]
        assert self.added_selector is not None
        mask = self._eval.selector_mask(snapshot, self.added_selector, np.arange(len(snapshot)))
        self._added_mask = (snapshot, snapshot.node_objects_version, mask)
        return mask

    # -- PreScore / Score -------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        if len(nodes) == 0:
            return None
        if not _has_preferred_field(pod) and self.added_preferred is None:
            return SKIP_STATUS
        state.write(PRE_SCORE_STATE_KEY, self._pre_score_state(pod))
        return None

    @staticmethod
    def _pre_score_state(pod: Pod) -> _PreScoreState:
        affinity = pod.node_affinity
        return _PreScoreState(scoring_terms(affinity.preferred) if affinity is not None else ())

    def _scoring_terms(self, state: CycleState, pod: Pod) -> tuple[PreferredSchedulingTerm, ...]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            # PreScore did not run: compute from the pod, as kube-scheduler falls back to.
            s = self._pre_score_state(pod)
            state.write(PRE_SCORE_STATE_KEY, s)
        return (*(self.added_preferred or ()), *s.preferred)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        if node is None:
            return 0, None
        return preferred_score(self._scoring_terms(state, pod), node), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> np.ndarray:
        return self._eval.preferred_scores(nodes.snapshot, self._scoring_terms(state, pod), np.asarray(nodes.indices))

    # -- NormalizeScore ---------------------------------------------------------------------------------
    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_scores(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if not queueing_hints_enabled(self.handle):
            return (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),)
        return (
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            ),
        )

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A node added that matches the pod's required affinity (and the profile's added one), or a
        node that did not match and now does."""
        node: Node = new_obj
        if self.added_selector is not None and not self.added_selector.matches(node.labels, node.name):
            return QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity.of(pod)
        if not required.matches(node):
            return QueueingHint.QUEUE_SKIP
        if old_obj is None or not required.matches(old_obj):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def new(args: Any, handle: Handle) -> NodeAffinity:
    """Build the plugin; ``args`` is a ``NodeAffinityArgs`` (or its raw dict form, or None)."""
    if isinstance(args, Mapping):
        from kubesched.config.pluginargs import NodeAffinityArgs

        args = NodeAffinityArgs.from_dict(args)
    raw = getattr(args, "added_affinity", None) if args is not None else None
    added = NodeAffinitySpec.from_dict(raw) if raw is not None else None
    return NodeAffinity(added, handle)
