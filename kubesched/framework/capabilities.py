"""Capabilities: facts a plugin may declare about itself so that the framework can take a shortcut.

kube-scheduler's framework knows nothing about its plugins beyond the extension points they implement,
and neither does this one: the runtime, the queue and preemption never look a plugin up by name. A
plugin that wants a shortcut says what makes it safe, and the code that takes the shortcut asks for that
declaration (``isinstance`` against these protocols, once when a framework or queue is built):

* :class:`NodeOnlyFilterPlugin` - the Filter verdict ignores the pods on the node, so a node re-checked
  with pods added or removed need not run it again;
* :class:`FitFilterPlugin` - the Filter verdict is arithmetic on the node's pod count and requested
  resources (:class:`FitChecks`), so such a re-check over many nodes is a few array operations;
* :class:`PodOnlyPreEnqueuePlugin` - the PreEnqueue verdict reads the pod alone, so no cluster event
  can lift it and the queue does not offer events to the pods it gates;
* :class:`GateHoldingPreEnqueuePlugin` - for some pods and events, the gate holds whatever the event
  says, so the queue need not run the plugin's hint for them.

Declaring a capability is a promise: a plugin that declares one must behave exactly as declared, or
the shortcut gives different answers from the plain path (the in-tree ones are tested to agree).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

import numpy as np

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BatchFilterResult, ClusterEvent, FilterPlugin, PreEnqueuePlugin
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot


@runtime_checkable
class NodeOnlyFilterPlugin(FilterPlugin, Protocol):
    """A Filter whose verdict on a node reads the node object (and cluster objects such as volumes),
    never the pods placed on it. Declared with ``filter_reads_node_only = True``. When such a node is
    re-checked with pods added or removed, the plugin is skipped, its PreFilter extensions included."""

    filter_reads_node_only: ClassVar[bool]


class FitChecks(Protocol):
    """A Filter's verdict for the cycle's pod as arithmetic on a node's pod count and requested
    resources (NodeResourcesFit's: pod slots, then each resource the pod asks for)."""

    def shortages(
        self,
        allocatable: Mapping[str, int],
        requested: Mapping[str, int],
        num_pods: int,
        adding: Mapping[str, int] | None = None,
    ) -> tuple[str, ...]:
        """The reasons Filter rejects a node offering ``allocatable`` that hosts ``num_pods`` pods
        requesting ``requested`` in all, and one more pod requesting ``adding`` when that is given;
        empty when the pod fits."""
        ...

    def filter_with_pods(
        self, snapshot: Snapshot, rows: np.ndarray, extras: Sequence[Sequence[Pod]]
    ) -> list[Status | None]:
        """Filter's verdict on each snapshot row of ``rows`` as if the pods ``extras[k]`` were placed on
        the k-th row too (None: it passes). Vectorised over the rows."""
        ...


@runtime_checkable
class ShiftedFitChecks(FitChecks, Protocol):
    """FitChecks that also answer for many nodes at once with each node's pods shifted by given amounts
    (preemption's first check on every potential node: its lower-priority pods gone).

    ``shape`` is a hashable value that is equal for two FitChecks only when they answer alike."""

    @property
    def shape(self) -> Hashable: ...

    def shortages_shifted(
        self, snapshot: Snapshot, rows: np.ndarray, pods_delta: np.ndarray, requested_delta: Callable[[str], np.ndarray]
    ) -> BatchFilterResult:
        """Filter's verdict on each snapshot row of ``rows`` with its pod count changed by ``pods_delta``
        and its requests of a resource by ``requested_delta(resource)`` (both per row): what
        :meth:`FitChecks.shortages` answers there, an Unschedulable status per rejection."""
        ...

    def filter_shifted(
        self, snapshot: Snapshot, rows: np.ndarray, pods_delta: np.ndarray, requested_delta: Callable[[str], np.ndarray]
    ) -> BatchFilterResult:
        """:meth:`FitChecks.filter_with_pods` with the pods added to each row given by their count and
        the sums of their requests (per row, as for :meth:`shortages_shifted`), as a batch result."""
        ...


@runtime_checkable
class FitFilterPlugin(FilterPlugin, Protocol):
    """A Filter whose verdict is :class:`FitChecks` prepared by its PreFilter for the cycle's pod."""

    def fit_checks(self, state: CycleState) -> FitChecks | None:
        """This cycle's checks; None when PreFilter prepared none (then no shortcut is taken)."""
        ...


@runtime_checkable
class PodOnlyPreEnqueuePlugin(PreEnqueuePlugin, Protocol):
    """A PreEnqueue plugin whose verdict reads the pod alone (SchedulingGates: the pod's own
    ``spec.schedulingGates``): only an update of the pod can lift it. Declared with
    ``pre_enqueue_reads_pod_only = True``."""

    pre_enqueue_reads_pod_only: ClassVar[bool]


@runtime_checkable
class GateHoldingPreEnqueuePlugin(PreEnqueuePlugin, Protocol):
    """A PreEnqueue plugin that can tell, for a pod it gates, that a cluster event cannot lift the gate
    while the pod stays as it is: every queueing hint it registered for the event would answer
    QueueSkip for the pod (DynamicResources, for a pod whose template claim its status does not name
    yet, and a claim event). The queue then skips asking, which is what makes a burst of such pods
    cost one check per pod and event rather than one hint run."""

    def gate_holds_through(self, pod: Pod, event: ClusterEvent) -> bool: ...


#: By (profile, plugin name): the gate checks of the GateHoldingPreEnqueuePlugins.
GateHolders = Mapping[tuple[str, str], Callable[[Pod, ClusterEvent], bool]]


def gate_holders(pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]]) -> GateHolders:
    """The gate checks of each profile's PreEnqueue plugins that offer one."""
    return {
        (profile, plugin.name): plugin.gate_holds_through
        for profile, plugins in pre_enqueue.items()
        for plugin in plugins
        if isinstance(plugin, GateHoldingPreEnqueuePlugin)
    }


def reads_node_only(plugin: object) -> bool:
    """Whether ``plugin`` declares that its Filter verdict ignores the pods on the node."""
    return isinstance(plugin, NodeOnlyFilterPlugin) and plugin.filter_reads_node_only is True


def reads_pod_only(plugin: object) -> bool:
    """Whether ``plugin`` declares that its PreEnqueue verdict reads the pod alone."""
    return isinstance(plugin, PodOnlyPreEnqueuePlugin) and plugin.pre_enqueue_reads_pod_only is True
