"""A plugin that uses every part of the Handle, for tests/framework/test_handle.py."""

from __future__ import annotations

from typing import Any

from kubesched.framework.cycle_state import PODS_TO_ACTIVATE_KEY
from kubesched.framework.status import Code, Status

SEEN: dict[str, Any] = {}


class UsesHandle:
    """PostBind writes an Event and counts siblings; Permit holds "hold" pods and activates "wake" pods."""

    name = "UsesHandle"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status | None, float]:
        if pod.labels.get("role") == "hold":
            return Status(Code.WAIT), 30
        if pod.labels.get("role") != "go":
            return None, 0
        to_activate = state.read(PODS_TO_ACTIVATE_KEY)
        for other in self.handle.list_pods("default", {"role": "sleeper"}):
            to_activate.add(other)
        return None, 0

    def post_bind(self, state: Any, pod: Any, node_name: str) -> None:
        squares: list[int] = []
        self.handle.parallelizer.until(4, lambda i: squares.append(i * i))
        SEEN["squares"] = squares
        SEEN["extenders"] = self.handle.extenders
        SEEN["nodes"] = len(self.handle.snapshot_shared_lister())
        waiting: list[Any] = []
        self.handle.iterate_over_waiting_pods(waiting.append)
        SEEN["waiting"] = [w.get_pod().name for w in waiting]
        for w in waiting:
            SEEN["pending_plugins"] = w.get_pending_plugins()
            assert self.handle.get_waiting_pod(w.get_pod().uid) is w
            self.handle.reject_waiting_pod(w.get_pod().uid)
        self.handle.event_recorder.event(pod, "Normal", "Noted", f"bound to {node_name}")
