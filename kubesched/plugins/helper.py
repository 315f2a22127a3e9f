"""Helpers shared by several in-tree plugins: score normalisation, the feature gates a plugin reads,
the shared Skip answer and a memo of per-pod values keyed by a parsed field's identity."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import numpy as np

from kubesched.config.features import FeatureGates, feature_gates
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.framework.interfaces import NodeScore


#: PreFilter's and PreScore's Skip answer, one instance for every cycle: the framework only reads a
#: Skip's code (it notes the plugin as skipped and drops the status), so nothing mutates or keeps it.
#: Return it only from those two points, and never set its plugin.
SKIP_STATUS = Status(Code.SKIP)

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """Values computed from a read-only object (a parsed pod field: pods of one workload share the
    parsed spec, so most pods hand over the same mapping), found by the object's identity.

    An entry holds its object, so no other object can take its id while it is kept; the memo never
    goes stale as long as the objects are not changed in place (parsed pod fields never are). At most
    ``limit`` entries: when full it starts over.
    """

    __slots__ = ("_entries", "limit")

    def __init__(self, limit: int = 64) -> None:
        self._entries: dict[int, tuple[K, V]] = {}
        self.limit = limit

    def get(self, key: K) -> V | None:
        entry = self._entries.get(id(key))
        return entry[1] if entry is not None and entry[0] is key else None

    def put(self, key: K, value: V) -> V:
        if len(self._entries) >= self.limit:
            self._entries.clear()
        self._entries[id(key)] = (key, value)
        return value

    def __len__(self) -> int:
        return len(self._entries)


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
    # All zeros (nothing scored, the common case) is told by a count, much cheaper than the maximum.
    highest = int(np.maximum.reduce(raw)) if np.count_nonzero(raw) else 0
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
