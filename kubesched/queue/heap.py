"""A binary heap whose items can be looked up, updated and removed by key.

The scheduling queue needs a priority queue that also answers "is this pod here?" and drops or
replaces a pod in place. ``heapq`` gives the ordering; an index by key plus lazy deletion (dead
entries stay in the array until they reach the top or the array gets compacted) gives the rest.

Ordering is either a ``sort_key`` (fast: native tuple comparison) or a ``less`` predicate. In both
cases items that compare equal come out in insertion order, which keeps runs reproducible when a
virtual clock gives many pods the same timestamp. Updating an item keeps its insertion rank.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

# Heap elements are lists [order, seq, item, alive]; seq is unique, so comparisons never get to the
# item itself.
_ORDER, _SEQ, _ITEM, _ALIVE = 0, 1, 2, 3


class _LessElement(list[Any]):
    """A heap element ordered by a ``less(a, b)`` predicate kept in slot 0; ties fall back to seq."""

    __slots__ = ()

    def __lt__(self, other: list[Any]) -> bool:
        less = self[_ORDER]
        a, b = self[_ITEM], other[_ITEM]
        if less(a, b):
            return True
        if less(b, a):
            return False
        return bool(self[_SEQ] < other[_SEQ])


class IndexedHeap(Generic[T]):
    """Min-heap of items keyed by ``key_of(item)``; at most one item per key."""

    def __init__(
        self,
        key_of: Callable[[T], Hashable],
        *,
        less: Callable[[T, T], bool] | None = None,
        sort_key: Callable[[T], Any] | None = None,
    ) -> None:
        if (less is None) == (sort_key is None):
            raise ValueError("give exactly one of less or sort_key")
        self._key_of = key_of
        self._less = less
        self._sort_key = sort_key
        self._heap: list[list[Any]] = []
        self._index: dict[Hashable, list[Any]] = {}
        self._counter = itertools.count()

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[T]:
        """Live items in no particular order."""
        return (element[_ITEM] for element in list(self._index.values()))

    def get(self, key: Hashable) -> T | None:
        element = self._index.get(key)
        return None if element is None else element[_ITEM]

    def add(self, item: T) -> None:
        """Insert ``item``, or replace the item with the same key (keeping its insertion rank)."""
        key = self._key_of(item)
        old = self._index.get(key)
        if old is not None:
            old[_ALIVE] = False
            seq = old[_SEQ]
        else:
            seq = next(self._counter)
        element = self._element(item, seq)
        self._index[key] = element
        heapq.heappush(self._heap, element)
        self._maybe_compact()

    update = add

    def delete(self, key: Hashable) -> T | None:
        """Remove and return the item with ``key`` (None when absent)."""
        element = self._index.pop(key, None)
        if element is None:
            return None
        element[_ALIVE] = False
        self._maybe_compact()
        item: T = element[_ITEM]
        return item

    def peek(self) -> T | None:
        self._drop_dead_top()
        return self._heap[0][_ITEM] if self._heap else None

    def pop(self) -> T | None:
        self._drop_dead_top()
        if not self._heap:
            return None
        element = heapq.heappop(self._heap)
        item: T = element[_ITEM]
        del self._index[self._key_of(item)]
        return item

    def ordered(self) -> list[T]:
        """Live items in pop order (a sorted copy; O(n log n), for inspection and tests)."""
        return [element[_ITEM] for element in sorted(self._index.values())]

    def clear(self) -> None:
        self._heap.clear()
        self._index.clear()

    # -- internals ---------------------------------------------------------------------------------
    def _element(self, item: T, seq: int) -> list[Any]:
        if self._sort_key is not None:
            return [self._sort_key(item), seq, item, True]
        return _LessElement((self._less, seq, item, True))

    def _drop_dead_top(self) -> None:
        heap = self._heap
        while heap and not heap[0][_ALIVE]:
            heapq.heappop(heap)

    def _maybe_compact(self) -> None:
        # Keep dead entries from piling up when items are updated or deleted far from the top.
        if len(self._heap) > 2 * len(self._index) + 64:
            self._heap = [element for element in self._heap if element[_ALIVE]]
            heapq.heapify(self._heap)
