"""BatchQuorum: a Permit plugin that holds the pods of a batch until enough of them are placed.

Pods labelled ``batch=<name>`` wait at Permit (their node reserved) until ``quorum`` pods of the
batch are waiting; then every one of them is allowed at once. If the quorum is not reached within
``timeoutSeconds``, the framework rejects the waiting pods and their nodes are freed: a small cousin
of Coscheduling that shows the waiting-pods part of the Handle (iterate, allow).
"""

from __future__ import annotations

from typing import Any

from kubesched.framework.status import Code, Status


class BatchQuorum:
    name = "BatchQuorum"

    def __init__(self, args: dict[str, Any] | None, handle: Any) -> None:
        args = args or {}
        self.quorum = int(args.get("quorum", 2))
        self.timeout = float(args.get("timeoutSeconds", 30))
        self.handle = handle

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status | None, float]:
        batch = pod.labels.get("batch")
        if not batch:
            return None, 0
        waiting = []
        self.handle.iterate_over_waiting_pods(
            lambda w: waiting.append(w) if w.get_pod().labels.get("batch") == batch else None)
        if len(waiting) + 1 < self.quorum:
            return Status(Code.WAIT), self.timeout
        for w in waiting:
            w.allow(self.name)
        return None, 0
