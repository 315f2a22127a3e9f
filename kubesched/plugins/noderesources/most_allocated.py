"""MostAllocated: prefer the fullest nodes (bin packing).

Per resource: min(requested, allocatable) x 100 / allocatable (requests may exceed allocatable because
of the non-zero defaults); the node score is the weighted mean, every division an integer one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import weighted_average, weighted_node_score


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


@dataclass(frozen=True, slots=True)
class MostAllocatedScorer:
    weights: tuple[int, ...]

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        return weighted_node_score(most_requested_score, requested, allocatable, self.weights)

    def batch(self, requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        present = allocatable != 0
        per_resource = np.where(
            present,
            np.minimum(requested, allocatable) * MAX_NODE_SCORE // np.where(present, allocatable, 1),
            0,
        )
        return weighted_average(per_resource, present, np.asarray(self.weights, dtype=np.int64))
