"""A PreBind outcome that arrives later, without a thread blocked on it.

kube-scheduler's VolumeBinding polls the API until the PV controller has bound the pod's claims,
holding a binding goroutine for up to ``bindTimeoutSeconds``. Here a PreBind plugin that has to
wait returns a :class:`PendingStatus` instead and resolves it from a watch event or a clock timer;
the binding cycle continues from a callback, as it does after a Permit wait. The simulator's single
thread therefore never sleeps, and a live scheduler's workers are not tied up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kubesched.framework.status import Status


class PendingStatus:
    """Resolved once with a status (None: success); callbacks run on resolution, or at once after."""

    __slots__ = ("_callbacks", "_done", "_lock", "_result")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = False
        self._result: Status | None = None
        self._callbacks: list[Callable[[Status | None], None]] = []

    @property
    def done(self) -> bool:
        with self._lock:
            return self._done

    def resolve(self, status: Status | None) -> bool:
        """Settle the outcome; False when it was already settled (later calls are ignored)."""
        with self._lock:
            if self._done:
                return False
            self._done = True
            self._result = status
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(status)
        return True

    def on_done(self, callback: Callable[[Status | None], None]) -> None:
        with self._lock:
            if not self._done:
                self._callbacks.append(callback)
                return
            result = self._result
        callback(result)
