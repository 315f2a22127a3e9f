"""TaintToleration: hard taints (NoSchedule, NoExecute) filter, PreferNoSchedule taints score.

The filter's reason names the first untolerated taint in v1.30 (``{key: value}``); v1.34 says
``node(s) had untolerated taint(s)`` whatever the taint, so every such node shares one reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Taint,
    Toleration,
    find_untolerated_taint,
)
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
    QueueingHint,
    minus_ones,
    queueing_hints_enabled,
)
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins import names
from kubesched.plugins.helper import IdentityMemo, default_normalize_score, features_of, normalize_score_array

if TYPE_CHECKING:
    from kubesched.cache.snapshot import NodeInfoList, Snapshot

T = TypeVar("T")

NAME = names.TAINT_TOLERATION

PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"
#: The filter's reason from v1.34 on.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

#: Taint effects that keep a pod off a node (the filter's concern).
DO_NOT_SCHEDULE_EFFECTS = frozenset((NO_SCHEDULE, NO_EXECUTE))


def untolerated_reason(taint: Taint) -> str:
    """The v1.30 reason, naming the taint."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """Tolerations that can match a PreferNoSchedule taint (that effect, or any effect)."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> int:
    return sum(
        1 for taint in taints if taint.effect == PREFER_NO_SCHEDULE and not any(t.tolerates(taint) for t in tolerations)
    )


def _first_untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    return find_untolerated_taint(taints, tolerations, DO_NOT_SCHEDULE_EFFECTS)


class _PerGroup(Generic[T]):
    """One answer per taint group of a snapshot (see Snapshot.taint_groups) for one tolerations tuple,
    kept while both are the same objects: a snapshot replaces its group list (never changes it) when
    taints change, and pods of one spec share their parsed tolerations. The three are kept as one
    tuple, replaced whole, so a reader never sees answers with another pair's keys."""

    __slots__ = ("_answer", "_kept")

    def __init__(self, answer: Callable[[Sequence[Taint], Sequence[Toleration]], T]) -> None:
        self._answer = answer
        self._kept: tuple[list[tuple[Taint, ...]], Sequence[Toleration], list[T]] | None = None

    def answers(self, groups: list[tuple[Taint, ...]], tolerations: Sequence[Toleration]) -> list[T]:
        kept = self._kept
        if kept is None or kept[0] is not groups or kept[1] is not tolerations:
            answer = self._answer
            kept = self._kept = (groups, tolerations, [answer(taints, tolerations) for taints in groups])
        return kept[2]


class _PreScoreState:
    """The pod's PreferNoSchedule-relevant tolerations; never changes within a cycle."""

    __slots__ = ("tolerations",)

    def __init__(self, tolerations: tuple[Toleration, ...]) -> None:
        self.tolerations = tolerations

    def clone(self) -> _PreScoreState:
        return self


class TaintToleration:
    name = NAME
    #: Filter reads the node's taints, never its pods.
    filter_reads_node_only = True

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle
        self._names_taint = not features_of(handle).at_least("1.34")
        #: PreScore's state per parsed tolerations tuple (pods of one spec share theirs).
        self._pre_score_states: IdentityMemo[tuple[Toleration, ...], _PreScoreState] = IdentityMemo()
        #: The last per-group answers of Filter and of Score, with the group list and tolerations they are for.
        self._kept_untolerated: _PerGroup[Taint | None] = _PerGroup(_first_untolerated)
        self._kept_counts: _PerGroup[int] = _PerGroup(count_intolerable_prefer_no_schedule)

    def _reason(self, taint: Taint) -> str:
        return untolerated_reason(taint) if self._names_taint else ERR_REASON_UNTOLERATED

    # -- Filter -----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return None
        taint = find_untolerated_taint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
        return None if taint is None else unresolvable(self._reason(taint))

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        """One toleration check per distinct taint list, then a gather over the nodes."""
        group_of_node, group_taints = snapshot.taint_groups()
        untolerated = self._kept_untolerated.answers(group_taints, pod.tolerations)
        if not any(untolerated):
            return BatchFilterResult.all_pass(len(indices))
        statuses: list[Status] = []
        by_reason: dict[str, int] = {}
        verdict = minus_ones(len(group_taints))
        for group, taint in enumerate(untolerated):
            if taint is None:
                continue
            reason = self._reason(taint)
            slot = by_reason.get(reason)
            if slot is None:
                slot = by_reason[reason] = len(statuses)
                statuses.append(unresolvable(reason))
            verdict[group] = slot
        return BatchFilterResult(verdict[group_of_node[indices]], statuses)

    # -- PreScore / Score -------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        if len(nodes) == 0:
            return None
        tolerations = pod.tolerations
        s = self._pre_score_states.get(tolerations)
        if s is None:
            s = self._pre_score_states.put(tolerations, _PreScoreState(prefer_no_schedule_tolerations(tolerations)))
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def _tolerations(self, state: CycleState, pod: Pod) -> tuple[Toleration, ...]:
        # Without PreScore (a direct call) the tolerations are computed on the fly instead of
        # failing as kube-scheduler does; the result is the same.
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            return s.tolerations
        return prefer_no_schedule_tolerations(pod.tolerations)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        if node is None:
            return 0, None
        return count_intolerable_prefer_no_schedule(node.taints, self._tolerations(state, pod)), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> np.ndarray:
        tolerations = self._tolerations(state, pod)
        group_of_node, group_taints = nodes.snapshot.taint_groups()
        counts = self._kept_counts.answers(group_taints, tolerations)
        if not any(counts):  # no PreferNoSchedule taint the pod does not tolerate, on any node
            return np.zeros(len(nodes.indices), dtype=np.int64)
        per_node: np.ndarray = np.array(counts, dtype=np.int64)[group_of_node[nodes.indices]]
        return per_node

    # -- NormalizeScore ---------------------------------------------------------------------------
    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def normalize_scores(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return normalize_score_array(MAX_NODE_SCORE, True, scores)

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if not queueing_hints_enabled(self.handle):
            return (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),)
        return (
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.UPDATE_POD_TOLERATION), self.is_schedulable_after_pod_toleration_change
            ),
        )

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A node whose hard taints the pod did not tolerate (or a new one) and now does."""
        was_untolerated = (
            old_obj is None
            or find_untolerated_taint(old_obj.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
        )
        is_untolerated = find_untolerated_taint(new_obj.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
        return QueueingHint.QUEUE if was_untolerated and not is_untolerated else QueueingHint.QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """The rejected pod itself got a toleration."""
        return QueueingHint.QUEUE if new_obj.uid == pod.uid else QueueingHint.QUEUE_SKIP


def new(args: Any, handle: Handle) -> TaintToleration:
    return TaintToleration(handle)
