"""Helpers shared by several in-tree plugins: score normalisation, the feature gates a plugin reads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

import numpy as np

from kubesched.config.features import FeatureGates, feature_gates

if TYPE_CHECKING:
    from kubesched.framework.interfaces import NodeScore


def features_of(handle: Any) -> FeatureGates:
    """The gates a plugin is built under: its handle's, or the default version's for a plugin built
    without a framework (a handle of None, or a small test double that carries no gates)."""
    features = getattr(handle, "features", None)
    return features if isinstance(features, FeatureGates) else feature_gates()


def _go_div(numerator: int, denominator: int) -> int:
    """int64 division as Go does it: truncating toward zero (denominator > 0)."""
    quotient = abs(numerator) // denominator
    return quotient if numerator >= 0 else -quotient


@overload
def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None: ...
@overload
def default_normalize_score(max_priority: int, reverse: bool, scores: np.ndarray) -> np.ndarray: ...
def default_normalize_score(
    max_priority: int, reverse: bool, scores: list[NodeScore] | np.ndarray
) -> np.ndarray | None:
    """Rescale raw scores from [0, max] to [0, max_priority], optionally reversed.

    This is kube-scheduler's ``DefaultNormalizeScore``, integer division included. A list of
    :class:`NodeScore` is rewritten in place (the per-node extension point; the None returned is a
    success status); an array gives back a new normalised int64 array (the batch form, see
    :func:`normalize_score_array`). When no score is above 0 nothing is scaled: the scores are kept,
    or all become ``max_priority`` when reversed.
    """
    if isinstance(scores, np.ndarray):
        return normalize_score_array(max_priority, reverse, scores)
    highest = max((s.score for s in scores), default=0)
    if highest <= 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return None
    for s in scores:
        scaled = _go_div(max_priority * s.score, highest)
        s.score = max_priority - scaled if reverse else scaled
    return None


def normalize_score_array(max_priority: int, reverse: bool, scores: np.ndarray) -> np.ndarray:
    """The batch form of :func:`default_normalize_score`: a new int64 array, same order."""
    raw = np.asarray(scores, dtype=np.int64)
    highest = int(np.maximum.reduce(raw)) if raw.size else 0
    if highest <= 0:
        if not reverse:
            return raw.copy()
        every = np.empty(raw.shape, dtype=np.int64)  # np.full, without its Python layer
        every.fill(max_priority)
        return every
    product = max_priority * raw
    # Truncating division (Go) rather than NumPy's flooring one, for negative inputs too.
    scaled: np.ndarray = np.sign(product) * (np.abs(product) // highest)
    return max_priority - scaled if reverse else scaled
