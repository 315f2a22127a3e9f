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

:func:`freezing_loop` goes further for a simulation's event loop, which makes next to no cyclic garbage
(a 20,000-arrival run: 60 objects found by 87 collections, all from loading). Scanning what survives
is then pure cost, about 6 % of a million arrivals; the loop instead freezes its survivors every so
many allocations, and probes one period in ten with a real collection, returning to the tuned
collector for good the first time a probe finds more than a trace of garbage.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
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


#: Net allocations between freezes in :func:`freezing_loop` (a young collection scans about as many).
FREEZE_PERIOD = 100_000
#: Every this many periods, the period's survivors are collected instead, to see whether cycles die.
PROBE_EVERY = 10
#: A probe finding more objects than this share of a period means the loop makes cyclic garbage.
TOLERATED_GARBAGE = 0.01


class _FreezingCollector:
    """Freezes survivors instead of scanning them; see :func:`freezing_loop`."""

    __slots__ = ("active", "periods")

    def __init__(self) -> None:
        self.active = True
        self.periods = 0

    def tick(self) -> None:
        """Called once per event of the loop: cheap until a period's allocations have accumulated."""
        if not self.active or gc.get_count()[0] < FREEZE_PERIOD:
            return
        self.periods += 1
        if self.periods % PROBE_EVERY == 0 and gc.collect(0) > TOLERATED_GARBAGE * FREEZE_PERIOD:
            # Cycles die here: what was frozen stays so until the outermost exit (at most a few periods'
            # worth of garbage), and the tuned collector runs from now on.
            self.active = False
            gc.enable()
            return
        gc.freeze()


def _no_tick() -> None:
    return None


@contextmanager
def freezing_loop() -> Iterator[Callable[[], None]]:
    """Inside :func:`long_lived_heap`: automatic collection off, and a ``tick`` for the loop to call per
    event, which freezes (or now and then probes) what survived since the last period. Used only where
    the outermost :func:`long_lived_heap` owns the freeze, whose exit unfreezes everything (a process
    with its own frozen objects keeps the tuned collector); the collector's state is restored on exit."""
    if _depth == 0 or not _freezing:
        yield _no_tick
        return
    was_enabled = gc.isenabled()
    collector = _FreezingCollector()
    gc.disable()
    try:
        yield collector.tick
    finally:
        if was_enabled:
            gc.enable()
        else:
            gc.disable()
