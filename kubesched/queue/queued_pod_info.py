"""A pending pod as the queue holds it, and the pod-level facts the queue derives from it.

:class:`QueuedPodInfo` carries a pod's scheduling history between attempts and exposes the pod's
required pod-affinity terms, which the queue tests against every pod that gets bound to decide
which unschedulable pods that binding may help; :func:`is_pod_updated` says whether an update to a
waiting pod can change its scheduling result at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.pod_affinity import PodAffinityTerm
from kubesched.framework.capabilities import GateHolders
from kubesched.framework.interfaces import ClusterEvent


@dataclass(eq=False)
class QueuedPodInfo:
    """A pending pod plus what the queue knows about its scheduling history."""

    pod: Pod
    #: When the pod was added to the queue, or re-added after a failed attempt.
    timestamp: datetime
    #: Scheduling attempts so far (incremented by each pop); v1.30's backoff grows with it.
    attempts: int = 0
    #: Attempts some plugin rejected (v1.34's backoff grows with it).
    unschedulable_count: int = 0
    #: Attempts in a row that failed with no plugin to blame (an error); v1.34 backs such a pod off by it.
    consecutive_errors_count: int = 0
    #: When the current backoff ends (v1.34 computes it once per failure); None: not computed yet.
    backoff_expiration: datetime | None = None
    #: When the pod first entered activeQ (start of the pod_scheduling_sli_duration).
    initial_attempt_timestamp: datetime | None = None
    #: Plugins that rejected the pod in its last attempt (Unschedulable / UnschedulableAndUnresolvable),
    #: plus PreEnqueue plugins that gated it.
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: Plugins that answered Pending in the last attempt.
    pending_plugins: set[str] = field(default_factory=set)
    #: A PreEnqueue plugin refused the pod: it waits in the unschedulable pool and is never popped.
    gated: bool = False
    #: The PreEnqueue plugin that gated the pod ("" when not gated).
    gating_plugin: str = ""
    #: The events the gating plugin registered: only those can let a gated pod out (v1.34).
    gating_plugin_events: tuple[ClusterEvent, ...] = ()

    @property
    def uid(self) -> str:
        return self.pod.uid

    @property
    def rejector_plugins(self) -> set[str]:
        return self.unschedulable_plugins | self.pending_plugins

    def set_gating(self, plugin: str, events: tuple[ClusterEvent, ...] = ()) -> None:
        """Gated by ``plugin`` (and the events that may lift it), or no longer gated (``""``)."""
        self.gating_plugin = plugin
        self.gated = bool(plugin)
        if plugin:
            self.gating_plugin_events = events

    def gate_held(self, holders: GateHolders, event: ClusterEvent) -> bool:
        """The gating plugin, the pod's only rejector, says its hints would keep the pod gated through
        ``event`` (see :class:`~kubesched.framework.capabilities.GateHoldingPreEnqueuePlugin`)."""
        holds = holders.get((self.pod.scheduler_name, self.gating_plugin))
        return (
            holds is not None
            and not self.pending_plugins
            and len(self.unschedulable_plugins) == 1
            and holds(self.pod, event)
        )

    @property
    def required_affinity_terms(self) -> tuple[PodAffinityTerm, ...]:
        return self.pod.pod_affinity.required_affinity

    def update_pod(self, pod: Pod) -> None:
        self.pod = pod


# -- pod updates ---------------------------------------------------------------------------------
def _strip_for_compare(raw: Mapping[str, Any]) -> dict[str, Any]:
    stripped = dict(raw)
    meta = dict(stripped.get("metadata") or {})
    for key in ("resourceVersion", "generation", "managedFields", "finalizers"):
        meta.pop(key, None)
    stripped["metadata"] = meta
    status = stripped.get("status") or {}
    claims = status.get("resourceClaimStatuses")
    stripped["status"] = {"resourceClaimStatuses": claims} if claims else {}
    return stripped


def is_pod_updated(old_pod: Pod | None, new_pod: Pod) -> bool:
    """Whether an update may change the pod's scheduling result.

    Bookkeeping (resourceVersion, generation, managedFields, finalizers) and the status (except
    resource-claim statuses) do not count.
    """
    if old_pod is None:
        return True
    return _strip_for_compare(old_pod.raw) != _strip_for_compare(new_pod.raw)
