"""DedicatedNodes: a Filter plugin that keeps dedicated nodes for the teams they belong to.

A node labelled ``dedicated=<team>`` only takes pods labelled ``team=<team>``; other nodes take
anyone. Because a rejected pod can only become schedulable when a node's labels change or a node
is added, the plugin registers exactly those events (EnqueueExtensions): the queue then retries its
pods on a relabelled node, and does not wake them for pod churn that cannot help them. Its queueing
hint narrows that further (kube-scheduler v1.34): only a node the pod may now use wakes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.framework.interfaces import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.framework.status import Code, Status


class DedicatedNodes:
    name = "DedicatedNodes"

    def __init__(self, args: dict[str, Any] | None, handle: Any) -> None:
        args = args or {}
        self.node_label = args.get("nodeLabel", "dedicated")
        self.pod_label = args.get("podLabel", "team")

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        owner = node_info.node.labels.get(self.node_label)
        if owner is None or pod.labels.get(self.pod_label) == owner:
            return None
        return Status(Code.UNSCHEDULABLE, (f"node(s) are dedicated to another {self.pod_label}",))

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                                     self.is_schedulable_after_node_change)]

    def is_schedulable_after_node_change(self, pod: Any, old_node: Any, new_node: Any) -> QueueingHint:
        """A node added or relabelled helps the pod only if it now takes the pod's team."""
        owner = new_node.labels.get(self.node_label)
        if owner is None or pod.labels.get(self.pod_label) == owner:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
