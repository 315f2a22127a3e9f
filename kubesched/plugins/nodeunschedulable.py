"""NodeUnschedulable: keep pods off cordoned nodes unless they tolerate the cordon taint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.taints import NO_SCHEDULE, Taint
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    queueing_hints_enabled,
)
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins import names

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

NAME = names.NODE_UNSCHEDULABLE

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"

#: The taint a cordoned node is treated as carrying (``node.kubernetes.io/unschedulable:NoSchedule``).
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", value="", effect=NO_SCHEDULE)


def tolerates_unschedulable(pod: Pod) -> bool:
    return any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations)


class NodeUnschedulable:
    name = NAME
    #: Reads the node's spec.unschedulable and taints, never its pods.
    filter_reads_node_only = True

    def __init__(self, queueing_hints: bool = True) -> None:
        self.queueing_hints = queueing_hints
        #: The last cordon column seen and whether any node in it is cordoned. A snapshot replaces a
        #: column when a node changes (never writes it in place), so the same array has the same answer.
        self._seen: tuple[np.ndarray | None, bool] = (None, False)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None or not node.unschedulable:
            return None
        if tolerates_unschedulable(pod):
            return None
        return unresolvable(ERR_REASON_UNSCHEDULABLE)

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        # No cordoned node (the usual case, known from the kept column) or a tolerant pod: all pass.
        column = self._cordoned(snapshot)
        seen, any_cordoned = self._seen
        if column is not seen:
            any_cordoned = bool(column.any())
            self._seen = (column, any_cordoned)
        if not any_cordoned or tolerates_unschedulable(pod):
            return BatchFilterResult.all_pass(len(indices))
        cordoned = column[indices]
        if not cordoned.any():
            return BatchFilterResult.all_pass(len(indices))
        return BatchFilterResult.from_mask(~cordoned, unresolvable(ERR_REASON_UNSCHEDULABLE))

    @staticmethod
    def _cordoned(snapshot: Snapshot) -> np.ndarray:
        return snapshot.node_column(_unschedulable, bool)

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if not self.queueing_hints:
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
        """A node that is added schedulable, or that stops being unschedulable."""
        if (old_obj is None and not new_obj.unschedulable) or (
            old_obj is not None and old_obj.unschedulable and not new_obj.unschedulable
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """The rejected pod itself now tolerating the cordon taint."""
        if new_obj.uid == pod.uid and tolerates_unschedulable(new_obj):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _unschedulable(node: Node) -> bool:
    return node.unschedulable


def new(args: Any, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable(queueing_hints_enabled(handle))
