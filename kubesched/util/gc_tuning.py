"""The cyclic garbage collector tuned for a scheduler's heap: large, long-lived, rarely cyclic.

A simulation holds every object of its cluster as dicts, parsed views and snapshot rows: hundreds of
thousands of container objects that live for the whole run. CPython's collector rescans them each time
the older generations are collected, which happens every few thousand allocations of a busy scheduling
loop, while almost nothing the loop frees is cyclic (reference counting frees it at once). Measured on
SchedulingBasic at 5000 nodes, collections took about 16 % of the core loop and 15 % of a whole
``simulate()`` call.

:func:`long_lived_heap` moves what exists when it is entered to the permanent generation (``gc.freeze``),
so collections skip it, and lets the youngest generations grow larger between collections; both are
undone when the outermost use exits, so a caller's process is left as it was. A process that had frozen
objects itself keeps its freeze, and only the threshold changes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Allocations between collections of the youngest generation while tuned (CPython's default is 700).
YOUNG_THRESHOLD = 10_000
#: Young collections between collections of the middle generation (CPython's default is 10). What
#: survives a young collection is mostly the cluster's own objects (pods live for minutes of virtual
#: time), which each middle pass scans again; at a million Poisson arrivals a tenth as many passes cut
#: the collector's time from 89 s to 53 s with the same peak memory.
MIDDLE_THRESHOLD = 100

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None
#: Whether the outermost use froze (a process that froze objects itself, say before forking workers,
#: keeps its own freeze: unfreezing would hand its objects back to the collector).
_freezing = False


@contextmanager
def long_lived_heap() -> Iterator[None]:
    """Run the body with what already exists frozen and fewer young collections (re-entrant: every
    entry freezes what exists by then; the outermost exit unfreezes everything)."""
    global _depth, _saved, _freezing
    with _lock:
        _depth += 1
        if _depth == 1:
            _saved = gc.get_threshold()
            gc.set_threshold(max(YOUNG_THRESHOLD, _saved[0]), max(MIDDLE_THRESHOLD, _saved[1]), _saved[2])
            _freezing = gc.get_freeze_count() == 0
        # Nested uses freeze too: a simulation enters once for the call and again for the driver loop,
        # by when the scenario has been loaded.
        if _freezing:
            gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                if _freezing:
                    gc.unfreeze()
                _saved, _freezing = None, False
