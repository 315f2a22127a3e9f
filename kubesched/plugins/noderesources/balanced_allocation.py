"""NodeResourcesBalancedAllocation: prefer nodes whose resources would be used evenly.

For each configured resource the node offers, the fraction requested/allocatable (pod included,
capped at 1) is taken; the score is (1 - standard deviation of those fractions) x 100, truncated.
Plain requests are used (no non-zero defaults). The float arithmetic follows kube-scheduler's order
of operations so scores agree to the last bit; with exactly two resources the deviation is |a - b| / 2.

From v1.34 a pod requesting none of the configured resources (a best-effort pod, for the default cpu
and memory) is not scored at all: PreScore skips the plugin, so that such pods do not all pile onto
the node that happens to look most balanced.

Missing cycle state: Score computes the pod's requests on the fly, as kube-scheduler does (and gives
0 to a pod v1.34 would have skipped).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.config.errors import ConfigError
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.config.pluginargs import NodeResourcesBalancedAllocationArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.framework.status import Status
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS
from kubesched.plugins.noderesources.resource_allocation import (
    PreScoreState,
    ResourceAllocationScorer,
    ResourceScoring,
)

if TYPE_CHECKING:
    from kubesched.cache.snapshot import NodeInfoList
    from kubesched.framework.handle import Handle

NAME = names.NODE_RESOURCES_BALANCED_ALLOCATION
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def _deviation(fractions: Sequence[float], total: float) -> float:
    count = len(fractions)
    if count == 2:
        return abs((fractions[0] - fractions[1]) / 2)
    if count > 2:
        mean = total / count
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        return math.sqrt(acc / count)
    return 0.0


@dataclass(frozen=True, slots=True)
class BalancedScorer:
    """(1 - std of the usage fractions) x MAX_NODE_SCORE; resources with allocatable 0 do not count."""

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        fractions: list[float] = []
        total = 0.0
        for req, alloc in zip(requested, allocatable, strict=True):
            if alloc == 0:
                continue
            fraction = float(req) / float(alloc)
            if fraction > 1:
                fraction = 1.0
            total += fraction
            fractions.append(fraction)
        return int((1 - _deviation(fractions, total)) * float(MAX_NODE_SCORE))

    def batch(self, requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        n, k = requested.shape
        present = allocatable != 0
        fractions = np.minimum(requested.astype(np.float64) / np.where(present, allocatable, 1).astype(np.float64), 1.0)
        if k == 2 and present.all():
            # The common case (cpu and memory on every node): |a - b| / 2, as the per-node form.
            std = np.abs((fractions[:, 0] - fractions[:, 1]) / 2)
            return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
        std = np.zeros(n, dtype=np.float64)
        # Nodes differ in which resources they offer; compute each pattern over its own columns, in
        # column order, so that sums accumulate exactly as the per-node loop does.
        pattern = present.astype(np.int64) @ (np.int64(1) << np.arange(k, dtype=np.int64))
        for code in np.unique(pattern).tolist():
            cols = np.array([j for j in range(k) if (code >> j) & 1], dtype=np.intp)
            if len(cols) < 2:
                continue
            rows = (pattern == code).nonzero()[0]
            sub = fractions[np.ix_(rows, cols)]
            if len(cols) == 2:
                std[rows] = np.abs((sub[:, 0] - sub[:, 1]) / 2)
                continue
            total = np.zeros(len(rows), dtype=np.float64)
            for c in range(len(cols)):
                total = total + sub[:, c]
            mean = total / len(cols)
            acc = np.zeros(len(rows), dtype=np.float64)
            for c in range(len(cols)):
                diff = sub[:, c] - mean
                acc = acc + diff * diff
            std[rows] = np.sqrt(acc / len(cols))
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


class NodeResourcesBalancedAllocation(ResourceScoring):
    """Favours nodes where the pod leaves cpu, memory (and other configured resources) evenly used."""

    name = NAME
    pre_score_key = PRE_SCORE_STATE_KEY

    def __init__(
        self,
        args: NodeResourcesBalancedAllocationArgs,
        handle: Handle | None = None,
        *,
        features: FeatureGates | None = None,
    ) -> None:
        self.handle = handle
        if features is None:
            features = handle.features if handle is not None else feature_gates()
        #: v1.34: pods requesting none of the configured resources are not scored.
        self.skip_best_effort = features.at_least("1.34")
        self.scorer = ResourceAllocationScorer(
            name=NAME, resources=tuple(args.resources), function=BalancedScorer(), use_requested=True
        )

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        s = self.scorer.pre_score_state(pod)
        if self.skip_best_effort and not any(s.pod_requests):
            return SKIP_STATUS
        state.write(self.pre_score_key, s)
        return None

    def _best_effort_unscored(self, state: CycleState, pod: Pod) -> bool:
        """Score called without PreScore's state for a pod v1.34 does not score."""
        return (
            self.skip_best_effort
            and not isinstance(state.get(self.pre_score_key), PreScoreState)
            and not any(self.scorer.pod_requests(pod))
        )

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        if self._best_effort_unscored(state, pod):
            return 0, None
        return super().score(state, pod, node_info)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> np.ndarray:
        if self._best_effort_unscored(state, pod):
            return np.zeros(len(nodes), dtype=np.int64)
        return super().score_nodes(state, pod, nodes)

    # kube-scheduler registers no events for this plugin (it has no Filter to be rejected by).


def new(args: Any, handle: Handle) -> NodeResourcesBalancedAllocation:
    """Factory: typed args (None → cpu and memory, a mapping is decoded), validated."""
    if args is None:
        args = NodeResourcesBalancedAllocationArgs()
    elif isinstance(args, Mapping):
        args = NodeResourcesBalancedAllocationArgs.from_dict(args)
    err = ConfigError.aggregate(args.validate())
    if err is not None:
        raise err
    return NodeResourcesBalancedAllocation(args, handle)
