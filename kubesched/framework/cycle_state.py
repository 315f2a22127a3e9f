"""CycleState: per-attempt scratch space that plugins share between their extension points.

Values written in PreFilter are read in Filter, PreScore in Score, and so on. When the framework
needs a what-if copy (nominated pods, preemption), :meth:`clone` copies the state and clones every
value that knows how to clone itself, leaving plain values shared.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kubesched.api.objects import Pod

#: CycleState key of the :class:`PodsToActivate` every scheduling cycle starts with.
PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"


class StateData(Protocol):
    def clone(self) -> StateData: ...


class CycleState:
    __slots__ = ("_data", "plugin_timer", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        #: Plugins whose PreFilter / PreScore said Skip: their Filter / Score are not called.
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        #: Set on the sampled cycles whose plugin calls are timed (kubesched.metrics.PluginTimer).
        self.plugin_timer: Any = None

    def read(self, key: str) -> Any:
        """The value stored under ``key``; KeyError when nothing was written (a plugin bug)."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        copy = CycleState()
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            copy._data[key] = clone() if callable(clone) else value
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        copy.plugin_timer = self.plugin_timer
        return copy


class PodsToActivate:
    """Pods a plugin wants moved to activeQ at the end of this cycle (e.g. a gang's siblings).

    Plugins add ``"namespace/name" -> pod`` under the lock; the scheduler activates them after a
    successful scheduling cycle and again after a successful binding cycle, as kube-scheduler does.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.map: dict[str, Pod] = {}

    def add(self, pod: Pod) -> None:
        with self.lock:
            self.map[pod.key] = pod

    def take(self) -> list[Pod]:
        with self.lock:
            pods, self.map = list(self.map.values()), {}
        return pods

    def clone(self) -> PodsToActivate:
        return self  # shared by design: what-if copies of the state still activate the same pods
