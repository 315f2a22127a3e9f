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
from kubesched.framework.interfaces import ActionType, BatchFilterResult, ClusterEvent
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

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None or not node.unschedulable:
            return None
        if tolerates_unschedulable(pod):
            return None
        return unresolvable(ERR_REASON_UNSCHEDULABLE)

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                     indices: np.ndarray) -> BatchFilterResult:
        if tolerates_unschedulable(pod):
            return BatchFilterResult.all_pass(len(indices))
        cordoned = self._cordoned(snapshot)[indices]
        return BatchFilterResult.from_mask(~cordoned, unresolvable(ERR_REASON_UNSCHEDULABLE))

    @staticmethod
    def _cordoned(snapshot: Snapshot) -> np.ndarray:
        return snapshot.node_column(_unschedulable, bool)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),)


def _unschedulable(node: Node) -> bool:
    return node.unschedulable


def new(args: Any, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
