"""Extension points: the protocols a plugin implements, and the values they exchange.

A plugin is any object with a ``name`` and one or more of the methods below; the framework asks each
enabled plugin for the points it implements (``isinstance`` against these runtime-checkable
protocols). Signatures follow kube-scheduler's, in Python: a ``Status`` or ``None`` (success) where Go
returns ``*Status``.

In-tree plugins on hot paths also offer a *batch* form (``filter_nodes`` / ``score_nodes`` /
``normalize_scores``) working on NumPy arrays over many snapshot nodes at once. The framework prefers
it when present; both forms must agree (tests check it), and out-of-tree plugins only write the
per-node form. Facts a plugin may declare so that the framework can take a shortcut (a Filter that
reads only the node, a resource-fit Filter as arithmetic, ...) are in :mod:`kubesched.framework.capabilities`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.pending import PendingStatus
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.cache.snapshot import NodeInfoList, Snapshot

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


# -- cluster events -------------------------------------------------------------------------------
class ActionType(IntFlag):
    """What changed in a resource; bits combine (``ADD | UPDATE_NODE_LABEL``).

    The ``UPDATE_POD_*`` bits are v1.34's; v1.30 knew the first seven bits only (its ALL was 127), and
    matching there looks at the shared bits alone, so registrations behave the same in both versions.
    """

    NONE = 0
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    #: A taint changed, or spec.unschedulable went from true to false.
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    #: Some resource request of the pod went down (or disappeared).
    UPDATE_POD_SCALE_DOWN = 256
    #: The number of tolerations changed (the API only lets tolerations be added).
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    ALL = 4095
    #: Every update bit: an update the scheduler cannot name more precisely.
    UPDATE = 4092


#: kube-scheduler's spelling of each single action, as it appears in event labels (``NodeUpdateNodeLabel``).
ACTION_NAMES: dict[int, str] = {
    ActionType.ADD: "Add",
    ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.ALL: "All",
    ActionType.UPDATE: "Update",
}


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A change in the cluster that may make rejected pods schedulable (resource ``*`` matches all).

    ``label`` is an optional custom name for logs and metrics; :attr:`event_label` is the name used
    (the custom one, else resource and action: ``NodeAdd``, ``AssignedPodDelete``).
    """

    resource: str
    action: ActionType
    label: str = ""

    def is_wildcard(self) -> bool:
        return self.resource == "*" and self.action == ActionType.ALL

    @property
    def event_label(self) -> str:
        return self.label or f"{self.resource}{ACTION_NAMES.get(self.action, str(int(self.action)))}"

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this (incoming) event is one ``registered`` asked to hear about (v1.30's rule: any
        shared action bit; v1.34's stricter rule is :func:`kubesched.queue.events.match_cluster_events`)."""
        if registered.is_wildcard():
            return True
        return (registered.resource in (self.resource, "*")) and bool(registered.action & self.action)


class QueueingHint(IntEnum):
    """A plugin's answer to "may this event make the pod I rejected schedulable?"."""

    #: The event cannot help the pod: it stays where it waits.
    QUEUE_SKIP = 0
    #: The event may help: the pod is retried (after its backoff).
    QUEUE = 1


QueueingHintFn = Callable[[Pod, Any, Any], QueueingHint]
"""``fn(pod, old_obj, new_obj)``: called for a pod the plugin rejected when a registered event
happens. ``old_obj`` is None for an addition, ``new_obj`` None for a deletion. Pods and nodes come
as :class:`~kubesched.api.objects.Pod` / :class:`~kubesched.api.objects.Node`, other kinds as their
object dicts. Raising counts as ``QUEUE`` (a pod is never stranded by a failing hint)."""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """A registered event and the hint deciding, per rejected pod, whether it requeues the pod.

    Without a hint (or with SchedulerQueueingHints off) the event always requeues the pods the
    plugin rejected."""

    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


def queueing_hints_enabled(handle: object | None) -> bool:
    """Whether the scheduler the plugin is built for runs with SchedulerQueueingHints (v1.34: always;
    v1.30: off unless set). Without a handle, v1.34's answer."""
    features = getattr(handle, "features", None)
    return True if features is None else bool(features.enabled("SchedulerQueueingHints"))


# -- values exchanged -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Restricts the nodes worth filtering; ``None`` node_names means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return other
        assert self.node_names is not None and other.node_names is not None
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(slots=True)
class PostFilterResult:
    nominated_node_name: str = ""
    #: Mode of the nomination: "" (none), "override" (set), "noop" (leave as is).
    mode: str = "override"


#: Arrays of -1 to copy from, per dtype: a slice copy costs a quarter of ``np.full`` at the sizes a
#: filter walk uses (several per cycle).
_MINUS_ONES: dict[Any, np.ndarray] = {}


def minus_ones(n: int, dtype: Any = np.int32) -> np.ndarray:
    """A new array of ``n`` times -1 ("passed" in a verdict array)."""
    template = _MINUS_ONES.get(dtype)
    if template is None or len(template) < n:
        template = _MINUS_ONES[dtype] = np.full(max(n, 4096), -1, dtype=dtype)
    return template[:n].copy()


@dataclass(slots=True)
class BatchFilterResult:
    """Filter verdicts for a batch of nodes without one Python object per node.

    ``status_index[k]`` is -1 when the k-th node passed, else an index into ``statuses`` (one shared
    Status per distinct outcome, e.g. one per combination of insufficient resources).
    """

    status_index: np.ndarray
    statuses: list[Status] = field(default_factory=list)

    @classmethod
    def all_pass(cls, n: int) -> BatchFilterResult:
        return cls(minus_ones(n))

    @classmethod
    def all_fail(cls, n: int, status: Status) -> BatchFilterResult:
        return cls(np.zeros(n, dtype=np.int32), [status])

    @classmethod
    def from_mask(cls, passed: np.ndarray, status: Status) -> BatchFilterResult:
        return cls(np.where(passed, -1, 0).astype(np.int32), [status])

    @classmethod
    def from_node_statuses(cls, verdicts: Sequence[Status | None]) -> BatchFilterResult:
        """One entry per node from a per-node Filter's verdicts (None or Success means passed)."""
        statuses: list[Status] = []
        index = minus_ones(len(verdicts))
        for k, st in enumerate(verdicts):
            if st is not None and st.code is not Code.SUCCESS:
                statuses.append(st)
                index[k] = len(statuses) - 1
        return cls(index, statuses)


# -- plugin protocols -----------------------------------------------------------------------------
@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: Any, b: Any) -> bool:
        """Whether queued pod info ``a`` should be scheduled before ``b``."""
        ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        """The events that may make a pod this plugin rejected schedulable, each with an optional
        queueing hint. A plugin without this method hears every event; an empty list, none."""
        ...


class PreFilterExtensions(Protocol):
    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None: ...
    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]: ...
    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(FilterPlugin, Protocol):
    def filter_nodes(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray
    ) -> BatchFilterResult | None:
        """The verdicts on the snapshot rows ``indices``; None to have ``filter`` called node by node
        instead (for a cycle whose verdicts the batch form cannot give)."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: dict[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None: ...


class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]: ...
    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class BatchScorePlugin(ScorePlugin, Protocol):
    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> np.ndarray:
        """Raw scores (int64) for every node of ``nodes``, in order."""
        ...

    def normalize_scores(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        """Normalised scores for the raw ``scores`` (None: this plugin does not normalise)."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """A status (Wait to hold the pod) and, for Wait, the timeout in seconds."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | PendingStatus | None:
        """A status now, or a PendingStatus the plugin resolves later (the binding cycle waits on it
        through a callback, never a blocked thread)."""
        ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...
