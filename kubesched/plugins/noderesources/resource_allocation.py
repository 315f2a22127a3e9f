"""What the resource scorers share: turning a pod and a node into per-resource (requested, allocatable).

A scorer is configured with a list of resources (and weights). For every node it builds two parallel
integer lists: what would be requested on the node once the pod lands there, and what the node offers.
Entries whose allocatable is 0 (the node lacks the resource, or the pod asks for none of a scalar
resource) are left at (0, 0) and the strategies skip them. The strategy itself (least / most allocated,
a utilisation shape, balance) only sees those two lists.

Two notions of "requested" exist for cpu and memory. NodeResourcesFit scores with the *non-zero*
requests (containers naming no cpu / memory count for 100m / 200Mi), so that best-effort pods still
spread; NodeResourcesBalancedAllocation uses the plain requests. Every other resource always uses the
plain requests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    is_scalar_resource_name,
)
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.row_cache import RowValueCache
from kubesched.config.pluginargs import ResourceSpec
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ScoreExtensions
from kubesched.framework.status import Code, Status
from kubesched.plugins.helper import IdentityMemo

if TYPE_CHECKING:
    from kubesched.cache.snapshot import NodeInfoList, Snapshot


class ScoreFunction(Protocol):
    """A scoring strategy over per-resource (requested, allocatable); allocatable 0 means "skip"."""

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int: ...

    def batch(self, requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        """The same for many nodes: (n, k) int64 arrays in, (n,) int64 scores out, bit-identical."""
        ...


#: Error returned when a scorer has no resources to look at (kube-scheduler's wording).
RESOURCES_NOT_FOUND = "resources not found"


@dataclass(frozen=True, slots=True)
class ResourceAllocationScorer:
    """Scores a node from the configured resources with one strategy."""

    name: str
    resources: tuple[ResourceSpec, ...]
    function: ScoreFunction
    #: Plain requests for cpu/memory (BalancedAllocation) instead of the non-zero ones (Fit).
    use_requested: bool = False
    #: Scores per snapshot row for the last pod shapes scored (a score reads only the row and the requests).
    _kept: RowValueCache = field(default_factory=RowValueCache, compare=False, repr=False)
    #: PreScore's (frozen) state per requests mapping: pods of one workload share theirs.
    _states: IdentityMemo[Mapping[str, int], PreScoreState] = field(
        default_factory=IdentityMemo, compare=False, repr=False
    )

    # -- per pod --------------------------------------------------------------------------------------
    def pre_score_state(self, pod: Pod) -> PreScoreState:
        """The pod's request for each configured resource, in configuration order, as PreScore keeps it."""
        requests = pod.requests if self.use_requested else pod.scoring_requests
        s = self._states.get(requests)
        if s is None:
            s = self._states.put(requests, PreScoreState(tuple(requests.get(spec.name, 0) for spec in self.resources)))
        return s

    def pod_requests(self, pod: Pod) -> tuple[int, ...]:
        """The pod's request for each configured resource, in configuration order."""
        return self.pre_score_state(pod).pod_requests

    # -- per node -------------------------------------------------------------------------------------
    def allocatable_and_requested(self, node_info: NodeInfo, resource: str, pod_request: int) -> tuple[int, int]:
        """(allocatable, requested including the pod) of one resource on one node; (0, 0) to skip it."""
        if resource == CPU:
            used = node_info.requested_cpu() if self.use_requested else node_info.non_zero_cpu
            return node_info.allocatable.get(CPU, 0), used + pod_request
        if resource == MEMORY:
            used = node_info.requested_memory() if self.use_requested else node_info.non_zero_memory
            return node_info.allocatable.get(MEMORY, 0), used + pod_request
        if resource == EPHEMERAL_STORAGE:
            return (
                node_info.allocatable.get(EPHEMERAL_STORAGE, 0),
                node_info.requested.get(EPHEMERAL_STORAGE, 0) + pod_request,
            )
        # A scalar resource the pod does not ask for, or a name the node cannot offer, is not scored.
        if pod_request == 0 or not is_scalar_resource_name(resource):
            return 0, 0
        alloc = node_info.allocatable.get(resource)
        if alloc is None:
            return 0, 0
        return alloc, node_info.requested.get(resource, 0) + pod_request

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> tuple[int, Status | None]:
        if not self.resources:
            return 0, Status(Code.ERROR, (RESOURCES_NOT_FOUND,))
        requested = [0] * len(self.resources)
        allocatable = [0] * len(self.resources)
        for i, spec in enumerate(self.resources):
            alloc, req = self.allocatable_and_requested(node_info, spec.name, pod_requests[i])
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
        return self.function(requested, allocatable), None

    # -- batch ----------------------------------------------------------------------------------------
    def score_nodes(self, nodes: NodeInfoList, pod_requests: Sequence[int]) -> np.ndarray:
        """Scores of every node of ``nodes`` from the snapshot columns (same numbers as :meth:`score`),
        kept per pod shape and recomputed only for the rows written since."""
        if not self.resources:
            raise RuntimeError(RESOURCES_NOT_FOUND)
        snapshot = nodes.snapshot
        requests = tuple(pod_requests)
        return self._kept.values(
            snapshot, requests, nodes.indices, lambda rows: self._score_rows(snapshot, rows, requests)
        )

    def _score_rows(self, snapshot: Snapshot, rows: np.ndarray, pod_requests: Sequence[int]) -> np.ndarray:
        n, k = len(rows), len(self.resources)
        if n <= _FEW_ROWS:
            return self._score_few(snapshot, rows, pod_requests)
        requested = np.zeros((n, k), dtype=np.int64)
        allocatable = np.zeros((n, k), dtype=np.int64)
        for j, spec in enumerate(self.resources):
            name, pod_request = spec.name, pod_requests[j]
            if name in (CPU, MEMORY):
                nz_col = 0 if name == CPU else 1
                col = snapshot.resource_column(name)
                assert col is not None
                alloc = snapshot.allocatable[rows, col]
                used = (
                    snapshot.requested[rows, col] if self.use_requested else snapshot.non_zero_requested[rows, nz_col]
                )
            elif name == EPHEMERAL_STORAGE or (pod_request != 0 and is_scalar_resource_name(name)):
                col = snapshot.resource_column(name)
                if col is None:  # no node has ever offered or used it
                    continue
                alloc = snapshot.allocatable[rows, col]
                used = snapshot.requested[rows, col]
            else:
                continue
            present = alloc != 0
            allocatable[:, j] = alloc
            requested[:, j] = np.where(present, used + pod_request, 0)
        return self.function.batch(requested, allocatable)

    def _score_few(self, snapshot: Snapshot, rows: np.ndarray, pod_requests: Sequence[int]) -> np.ndarray:
        """:meth:`_score_rows` for a few rows (what a kept score recomputes after a bind), by the per-node
        function on the same columns: the same numbers without setting arrays up for each."""
        # Per scored resource: its position, the pod's request, the allocatable column, and the array
        # and column of what is used (resources the node set cannot offer stay at (0, 0)).
        reads: list[tuple[int, int, int, np.ndarray, int]] = []
        for j, spec in enumerate(self.resources):
            name, request, col = spec.name, pod_requests[j], snapshot.resource_column(spec.name)
            if name in (CPU, MEMORY):
                assert col is not None
                if self.use_requested:
                    reads.append((j, request, col, snapshot.requested, col))
                else:
                    reads.append((j, request, col, snapshot.non_zero_requested, 0 if name == CPU else 1))
            elif col is not None and (name == EPHEMERAL_STORAGE or (request != 0 and is_scalar_resource_name(name))):
                reads.append((j, request, col, snapshot.requested, col))
        scores: list[int] = []
        allocatable_rows, k, function = snapshot.allocatable, len(self.resources), self.function
        for row in rows.tolist():
            requested, allocatable = [0] * k, [0] * k
            for j, request, col, used, used_col in reads:
                alloc = allocatable_rows.item(row, col)
                if alloc != 0:
                    allocatable[j], requested[j] = alloc, used.item(row, used_col) + request
            scores.append(function(requested, allocatable))
        return np.array(scores, dtype=np.int64)


#: Up to this many rows are scored one by one rather than as arrays.
_FEW_ROWS = 8


def weighted_node_score(
    per_resource: Callable[[int, int], int],
    requested: Sequence[int],
    allocatable: Sequence[int],
    weights: Sequence[int],
) -> int:
    """One node: the weighted integer mean of per-resource scores, skipping resources the node lacks."""
    node_score = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        node_score += per_resource(req, alloc) * weight
        weight_sum += weight
    return node_score // weight_sum if weight_sum else 0


def weighted_average(per_resource: np.ndarray, present: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ score·weight / Σ weight over the present entries of each row, int64 division; 0 if none.

    Accumulated column by column: there are only a few resources, and 1-D adds beat a 2-D reduction.
    """
    n, k = per_resource.shape
    node_score = np.zeros(n, dtype=np.int64)
    weight_sum = np.zeros(n, dtype=np.int64)
    for j in range(k):
        w = int(weights[j])
        mask = present[:, j]
        node_score += np.where(mask, per_resource[:, j] * w, 0)
        weight_sum += np.where(mask, w, 0)
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0).astype(np.int64)


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """The pod's request for each scored resource, in configuration order."""

    pod_requests: tuple[int, ...]

    def clone(self) -> PreScoreState:
        return self


class ResourceScoring:
    """The Score half both NodeResourcesFit and BalancedAllocation share: requests once per pod in
    PreScore, then a :class:`ResourceAllocationScorer` per node or over all nodes; no normalising.

    Subclasses set ``scorer`` and ``pre_score_key``.
    """

    scorer: ResourceAllocationScorer
    pre_score_key: str

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        state.write(self.pre_score_key, self.scorer.pre_score_state(pod))
        return None

    def _pod_requests(self, state: CycleState, pod: Pod) -> tuple[int, ...]:
        s = state.get(self.pre_score_key)
        if isinstance(s, PreScoreState):
            return s.pod_requests
        return self.scorer.pod_requests(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self.scorer.score(node_info, self._pod_requests(state, pod))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> np.ndarray:
        return self.scorer.score_nodes(nodes, self._pod_requests(state, pod))

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    def normalize_scores(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        return None
