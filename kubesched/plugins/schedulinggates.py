"""SchedulingGates: hold pods in the queue while they carry ``spec.schedulingGates``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    queueing_hints_enabled,
)
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins import names

NAME = names.SCHEDULING_GATES


class SchedulingGates:
    name = NAME
    #: The verdict reads the pod's own spec.schedulingGates: only an update of the pod lifts it.
    pre_enqueue_reads_pod_only = True

    def __init__(self, queueing_hints: bool = True) -> None:
        self.queueing_hints = queueing_hints

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.scheduling_gates:
            return None
        # Go prints the []string with %v: "[a b]".
        return unresolvable(f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """No cluster event lifts a gate: only an update of the gated pod itself does.

        v1.30 registers nothing (the queue re-runs PreEnqueue whenever a gated pod is updated); with
        queueing hints, the update that removes the pod's last gate.
        """
        if not self.queueing_hints:
            return ()
        return (
            ClusterEventWithHint(
                ClusterEvent("Pod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self.is_schedulable_after_gates_eliminated,
            ),
        )

    def is_schedulable_after_gates_eliminated(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Only the gated pod's own gates matter."""
        return QueueingHint.QUEUE if new_obj.uid == pod.uid else QueueingHint.QUEUE_SKIP


def new(args: Any, handle: Handle) -> SchedulingGates:
    return SchedulingGates(queueing_hints_enabled(handle))
