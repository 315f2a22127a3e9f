"""Handle: what the framework gives a plugin to reach the rest of the scheduler.

Plugins receive it in their factory (a ``PluginFactory``: ``new(args, handle)`` or ``Class(args, handle)``).
It is a protocol, so tests can hand plugins a small fake; :class:`kubesched.framework.runtime.Framework`
is the real one. It mirrors kube-scheduler's ``framework.Handle``: the cycle's snapshot, waiting pods
(Permit), the cluster client, an event recorder, the nominator, a parallelizer, the extenders, and the
listers of watched objects. Pods to move to activeQ go into the cycle's
:class:`~kubesched.framework.cycle_state.PodsToActivate` (``state.read(PODS_TO_ACTIVATE_KEY)``), which
the scheduler hands to the queue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.config.features import FeatureGates
from kubesched.framework.capabilities import FitChecks
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Extender
from kubesched.framework.interfaces import FilterPlugin, Plugin
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot
    from kubesched.cluster.listers import Listers
    from kubesched.cluster.protocol import Cluster
    from kubesched.framework.waiting_pods import WaitingPod


class PodNominator(Protocol):
    """Pods that preemption nominated to nodes and that are not bound yet."""

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]: ...

    def nominations(self) -> Mapping[str, tuple[Pod, ...]]:
        """Every nomination by node, in nomination order (read once per cycle; not to be changed)."""
        ...


class EventRecorder(Protocol):
    """Writes Events about objects, as the scheduler's own FailedScheduling / Scheduled ones."""

    def event(self, regarding: Pod | Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        """``regarding`` is a Pod or an object dict (kind and metadata are read from it)."""
        ...


class Parallelizer:
    """kube-scheduler's Parallelizer.Until: run ``do_work_piece(i)`` for every piece.

    Pieces run in order on the calling thread. Python threads would not make Python plugin code
    faster (one interpreter lock) and would make results depend on thread timing; ``parallelism``
    is kept for plugins that size their own work by it.
    """

    def __init__(self, parallelism: int = 16) -> None:
        self.parallelism = parallelism

    def until(self, pieces: int, do_work_piece: Callable[[int], None], operation: str = "") -> None:
        for piece in range(pieces):
            do_work_piece(piece)


class Handle(Protocol):
    @property
    def features(self) -> FeatureGates:
        """The emulated version and feature gates the scheduler runs with (read once, at start-up)."""
        ...

    @property
    def snapshot(self) -> Snapshot:
        """The snapshot of the cycle in progress (kube-scheduler's SnapshotSharedLister)."""
        ...

    def snapshot_shared_lister(self) -> Snapshot: ...

    @property
    def cluster(self) -> Cluster:
        """The cluster client (kube-scheduler's ClientSet): the embedded cluster or a live one."""
        ...

    @property
    def listers(self) -> Listers:
        """Watched namespaces, services, replication controllers, replica sets, stateful sets and
        the kinds plugins register events for (such as PodGroup)."""
        ...

    def list_pods(self, namespace: str | None = None, labels: Mapping[str, str] | None = None) -> list[Pod]:
        """Pods the scheduler knows (pending and bound), optionally in a namespace and with labels."""
        ...

    @property
    def nominator(self) -> PodNominator: ...

    @property
    def event_recorder(self) -> EventRecorder: ...

    @property
    def parallelizer(self) -> Parallelizer: ...

    @property
    def extenders(self) -> Sequence[Extender]:
        """The configured extenders (ignorable ones last), shared by every profile."""
        ...

    @property
    def clock(self) -> Callable[[], datetime]: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Any:
        """Run ``callback`` after ``delay`` seconds of the scheduler's clock; returns a cancellable timer."""
        ...

    @property
    def parallelism(self) -> int: ...

    @property
    def extra(self) -> Mapping[str, Any]:
        """What the scheduler adds for in-tree plugins: ``rng`` (random.Random), ``tie_break``
        ("name" for reproducible runs), ``pod_lister`` (a pod as the scheduler's informer has it), and
        for asynchronous preemption ``run_async`` (run a job off the scheduling loop), ``activate``
        (move pods to activeQ, kube-scheduler's Handle.Activate) and ``metrics`` (the scheduler's)."""
        ...

    # -- waiting pods (Permit) ----------------------------------------------------------------------
    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod; False when no pod with that uid waits."""
        ...

    # -- running other plugins (preemption's dry runs) ----------------------------------------------
    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Tell every PreFilter plugin with extensions that ``pod_to_add`` now sits on ``node_info``."""
        ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """All Filter plugins on one node, counting higher-or-equal-priority nominated pods there."""
        ...

    @property
    def node_only_filters(self) -> frozenset[str]:
        """This profile's Filter plugins that declare their verdict ignores the pods on the node
        (:class:`~kubesched.framework.capabilities.NodeOnlyFilterPlugin`)."""
        ...

    def arithmetic_filters(self, state: CycleState) -> list[tuple[FilterPlugin, FitChecks | None]] | None:
        """The Filter plugins still active in ``state``, in order, when a node's verdict with pods added
        or removed is arithmetic: each one reads only the node (paired with None) or declares
        :class:`~kubesched.framework.capabilities.FitChecks` (paired with this cycle's), and no PreFilter
        extension would run. None when that is not so."""
        ...


class NoEvents:
    """An EventRecorder that drops everything (frameworks built without a scheduler)."""

    def event(self, regarding: Pod | Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        pass


def no_pods(namespace: str | None = None, labels: Mapping[str, str] | None = None) -> Iterable[Pod]:
    """The pod lister of a framework built without a scheduler."""
    return ()


PluginFactory = Callable[[Any, Handle], Plugin]
"""``factory(args, handle) -> plugin``: args are the typed plugin args (or a raw dict out of tree), the
handle is the framework's :class:`~kubesched.framework.handle.Handle`."""
