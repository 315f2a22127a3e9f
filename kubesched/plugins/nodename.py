"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import ActionType, BatchFilterResult, ClusterEvent, queueing_hints_enabled
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins import names

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

NAME = names.NODE_NAME

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    return not pod.node_name or pod.node_name == node_info.name


class NodeName:
    name = NAME
    #: Reads the node's name only.
    filter_reads_node_only = True

    def __init__(self, queueing_hints: bool = True) -> None:
        self.queueing_hints = queueing_hints

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None if fits(pod, node_info) else unresolvable(ERR_REASON)

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        if not pod.node_name:
            return BatchFilterResult.all_pass(len(indices))
        row = snapshot.index.get(pod.node_name)
        passed = np.zeros(len(indices), dtype=bool) if row is None else np.asarray(indices) == row
        return BatchFilterResult.from_mask(passed, unresolvable(ERR_REASON))

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """Only a new node can be the named one (with hints; v1.30 also hears every node update)."""
        if not self.queueing_hints:
            return (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),)
        return (ClusterEvent("Node", ActionType.ADD),)


def new(args: Any, handle: Handle) -> NodeName:
    return NodeName(queueing_hints_enabled(handle))
