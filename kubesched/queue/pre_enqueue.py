"""PreEnqueue: the plugins that must all agree before a pod may enter activeQ, and the gate they put on it.

A pod a PreEnqueue plugin refuses (scheduling gates, a missing claim) waits in the unschedulable pool
flagged ``gated`` and is never popped. Which cluster events may lift that gate depends on the version:
v1.34 asks the events the gating plugin registered, less those it says cannot lift the gate
(:class:`~kubesched.framework.capabilities.GateHoldingPreEnqueuePlugin`); v1.30 offers none to the pods
gated by a plugin whose verdict reads the pod alone (only an update of the pod itself can ungate those).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.capabilities import gate_holders, reads_pod_only
from kubesched.framework.interfaces import ClusterEvent, PreEnqueuePlugin
from kubesched.framework.status import Code, Status
from kubesched.klog import Logger, kobj
from kubesched.queue import events as ev
from kubesched.queue.queued_pod_info import QueuedPodInfo

logger = Logger("kubesched.queue.scheduling_queue")

#: ``(profile, plugins, delta)``: moves ``scheduler_unschedulable_pods`` for the plugins named.
UnschedulableReason = Callable[[str, tuple[str, ...], int], None]


class PreEnqueueGates:
    """Each profile's PreEnqueue plugins, run on a pod on its way to activeQ (or backoffQ), and which
    events may let a gated pod out."""

    def __init__(
        self,
        plugins: Mapping[str, Sequence[PreEnqueuePlugin]],
        plugin_events: Mapping[str, Sequence[ClusterEvent]],
        *,
        hints_enabled: bool,
        unschedulable_reason: UnschedulableReason | None,
    ) -> None:
        self._plugins = plugins
        self._hints_enabled = hints_enabled
        self._unschedulable_reason = unschedulable_reason
        # PreEnqueue plugins whose verdict reads the pod alone: v1.30 offers no cluster event to the
        # pods they gate (v1.34 asks the gating plugin's registered events instead).
        self._pod_only = frozenset(
            plugin.name for per_profile in plugins.values() for plugin in per_profile if reads_pod_only(plugin)
        )
        self._gating_events = {name: tuple(events) for name, events in plugin_events.items()}
        # v1.34: plugins that can say an event cannot lift the gate they hold on a pod.
        self._holds = gate_holders(plugins) if hints_enabled else {}

    def run(self, qpi: QueuedPodInfo) -> str:
        """Run the profile's PreEnqueue plugins (with hints, the one that gated the pod last first); the
        name of the first that refuses (now gating the pod), or "" (no longer gated)."""
        pod = qpi.pod
        plugins: Sequence[PreEnqueuePlugin] = self._plugins.get(pod.scheduler_name, ())
        if self._hints_enabled and qpi.gating_plugin:
            first = [p for p in plugins if p.name == qpi.gating_plugin]
            plugins = [*first, *(p for p in plugins if p.name != qpi.gating_plugin)]
        for plugin in plugins:
            status: Status | None
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as err:  # a failing plugin gates the pod, as an Error status would
                status = Status.from_error(err)
            if status is None or (type(status) is Status and status.is_success()):
                continue  # anything but a Status or None gates the pod, as an error would
            _log_pre_enqueue(pod, plugin.name, status)
            if plugin.name not in qpi.unschedulable_plugins:
                qpi.unschedulable_plugins.add(plugin.name)
                if self._unschedulable_reason is not None:
                    self._unschedulable_reason(pod.scheduler_name, (plugin.name,), 1)
            qpi.set_gating(plugin.name, self._gating_events.get(plugin.name, ()))
            return plugin.name
        qpi.set_gating("")
        return ""

    def may_lift(self, qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Whether ``event`` may let a gated pod out: v1.34 asks the gating plugin's registered events and
        whether the gate holds; v1.30 only keeps the pods gated by a plugin that reads the pod alone
        (scheduling gates)."""
        if self._hints_enabled:
            return not qpi.gate_held(self._holds, event) and ev.match_any_cluster_event(event, qpi.gating_plugin_events)
        return self._pod_only.isdisjoint(qpi.unschedulable_plugins)


def _log_pre_enqueue(pod: Pod, plugin: str, status: Any) -> None:
    """A PreEnqueue plugin keeps ``pod`` out of activeQ: an error, or (at V4) the plugin's status."""
    if isinstance(status, Status) and status.code is Code.ERROR:
        logger.error(
            status.as_error(), "Unexpected error running PreEnqueue plugin", "pod", kobj(pod), "plugin", plugin
        )
    elif v := logger.v(4):
        v.info(
            "Status after running PreEnqueue plugin",
            "pod",
            kobj(pod),
            "plugin",
            plugin,
            "status",
            status.message if isinstance(status, Status) else str(status),
        )
