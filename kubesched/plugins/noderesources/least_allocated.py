"""LeastAllocated: prefer nodes with the most room left (the default NodeResourcesFit strategy).

Per resource: (allocatable - requested) x 100 / allocatable, 0 when over-committed; the node score is
the weighted mean of those, every division an integer one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import weighted_average


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


@dataclass(frozen=True, slots=True)
class LeastAllocatedScorer:
    weights: tuple[int, ...]

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        # weighted_node_score(least_requested_score, ...) written out: a kept score recomputes a few
        # nodes per cycle through here.
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, self.weights, strict=True):
            if alloc == 0:
                continue
            if req <= alloc:
                node_score += (alloc - req) * MAX_NODE_SCORE // alloc * weight
            weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    def batch(self, requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        present = allocatable != 0
        free = allocatable - requested
        per_resource = np.where(present & (free >= 0), free * MAX_NODE_SCORE // np.where(present, allocatable, 1), 0)
        return weighted_average(per_resource, present, np.asarray(self.weights, dtype=np.int64))
