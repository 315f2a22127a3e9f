"""The batch Filter result's constructors."""

from __future__ import annotations

import numpy as np

from kubesched.framework.interfaces import BatchFilterResult, minus_ones


def test_minus_ones_are_fresh_arrays_of_the_asked_length_and_type() -> None:
    first = minus_ones(5)
    first[0] = 7  # a caller may write its verdicts into it
    second = minus_ones(5)
    assert second.tolist() == [-1] * 5 and second.dtype == np.int32
    wide = minus_ones(3, np.int64)
    assert wide.dtype == np.int64 and wide.tolist() == [-1, -1, -1]
    big = minus_ones(10_000)  # past the kept template: it grows
    assert len(big) == 10_000 and (big == -1).all()
    assert minus_ones(0).shape == (0,)


def test_all_pass_has_no_status_and_every_node_passed() -> None:
    result = BatchFilterResult.all_pass(4)
    result.status_index[1] = 0
    assert BatchFilterResult.all_pass(4).status_index.tolist() == [-1, -1, -1, -1]
    assert result.statuses == []
