"""NodeResourcesBalancedAllocation: prefer nodes whose resources would be used evenly.

For each configured resource the node offers, the fraction requested/allocatable (pod included,
capped at 1) is taken; the score is (1 - standard deviation of those fractions) x 100, truncated.
Plain requests are used (no non-zero defaults). The float arithmetic follows kube-scheduler's order
of operations so scores agree to the last bit; with exactly two resources the deviation is |a - b| / 2.

Missing cycle state: Score computes the pod's requests on the fly, as kube-scheduler does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.config.errors import ConfigError
from kubesched.config.pluginargs import NodeResourcesBalancedAllocationArgs
from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.plugins import names
from kubesched.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
    ResourceScoring,
)

if TYPE_CHECKING:
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
        fractions = np.minimum(
            requested.astype(np.float64) / np.where(present, allocatable, 1).astype(np.float64), 1.0
        )
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
            rows = np.flatnonzero(pattern == code)
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

    def __init__(self, args: NodeResourcesBalancedAllocationArgs, handle: Handle | None = None) -> None:
        self.handle = handle
        self.scorer = ResourceAllocationScorer(
            name=NAME, resources=tuple(args.resources), function=BalancedScorer(), use_requested=True
        )

    # kube-scheduler v1.30 registers no events for this plugin (it has no Filter to be rejected by).


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
