"""NodeResourcesFit: does the node have room for the pod's requests, and how good a fit is it?

Filter rejects a node that is out of pod slots or lacks free cpu, memory, ephemeral storage or any
scalar (extended, hugepages, ...) resource the pod requests; every shortage is reported, in a fixed
order (pods, cpu, memory, ephemeral-storage, then scalar resources by name). Extended resources the
configuration ignores are not checked. From v1.34 a node that could not host the pod even empty (it
offers less of a resource than the pod requests; pod slots aside) is rejected as unresolvable, so
preemption does not look at it. Score applies the configured strategy (LeastAllocated,
MostAllocated or RequestedToCapacityRatio) to the configured resources.

Missing cycle state: Filter reports an Error, as kube-scheduler does; Score computes the pod's
requests on the fly, as kube-scheduler does.

The plugin declares the FitFilterPlugin capability: its PreFilter state is the
:class:`~kubesched.framework.capabilities.FitChecks` with which the framework re-checks nodes with
nominated pods, and preemption picks victims, by arithmetic instead of copies and Filter calls.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_extended_resource_name,
    is_scalar_resource_name,
)
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.row_cache import RowValueCache
from kubesched.config.errors import ConfigError
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.config.pluginargs import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    ScoringStrategy,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    ClusterEventWithHint,
    PreFilterExtensions,
    PreFilterResult,
    QueueingHint,
    minus_ones,
    queueing_hints_enabled,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins import names
from kubesched.plugins.helper import IdentityMemo
from kubesched.plugins.noderesources.least_allocated import LeastAllocatedScorer
from kubesched.plugins.noderesources.most_allocated import MostAllocatedScorer
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    RequestedToCapacityRatioScorer,
    scaled_shape,
)
from kubesched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    ResourceScoring,
    ScoreFunction,
)
from kubesched.queue.hints import PerPod

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot
    from kubesched.framework.handle import Handle

NAME = names.NODE_RESOURCES_FIT
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

TOO_MANY_PODS = "Too many pods"
SIDECARS_DISABLED = "Pod has a restartable init container and the SidecarContainers feature is disabled"


# -- the fit check: one scalar form, one vectorised form --------------------------------------------
@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """One resource a node is short of: how much the pod wants, what is used, what the node has."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    #: The node could not host the pod even empty: it offers less than the pod requests.
    unresolvable: bool = False


def insufficient_reason(resource: str) -> str:
    return f"Insufficient {resource}"


def request_checks(
    pod_request: Mapping[str, int],
    ignored_extended_resources: Collection[str] = (),
    ignored_resource_groups: Collection[str] = (),
) -> tuple[tuple[str, int], ...]:
    """The (resource, amount) pairs worth checking, in report order; zero requests need no room."""
    checks = [(name, pod_request.get(name, 0)) for name in (CPU, MEMORY, EPHEMERAL_STORAGE)]
    for name in sorted(pod_request):
        if name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or not is_scalar_resource_name(name):
            continue
        if is_extended_resource_name(name) and (
            name in ignored_extended_resources or name.split("/", 1)[0] in ignored_resource_groups
        ):
            continue
        checks.append((name, pod_request[name]))
    return tuple((name, amount) for name, amount in checks if amount > 0)


def short_resources(
    checks: Sequence[tuple[str, int]],
    allocatable: Mapping[str, int],
    requested: Mapping[str, int],
    num_pods: int,
    adding: Mapping[str, int] | None = None,
) -> list[str]:
    """What a node lacks to host one more pod asking for ``checks``: ``pods`` when it is out of pod
    slots, then each checked resource it is short of, in report order (empty: the pod fits).

    The node offers ``allocatable`` and hosts ``num_pods`` pods requesting ``requested`` in all, and
    one more pod requesting ``adding`` when that is given.
    """
    short: list[str] = []
    if adding is not None:
        num_pods += 1
    if num_pods + 1 > allocatable.get(PODS, 0):
        short.append(PODS)
    for name, amount in checks:
        used = requested.get(name, 0)
        if adding is not None:
            used += adding.get(name, 0)
        if amount > allocatable.get(name, 0) - used:
            short.append(name)
    return short


def shortage_reason(resource: str) -> str:
    """Filter's reason for a resource :func:`short_resources` reports."""
    return TOO_MANY_PODS if resource == PODS else insufficient_reason(resource)


def _insufficient(checks: Sequence[tuple[str, int]], node_info: NodeInfo) -> list[InsufficientResource]:
    """:func:`short_resources` on ``node_info``, with the amounts kube-scheduler reports."""
    allocatable, requested, num_pods = node_info.allocatable, node_info.requested, len(node_info.pods)
    wanted = dict(checks)
    out: list[InsufficientResource] = []
    for name in short_resources(checks, allocatable, requested, num_pods):
        if name == PODS:
            out.append(InsufficientResource(PODS, TOO_MANY_PODS, 1, num_pods, allocatable.get(PODS, 0)))
        else:
            capacity = allocatable.get(name, 0)
            out.append(
                InsufficientResource(
                    name,
                    insufficient_reason(name),
                    wanted[name],
                    requested.get(name, 0),
                    capacity,
                    wanted[name] > capacity,
                )
            )
    return out


def beyond_allocatable(checks: Sequence[tuple[str, int]], short: Sequence[str], allocatable: Mapping[str, int]) -> bool:
    """Whether a node lacking ``short`` (see :func:`short_resources`) offers less of one of them than
    the pod asks for in all: no preemption can make room there. Pod slots never count."""
    wanted = dict(checks)
    return any(name != PODS and wanted[name] > allocatable.get(name, 0) for name in short)


def rejection(reasons: tuple[str, ...], unresolvable: bool) -> Status:
    """Filter's status for a node it rejects."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, reasons)


#: Pods added on each row of a batch: their count per row, and per row what they request of a resource.
Shift = tuple[np.ndarray, Callable[[str], np.ndarray]]


def _extras_shift(extras: Sequence[Sequence[Pod]]) -> Shift:
    """The :data:`Shift` of placing the pods ``extras[k]`` on the k-th row."""
    n = len(extras)

    def requested(name: str) -> np.ndarray:
        return np.fromiter((sum(p.requests.get(name, 0) for p in e) for e in extras), dtype=np.int64, count=n)

    return np.fromiter((len(e) for e in extras), dtype=np.int64, count=n), requested


def _fail_matrix(
    checks: Sequence[tuple[str, int]],
    snapshot: Snapshot,
    rows: np.ndarray,
    shift: Shift | None = None,
    unresolvable: bool = False,
) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    """The reasons Filter can give and, per snapshot row of ``rows`` (with the pods of ``shift``
    placed too, when given), which of them apply: the vectorised :func:`short_resources`. With
    ``unresolvable``, also which rows offer less of some resource than the pod asks for
    (:func:`beyond_allocatable`); else None."""
    n = len(rows)
    reasons = [TOO_MANY_PODS, *(insufficient_reason(name) for name, _ in checks)]
    fails = np.zeros((n, len(reasons)), dtype=bool)
    beyond = np.zeros(n, dtype=bool) if unresolvable else None
    pod_count = snapshot.pod_count[rows]
    if shift is not None:
        pod_count = pod_count + shift[0]
    fails[:, 0] = pod_count + 1 > snapshot.allowed_pods[rows]
    for j, (name, amount) in enumerate(checks, start=1):
        col = snapshot.resource_column(name)
        if col is None:  # no node offers it
            fails[:, j] = True
            if beyond is not None:
                beyond[:] = True
            continue
        allocatable = snapshot.allocatable[rows, col]
        free = allocatable - snapshot.requested[rows, col]
        if shift is not None:
            free = free - shift[1](name)
        fails[:, j] = amount > free
        if beyond is not None:
            beyond |= amount > allocatable
    return reasons, fails, beyond


def _batch_result(reasons: Sequence[str], fails: np.ndarray, beyond: np.ndarray | None) -> BatchFilterResult:
    """One Status per distinct combination of failed checks (and of being beyond allocatable),
    shared by its rows."""
    if not fails.any():
        return BatchFilterResult.all_pass(len(fails))
    keyed = fails if beyond is None else np.column_stack([fails, beyond])
    combos, inverse = _distinct_rows(keyed)
    statuses: list[Status] = []
    table = np.full(len(combos), -1, dtype=np.int32)
    for u, row in enumerate(combos):
        bits = row.tolist()
        failed = tuple(r for r, bad in zip(reasons, bits[: len(reasons)], strict=True) if bad)
        if failed:
            table[u] = len(statuses)
            statuses.append(rejection(failed, beyond is not None and bits[-1]))
    return BatchFilterResult(table[inverse], statuses)


def _fail_codes(
    checks: Sequence[tuple[str, int]], snapshot: Snapshot, rows: np.ndarray, unresolvable: bool
) -> np.ndarray:
    """:func:`_fail_matrix` packed into one integer per row: bit j for reason j, and with
    ``unresolvable`` the next bit for a row beyond allocatable."""
    if len(rows) <= _FEW_ROWS:
        return _few_fail_codes(checks, snapshot, rows, unresolvable)
    _, fails, beyond = _fail_matrix(checks, snapshot, rows, unresolvable=unresolvable)
    keyed = fails if beyond is None else np.column_stack([fails, beyond])
    return keyed.astype(np.int64) @ (np.int64(1) << np.arange(keyed.shape[1], dtype=np.int64))


#: Up to this many rows are checked one by one rather than as arrays.
_FEW_ROWS = 8


def _few_fail_codes(
    checks: Sequence[tuple[str, int]], snapshot: Snapshot, rows: np.ndarray, unresolvable: bool
) -> np.ndarray:
    """:func:`_fail_codes` for a few rows (what a kept verdict recomputes after a bind), row by row on
    the same columns: the same codes without setting arrays up for each."""
    columns = [(amount, snapshot.resource_column(name)) for name, amount in checks]
    # Plain integers read row by row (item, a row's tolist): cheaper than gathers for a few rows.
    pod_count, allowed_pods, allocatable_rows, requested_rows = (
        snapshot.pod_count,
        snapshot.allowed_pods,
        snapshot.allocatable,
        snapshot.requested,
    )
    codes: list[int] = []
    for row in rows.tolist():
        code = int(pod_count.item(row) + 1 > allowed_pods.item(row))
        beyond = False
        allocatables, requesteds = allocatable_rows[row].tolist(), requested_rows[row].tolist()
        for j, (amount, col) in enumerate(columns, start=1):
            if col is None:  # no node offers it
                code, beyond = code | 1 << j, True
                continue
            allocatable = allocatables[col]
            if amount > allocatable - requesteds[col]:
                code |= 1 << j
            beyond = beyond or amount > allocatable
        codes.append(code | (1 << (len(columns) + 1) if unresolvable and beyond else 0))
    return np.array(codes, dtype=np.int64)


def _coded_result(reasons: Sequence[str], codes: np.ndarray, unresolvable: bool) -> BatchFilterResult:
    """What :func:`_batch_result` gives, from the rows' :func:`_fail_codes`."""
    failing = codes.nonzero()[0]
    if not len(failing):
        return BatchFilterResult.all_pass(len(codes))
    beyond_bit = 1 << len(reasons)
    if len(failing) <= _FEW_FAILING:  # a few rows rejected (a busy cluster's usual walk): set just those
        return _few_coded(reasons, codes, failing, beyond_bit, unresolvable)
    if beyond_bit < 1 << 12:  # few checks (the common case): a row's code is its slot in a table of every code
        present = (np.bincount(codes, minlength=2 * beyond_bit)).nonzero()[0]
        slots, slot_of, size = present, codes, 2 * beyond_bit
    else:
        present, slot_of = np.unique(codes, return_inverse=True)
        slots, size = np.arange(len(present)), len(present)
    table = np.full(size, -1, dtype=np.int32)
    index_of, statuses = _code_statuses(reasons, present.tolist(), beyond_bit, unresolvable)
    for slot, code in zip(slots.tolist(), present.tolist(), strict=True):
        table[slot] = index_of.get(code, -1)
    return BatchFilterResult(table[slot_of.reshape(-1)], statuses)


def _code_statuses(
    reasons: Sequence[str], codes: Sequence[int], beyond_bit: int, unresolvable: bool
) -> tuple[dict[int, int], list[Status]]:
    """One rejection per distinct code (``codes`` ascending) that fails a check, and each such code's
    place among them."""
    index_of: dict[int, int] = {}
    statuses: list[Status] = []
    for code in codes:
        failed = tuple(r for j, r in enumerate(reasons) if code >> j & 1)
        if failed:
            index_of[code] = len(statuses)
            statuses.append(rejection(failed, unresolvable and bool(code & beyond_bit)))
    return index_of, statuses


#: Up to this many rejected rows, their verdicts are set one by one instead of through a table of codes.
_FEW_FAILING = 64


def _few_coded(
    reasons: Sequence[str], codes: np.ndarray, failing: np.ndarray, beyond_bit: int, unresolvable: bool
) -> BatchFilterResult:
    """:func:`_coded_result` for a few failing rows: one Status per distinct code, in code order."""
    failing_codes = codes[failing].tolist()
    index_of, statuses = _code_statuses(reasons, sorted(set(failing_codes)), beyond_bit, unresolvable)
    index = minus_ones(len(codes))
    for row, code in zip(failing.tolist(), failing_codes, strict=True):
        index[row] = index_of.get(code, -1)
    return BatchFilterResult(index, statuses)


def _distinct_rows(fails: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct boolean rows and, per input row, the index of its distinct row."""
    m = fails.shape[1]
    if m <= 62:
        codes = fails.astype(np.int64) @ (np.int64(1) << np.arange(m, dtype=np.int64))
        uniq, inverse = np.unique(codes, return_inverse=True)
        combos = ((uniq[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(bool)
        return combos, inverse.reshape(-1)
    combos, inverse = np.unique(fails, axis=0, return_inverse=True)
    return combos, inverse.reshape(-1)


def fits_request(
    pod_request: Mapping[str, int],
    node_info: NodeInfo,
    ignored_extended_resources: Collection[str] = (),
    ignored_resource_groups: Collection[str] = (),
) -> list[InsufficientResource]:
    """Everything ``node_info`` lacks to host a pod requesting ``pod_request`` (empty: it fits)."""
    return _insufficient(request_checks(pod_request, ignored_extended_resources, ignored_resource_groups), node_info)


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Whether ``pod`` fits ``node_info``, nothing ignored (kube-scheduler's ``Fits``)."""
    return fits_request(pod.spec_requests, node_info)


# -- cycle state ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The pod's requests and, from them, the checks Filter runs on every node: this cycle's
    :class:`~kubesched.framework.capabilities.FitChecks`. ``unresolvable``: a node offering less
    than the pod asks for is rejected as unresolvable (v1.34)."""

    requests: Mapping[str, int]
    checks: tuple[tuple[str, int], ...]
    unresolvable: bool = False

    def clone(self) -> PreFilterState:
        return self

    def shortages(
        self,
        allocatable: Mapping[str, int],
        requested: Mapping[str, int],
        num_pods: int,
        adding: Mapping[str, int] | None = None,
    ) -> tuple[str, ...]:
        short = short_resources(self.checks, allocatable, requested, num_pods, adding)
        return tuple([shortage_reason(name) for name in short]) if short else ()

    @property
    def shape(self) -> tuple[tuple[str, int], ...]:
        """What the checks answer from: the (resource, amount) pairs."""
        return self.checks

    def shortages_shifted(
        self, snapshot: Snapshot, rows: np.ndarray, pods_delta: np.ndarray, requested_delta: Callable[[str], np.ndarray]
    ) -> BatchFilterResult:
        """:meth:`shortages` on many rows at once, each row's pods shifted (see ShiftedFitChecks)."""
        reasons = [TOO_MANY_PODS, *(insufficient_reason(name) for name, _ in self.checks)]
        codes = (snapshot.pod_count[rows] + pods_delta + 1 > snapshot.allowed_pods[rows]).astype(np.int64)
        for j, (name, amount) in enumerate(self.checks, start=1):
            col = snapshot.resource_column(name)
            if col is None:  # no node offers it (nor hosts a pod asking for it)
                codes |= 1 << j
                continue
            free = snapshot.allocatable[rows, col] - snapshot.requested[rows, col] - requested_delta(name)
            codes |= (amount > free).astype(np.int64) << j
        return _coded_result(reasons, codes, False)

    def filter_with_pods(
        self, snapshot: Snapshot, rows: np.ndarray, extras: Sequence[Sequence[Pod]]
    ) -> list[Status | None]:
        result = self.filter_shifted(snapshot, rows, *_extras_shift(extras))
        statuses: list[Status | None] = [*result.statuses, None]  # index -1: passed
        return [statuses[i] for i in result.status_index.tolist()]

    def filter_shifted(
        self, snapshot: Snapshot, rows: np.ndarray, pods_delta: np.ndarray, requested_delta: Callable[[str], np.ndarray]
    ) -> BatchFilterResult:
        """:meth:`filter_with_pods` with the added pods given by their sums (see ShiftedFitChecks)."""
        reasons, fails, beyond = _fail_matrix(
            self.checks, snapshot, rows, (pods_delta, requested_delta), self.unresolvable
        )
        return _batch_result(reasons, fails, beyond)  # rows failing alike share one Status


def _missing_state(key: str) -> Status:
    return Status(Code.ERROR, (f'error reading "{key}" from cycleState: not found',))


# -- the plugin -----------------------------------------------------------------------------------
def build_score_function(strategy: ScoringStrategy) -> ScoreFunction:
    """The scoring strategy the configuration names; ValueError for an unknown one."""
    weights = tuple(spec.weight for spec in strategy.resources)
    if strategy.type == LEAST_ALLOCATED:
        return LeastAllocatedScorer(weights)
    if strategy.type == MOST_ALLOCATED:
        return MostAllocatedScorer(weights)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        if strategy.requested_to_capacity_ratio is None:
            raise ValueError("requestedToCapacityRatio shape not specified")
        shape = scaled_shape(strategy.requested_to_capacity_ratio.shape)
        return RequestedToCapacityRatioScorer(weights, shape)
    raise ValueError(f"scoring strategy {strategy.type} is not supported")


class NodeResourcesFit(ResourceScoring):
    """Filters out nodes without room for the pod; scores the rest by the configured strategy."""

    name = NAME
    pre_score_key = PRE_SCORE_STATE_KEY

    def __init__(
        self, args: NodeResourcesFitArgs, handle: Handle | None = None, *, features: FeatureGates | None = None
    ) -> None:
        self.handle = handle
        if features is None:
            features = handle.features if handle is not None else feature_gates()
        #: v1.34: a node offering less than the pod requests is an unresolvable rejection.
        self.unresolvable = features.at_least("1.34")
        self.enable_sidecar_containers = features.enabled("SidecarContainers")
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_resource_groups = frozenset(args.ignored_resource_groups)
        #: Filter's failure codes per snapshot row for the last pod shapes filtered.
        self._kept_verdicts = RowValueCache()
        #: PreFilter's (frozen) state per spec_requests mapping: pods of one workload share theirs,
        #: and the state reads nothing else but this plugin's fixed configuration.
        self._states: IdentityMemo[Mapping[str, int], PreFilterState] = IdentityMemo()
        strategy = args.scoring_strategy
        self.scorer = ResourceAllocationScorer(
            name=strategy.type,
            resources=tuple(strategy.resources),
            function=build_score_function(strategy),
        )

    # -- PreFilter ----------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enable_sidecar_containers and any(c.is_sidecar for c in pod.init_containers):
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (SIDECARS_DISABLED,))
        # The pod is not running yet: its spec alone says what it needs.
        requests = pod.spec_requests
        s = self._states.get(requests)
        if s is None:
            checks = request_checks(requests, self.ignored_resources, self.ignored_resource_groups)
            s = self._states.put(requests, PreFilterState(requests, checks, self.unresolvable))
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # -- Filter -------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _missing_state(PRE_FILTER_STATE_KEY)
        allocatable = node_info.allocatable
        short = short_resources(s.checks, allocatable, node_info.requested, len(node_info.pods))
        if not short:
            return None
        return rejection(
            tuple(shortage_reason(name) for name in short),
            s.unresolvable and beyond_allocatable(s.checks, short, allocatable),
        )

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        """Filter over snapshot rows: one failure bit per check, one Status per distinct combination."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return BatchFilterResult.all_fail(len(indices), _missing_state(PRE_FILTER_STATE_KEY))
        if len(s.checks) > 60:  # too many checks for one integer per row: uncached
            return _batch_result(*_fail_matrix(s.checks, snapshot, indices, unresolvable=s.unresolvable))
        # A row's verdict reads only its own columns: kept per pod shape, recomputed where rows changed.
        codes = self._kept_verdicts.values(
            snapshot,
            (s.checks, s.unresolvable),
            indices,
            lambda rows: _fail_codes(s.checks, snapshot, rows, s.unresolvable),
        )
        reasons = [TOO_MANY_PODS, *(insufficient_reason(name) for name, _ in s.checks)]
        return _coded_result(reasons, codes, s.unresolvable)

    def fit_checks(self, state: CycleState) -> PreFilterState | None:
        """The checks PreFilter prepared for the cycle's pod (the FitFilterPlugin capability)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        return s if isinstance(s, PreFilterState) else None

    # -- events -------------------------------------------------------------------------------------
    #: InPlacePodVerticalScaling: a pod scaling down can make room (read when events are registered).
    _scale_down = True

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if not queueing_hints_enabled(self.handle):
            return (
                ClusterEvent("Pod", ActionType.DELETE),
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),
            )
        features = getattr(self.handle, "features", None)
        self._scale_down = features is None or features.enabled("InPlacePodVerticalScaling")
        pod_actions = ActionType.DELETE | (ActionType.UPDATE_POD_SCALE_DOWN if self._scale_down else ActionType.NONE)
        return (
            ClusterEventWithHint(ClusterEvent("Pod", pod_actions), self.is_schedulable_after_pod_event),
            ClusterEventWithHint(
                ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self.is_schedulable_after_node_change,
            ),
        )

    def is_schedulable_after_pod_event(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A bound (or nominated) pod deleted; or, with in-place resizing, the pod itself or a bound
        pod scaled down a resource the rejected pod asks for."""
        if new_obj is None:
            deleted: Pod = old_obj
            bound = deleted.node_name or deleted.nominated_node_name
            return QueueingHint.QUEUE if bound else QueueingHint.QUEUE_SKIP
        if not self._scale_down:
            return QueueingHint.QUEUE_SKIP
        if new_obj.uid == pod.uid:
            return QueueingHint.QUEUE
        if not new_obj.node_name:
            return QueueingHint.QUEUE_SKIP
        old_requests, new_requests = old_obj.requests, new_obj.requests
        for name, _ in _hint_checks(pod):
            if old_requests.get(name, 0) > new_requests.get(name, 0):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A node the pod fits when empty: a new one, or one whose capacity grew where the pod asks."""
        checks = _hint_checks(pod)
        if not _fits_empty_node(checks, new_obj.allocatable):
            return QueueingHint.QUEUE_SKIP
        if old_obj is None:
            return QueueingHint.QUEUE
        increased = _requested_capacity_increased(checks, old_obj.allocatable, new_obj.allocatable)
        return QueueingHint.QUEUE if increased else QueueingHint.QUEUE_SKIP


#: The (resource, amount) pairs a pod asks for, nothing ignored: what the hints compare, once per pod.
_hint_checks: PerPod[tuple[tuple[str, int], ...]] = PerPod(lambda pod: request_checks(pod.requests))


def _fits_empty_node(checks: Sequence[tuple[str, int]], allocatable: Mapping[str, int]) -> bool:
    """Whether a pod asking for ``checks`` fits a node offering ``allocatable`` with nothing on it."""
    if allocatable.get(PODS, 0) < 1:
        return False
    return all(amount <= allocatable.get(name, 0) for name, amount in checks)


def _requested_capacity_increased(
    checks: Sequence[tuple[str, int]], old: Mapping[str, int], new: Mapping[str, int]
) -> bool:
    """More pod slots, or more of a resource the pod asks for (kube-scheduler's
    haveAnyRequestedResourcesIncreased)."""
    if new.get(PODS, 0) > old.get(PODS, 0):
        return True
    return any(new.get(name, 0) > old.get(name, 0) for name, _ in checks)


def new(args: Any, handle: Handle) -> NodeResourcesFit:
    """Factory: typed args (None → kube-scheduler's defaults, a mapping is decoded), validated."""
    if args is None:
        args = NodeResourcesFitArgs()
    elif isinstance(args, Mapping):
        args = NodeResourcesFitArgs.from_dict(args)
    err = ConfigError.aggregate(args.validate())
    if err is not None:
        raise err
    return NodeResourcesFit(args, handle)
