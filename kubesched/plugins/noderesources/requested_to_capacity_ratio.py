"""RequestedToCapacityRatio: score each resource's utilisation through a user-given piecewise-linear shape.

The shape's scores are configured on a 0..10 scale and stretched to 0..100. Per resource the
utilisation is requested x 100 / allocatable (integer; 100 when over-committed); resources scoring 0
are left out of the weighted mean, which is rounded half away from zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.config.pluginargs import MAX_CUSTOM_PRIORITY_SCORE, UtilizationShapePoint
from kubesched.framework.interfaces import MAX_NODE_SCORE

MAX_UTILIZATION = 100


@dataclass(frozen=True, slots=True)
class FunctionShapePoint:
    utilization: int
    score: int


def _div_trunc(a: int, b: int) -> int:
    """Integer division rounding toward zero, as int64 division does (b > 0)."""
    q = abs(a) // b
    return q if a >= 0 else -q


def evaluate_shape(shape: Sequence[FunctionShapePoint], p: int) -> int:
    """The shape at ``p``: first score up to the first utilisation, last score beyond, linear between."""
    for i, point in enumerate(shape):
        if p <= point.utilization:
            if i == 0:
                return point.score
            prev = shape[i - 1]
            return prev.score + _div_trunc(
                (point.score - prev.score) * (p - prev.utilization), point.utilization - prev.utilization
            )
    return shape[-1].score


def build_broken_linear_function(shape: Sequence[FunctionShapePoint]) -> Callable[[int], int]:
    """The shape as a one-argument function (kube-scheduler's helper.BuildBrokenLinearFunction)."""
    points = tuple(shape)
    return lambda p: evaluate_shape(points, p)


def broken_linear_array(shape: Sequence[FunctionShapePoint], p: np.ndarray) -> np.ndarray:
    """:func:`build_broken_linear_function` applied element-wise to an int64 array."""
    out = np.full(p.shape, shape[-1].score, dtype=np.int64)
    # Walk the segments from the last to the first so the first matching one wins.
    for i in range(len(shape) - 1, -1, -1):
        point = shape[i]
        hit = p <= point.utilization
        if i == 0:
            out[hit] = point.score
            continue
        prev = shape[i - 1]
        num = (point.score - prev.score) * (p[hit] - prev.utilization)
        den = point.utilization - prev.utilization
        out[hit] = prev.score + np.sign(num) * (np.abs(num) // den)
    return out


def round_half_away(x: float) -> int:
    """Round to nearest, halves away from zero (Go's math.Round), exact for any float."""
    t = math.trunc(x)
    frac = x - t
    if frac >= 0.5:
        return t + 1
    if frac <= -0.5:
        return t - 1
    return t


def scaled_shape(shape: Sequence[UtilizationShapePoint]) -> tuple[FunctionShapePoint, ...]:
    """Configured points with scores stretched from 0..MAX_CUSTOM_PRIORITY_SCORE to 0..MAX_NODE_SCORE."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple(FunctionShapePoint(p.utilization, p.score * factor) for p in shape)


@dataclass(frozen=True, slots=True)
class RequestedToCapacityRatioScorer:
    weights: tuple[int, ...]
    shape: tuple[FunctionShapePoint, ...]

    def _resource_score(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return evaluate_shape(self.shape, MAX_UTILIZATION)
        return evaluate_shape(self.shape, requested * MAX_UTILIZATION // capacity)

    def __call__(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, weight in zip(requested, allocatable, self.weights, strict=True):
            if alloc == 0:
                continue
            score = self._resource_score(req, alloc)
            if score > 0:
                node_score += score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return round_half_away(float(node_score) / float(weight_sum))

    def batch(self, requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        present = allocatable != 0
        safe = np.where(present, allocatable, 1)
        utilization = np.where(requested > allocatable, MAX_UTILIZATION, requested * MAX_UTILIZATION // safe)
        per_resource = broken_linear_array(self.shape, utilization)
        counted = present & (per_resource > 0)
        weights = np.asarray(self.weights, dtype=np.int64)
        node_score = np.where(counted, per_resource * weights, 0).sum(axis=1)
        weight_sum = np.where(counted, weights, 0).sum(axis=1)
        ratio = node_score.astype(np.float64) / np.maximum(weight_sum, 1).astype(np.float64)
        t = np.trunc(ratio)
        rounded = np.where(ratio - t >= 0.5, t + 1, t)  # ratios are never negative
        return np.where(weight_sum > 0, rounded, 0).astype(np.int64)
