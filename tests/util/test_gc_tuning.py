"""The collector tuning around long simulations: applied inside, undone outside, nesting included."""

from __future__ import annotations

import gc

import pytest

from kubesched.util import gc_tuning
from kubesched.util.gc_tuning import MIDDLE_THRESHOLD, YOUNG_THRESHOLD, freezing_loop, long_lived_heap


def test_frozen_and_fewer_young_collections_inside_then_as_before() -> None:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    kept = [[i] for i in range(100)]  # lists are always tracked by the collector
    with long_lived_heap():
        assert gc.get_threshold()[:2] == (max(YOUNG_THRESHOLD, before[0]), max(MIDDLE_THRESHOLD, before[1]))
        frozen = gc.get_freeze_count()
        assert frozen >= len(kept)  # what existed on entry is left out of collections
        made_inside = [[i] for i in range(100)]
        with long_lived_heap():  # the driver loop inside simulate(): freezes what was loaded since
            assert gc.get_freeze_count() >= frozen + len(made_inside)
        assert gc.get_threshold()[0] == max(YOUNG_THRESHOLD, before[0])  # the outer use still holds
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_undone_when_the_body_raises() -> None:
    before = gc.get_threshold()
    try:
        with long_lived_heap():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, 0)


def test_a_freeze_of_the_callers_own_is_left_alone() -> None:
    before = gc.get_threshold()
    mine = [[i] for i in range(50)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen >= len(mine)
        with long_lived_heap():
            assert gc.get_threshold()[0] == max(YOUNG_THRESHOLD, before[0])
            made_inside = [[i] for i in range(50)]
            with long_lived_heap():
                assert gc.get_freeze_count() <= frozen  # nothing of ours joins the caller's freeze
            assert made_inside
        assert gc.get_threshold() == before
        assert len(mine) <= gc.get_freeze_count() <= frozen  # the caller's freeze is still in place
    finally:
        gc.unfreeze()


def _cycles(n: int) -> None:
    for _ in range(n):
        a: list[object] = []
        a.append(a)  # garbage only a collection can free


def test_the_freezing_loop_freezes_survivors_instead_of_scanning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_tuning, "FREEZE_PERIOD", 1000)
    monkeypatch.setattr(gc_tuning, "PROBE_EVERY", 1000)  # no probe in this test
    assert gc.isenabled()
    with long_lived_heap(), freezing_loop() as tick:
        assert not gc.isenabled()  # no automatic scans while the loop runs
        frozen = gc.get_freeze_count()
        tick()  # too few allocations yet: nothing happens
        assert gc.get_freeze_count() == frozen
        kept = [[i] for i in range(2000)]
        tick()
        assert gc.get_freeze_count() >= frozen + len(kept)
        assert gc.get_count()[0] < 1000
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # the outermost exit unfreezes everything


def test_a_probe_that_finds_cyclic_garbage_brings_the_collector_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_tuning, "FREEZE_PERIOD", 1000)
    monkeypatch.setattr(gc_tuning, "PROBE_EVERY", 1)
    with long_lived_heap(), freezing_loop() as tick:
        _cycles(1500)
        tick()
        assert gc.isenabled()  # the loop makes cycles: collections run again
        frozen = gc.get_freeze_count()
        _cycles(1500)
        tick()
        assert gc.get_freeze_count() == frozen  # and nothing more is frozen
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_probe_that_finds_no_garbage_keeps_freezing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_tuning, "FREEZE_PERIOD", 1000)
    monkeypatch.setattr(gc_tuning, "PROBE_EVERY", 1)
    with long_lived_heap(), freezing_loop() as tick:
        frozen = gc.get_freeze_count()
        kept = [[i] for i in range(2000)]
        tick()
        assert not gc.isenabled()
        assert gc.get_freeze_count() >= frozen + len(kept)


def test_without_a_freeze_of_its_own_the_loop_leaves_the_collector_on() -> None:
    with freezing_loop() as tick:  # outside long_lived_heap
        assert gc.isenabled()
        tick()
    gc.freeze()
    try:
        with long_lived_heap(), freezing_loop() as tick:  # the caller's freeze: not ours to extend
            assert gc.isenabled()
            frozen = gc.get_freeze_count()
            kept = [[i] for i in range(20_000)]
            tick()
            assert gc.get_freeze_count() == frozen and kept
    finally:
        gc.unfreeze()
