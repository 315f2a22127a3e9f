"""PodTopologySpread's queueing hints (v1.34): which pod and node changes may let a pod it rejected spread.

Only the pod's hard (``DoNotSchedule``) constraints can have rejected it; a pod's own constraints are
parsed once per pod, default constraints are resolved on each call (their selector comes from the
Services and controllers that select the pod, which may change).
"""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.api.topology_spread import DO_NOT_SCHEDULE
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import QueueingHint
from kubesched.plugins.podtopologyspread.common import Constraint, PodTopologySpreadBase, resolve_constraints
from kubesched.queue.hints import PerPod

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP

_own_hard_constraints: PerPod[list[Constraint]] = PerPod(
    lambda pod: resolve_constraints(pod.topology_spread_constraints, pod.labels, DO_NOT_SCHEDULE)
)


def _involved(other: Pod, pod: Pod) -> bool:
    """Whether ``other`` can count for ``pod``'s spreading: itself, or a bound pod of its namespace."""
    return other.uid == pod.uid or (bool(other.node_name) and other.namespace == pod.namespace)


def _node_matches(node: Node, constraints: list[Constraint]) -> bool:
    """Whether the node has every constraint's topology key (only such nodes count)."""
    labels = node.labels
    return all(c.topology_key in labels for c in constraints)


class HintsMixin(PodTopologySpreadBase):
    """The plugin's two hints."""

    def _hint_constraints(self, pod: Pod) -> list[Constraint]:
        if pod.topology_spread_constraints:
            return _own_hard_constraints(pod)
        return self._constraints(CycleState(), pod, DO_NOT_SCHEDULE)

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A bound pod of the namespace appeared, left or was relabelled so that it now counts
        differently; or the pod itself got a toleration that a taint-honouring constraint reads."""
        if any(other is not None and not _involved(other, pod) for other in (new_obj, old_obj)):
            return SKIP
        constraints = self._hint_constraints(pod)
        if new_obj is not None and old_obj is not None:
            if (
                new_obj.uid == pod.uid
                and new_obj.tolerations != old_obj.tolerations
                and any(c.honor_taints for c in constraints)
            ):
                return QUEUE
            if dict(new_obj.labels) == dict(old_obj.labels):
                return SKIP
            changed = any(c.matches(old_obj.labels) != c.matches(new_obj.labels) for c in constraints)
            return QUEUE if changed else SKIP
        changed_pod: Pod = new_obj if new_obj is not None else old_obj
        return QUEUE if any(c.matches(changed_pod.labels) for c in constraints) else SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A node that carries every topology key appeared or left; one that gained or lost a key; one
        that moved to another domain or whose taints changed."""
        constraints = self._hint_constraints(pod)
        old_matching = old_obj is not None and _node_matches(old_obj, constraints)
        new_matching = new_obj is not None and _node_matches(new_obj, constraints)
        if old_obj is not None and new_obj is not None:
            if old_matching != new_matching:
                return QUEUE
            moved = any(old_obj.labels.get(c.topology_key) != new_obj.labels.get(c.topology_key) for c in constraints)
            return QUEUE if new_matching and (moved or old_obj.taints != new_obj.taints) else SKIP
        return QUEUE if (new_matching if new_obj is not None else old_matching) else SKIP
