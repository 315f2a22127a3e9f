"""SchedulingGates: hold pods in the queue while they carry ``spec.schedulingGates``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import ClusterEvent
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins import names

NAME = names.SCHEDULING_GATES


class SchedulingGates:
    name = NAME
    #: The verdict reads the pod's own spec.schedulingGates: only an update of the pod lifts it.
    pre_enqueue_reads_pod_only = True

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.scheduling_gates:
            return None
        # Go prints the []string with %v: "[a b]".
        return unresolvable(f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """No cluster event lifts a gate: only an update of the gated pod itself does.

        kube-scheduler v1.30 registers nothing here; the queue re-runs PreEnqueue when a gated pod
        is updated, independently of registered events.
        """
        return ()


def new(args: Any, handle: Handle) -> SchedulingGates:
    return SchedulingGates()
