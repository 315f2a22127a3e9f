"""The collector tuning around long simulations: applied inside, undone outside, nesting included."""

from __future__ import annotations

import gc

from kubesched.util.gc_tuning import MIDDLE_THRESHOLD, YOUNG_THRESHOLD, long_lived_heap


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
