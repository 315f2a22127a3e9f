"""Pods held at Permit: each waits until every plugin that asked it to wait allows it, or one rejects.

A waiting pod resolves through a callback rather than a blocked thread, so the simulator (one thread,
virtual time) and the live scheduler (binding cycles on worker threads) share the same code: the
binding cycle registers what to do next with :meth:`WaitingPod.on_done`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from kubesched.api.objects import Pod
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.clock import Clock, TimerHandle


class WaitingPod:
    def __init__(self, pod: Pod, waits: dict[str, float], clock: Clock) -> None:
        self.pod = pod
        self._lock = threading.Lock()
        self._pending = set(waits)
        self._result: Status | None = None
        self._done = False
        self._callbacks: list[Callable[[Status | None], None]] = []
        #: One timeout per waiting plugin; a plugin that allows the pod stops its own.
        self._timers: dict[str, TimerHandle] = {}
        for plugin, timeout in waits.items():
            self._timers[plugin] = clock.call_later(timeout, self._timeout_for(plugin, timeout))

    def _timeout_for(self, plugin: str, timeout: float) -> Callable[[], None]:
        message = f"rejected due to timeout after waiting {_duration(timeout)} at plugin {plugin}"
        return lambda: self.reject(plugin, message)

    def get_pod(self) -> Pod:
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        """Plugins that have not allowed the pod yet (kube-scheduler's GetPendingPlugins)."""
        return sorted(self.pending_plugins)

    @property
    def pending_plugins(self) -> set[str]:
        with self._lock:
            return set(self._pending)

    def allow(self, plugin: str) -> None:
        with self._lock:
            self._pending.discard(plugin)
            timer = self._timers.pop(plugin, None)
            if timer is not None:
                timer.cancel()
            if self._pending or self._done:
                return
        self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        with self._lock:
            if self._done:
                return
        self._finish(Status(Code.UNSCHEDULABLE, (message,), plugin=plugin))

    def _finish(self, status: Status | None) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            self._result = status
            callbacks, self._callbacks = self._callbacks, []
        for timer in self._timers.values():
            timer.cancel()
        for callback in callbacks:
            callback(status)

    def on_done(self, callback: Callable[[Status | None], None]) -> None:
        """Call ``callback(status)`` once resolved (at once if it already is); None means allowed."""
        with self._lock:
            if not self._done:
                self._callbacks.append(callback)
                return
            result = self._result
        callback(result)


class WaitingPods:
    """The waiting pods of one framework, by pod uid."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()

    def add(self, waiting: WaitingPod) -> None:
        with self._lock:
            self._pods[waiting.pod.uid] = waiting

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def all(self) -> list[WaitingPod]:
        with self._lock:
            return list(self._pods.values())


def _duration(seconds: float) -> str:
    """Seconds written like Go's time.Duration.String (``10s``, ``1m30s``, ``1.5ms``, ``0s``)."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        for unit, scale in (("ms", 1e3), ("µs", 1e6), ("ns", 1e9)):
            if seconds * scale >= 1 or unit == "ns":
                return f"{seconds * scale:g}{unit}"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:g}s"
    if hours:
        return f"{int(hours)}h{int(minutes)}m{text}"
    if minutes:
        return f"{int(minutes)}m{text}"
    return text
