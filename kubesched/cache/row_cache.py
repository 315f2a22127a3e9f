"""Per-node values derived from the snapshot's columns, kept from one cycle to the next.

A scorer that reads only a row's columns (allocatable, requested, pod count) and the pod's requests
gives the same number for a node until that node's row is written again. Pods of one shape arrive by
the thousand, and one cycle changes one node, so keeping each row's value per pod shape and
recomputing only the rows whose generation moved turns a score over thousands of nodes into a gather.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

import numpy as np

from kubesched.cache.snapshot import Snapshot


class RowValueCache:
    """Values of one function per snapshot row, for the last few keys (pod shapes) asked for.

    ``compute(rows)`` must depend only on those rows' columns (what writing a row changes) and on the
    key. A few rows, or a key asked for the first time, are computed directly. From its second time on,
    its values are kept for every row: a row is computed when it is asked for and was written since it
    was last computed (or never was). The cache starts over when the rows move or a resource column
    appears.
    """

    __slots__ = ("_capacity", "_entries", "_layout", "_min_rows", "_seen")

    def __init__(self, capacity: int = 4, min_rows: int = 128) -> None:
        self._capacity = capacity
        #: Fewer rows than this are computed directly: the bookkeeping would cost what it saves.
        self._min_rows = min_rows
        #: key -> (values, the snapshot's write mark they are as of). A row to compute again holds
        #: :data:`_STALE`; the functions kept give no negative value (one that did would only be
        #: computed every time).
        self._entries: OrderedDict[Hashable, tuple[np.ndarray, tuple[int, int]]] = OrderedDict()
        #: Keys asked for once lately: a pod shape seen once may never come back, and is not kept.
        self._seen: OrderedDict[Hashable, None] = OrderedDict()
        self._layout: tuple[int, int, int] | None = None

    def values(
        self, snapshot: Snapshot, key: Hashable, rows: np.ndarray, compute: Callable[[np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """``compute(rows)``, from what is kept where the rows were not written since."""
        if len(rows) < self._min_rows:
            return np.asarray(compute(rows), dtype=np.int64)
        layout = (snapshot.layout_version, len(snapshot.resource_columns), len(snapshot))
        if layout != self._layout:
            self._entries.clear()
            self._layout = layout
        entry = self._entries.get(key)
        if entry is None:
            if key not in self._seen:
                self._seen[key] = None
                if len(self._seen) > 4 * self._capacity:
                    self._seen.popitem(last=False)
                return np.asarray(compute(rows), dtype=np.int64)
            if len(self._entries) >= self._capacity:
                self._entries.popitem(last=False)
            values = np.empty(len(snapshot), dtype=np.int64)
            values.fill(_STALE)
        else:
            values, mark = entry
            written = snapshot.rows_written_since(mark)
            if written is None:
                values.fill(_STALE)
            elif len(written) <= 8:  # a few writes since (the usual case): item sets beat a fancy index
                for row in written:
                    values[row] = _STALE
            else:
                values[written] = _STALE
        # One gather gives both the kept values and which of them are stale.
        result: np.ndarray = values[rows]
        wanted = (result < 0).nonzero()[0]
        if len(wanted):
            changed = rows[wanted]
            fresh = compute(changed)
            values[changed] = fresh
            result[wanted] = fresh
        self._entries[key] = (values, snapshot.write_mark())
        self._entries.move_to_end(key)
        return result


#: What a row to compute again holds.
_STALE = -1
