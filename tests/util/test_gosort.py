"""Tests for the port of Go's sort.Slice (kubesched.util.gosort)."""

from __future__ import annotations

import random

import pytest

from kubesched.util.gosort import go_sort_slice


@pytest.mark.parametrize("n", [0, 1, 2, 5, 12, 13, 20, 49, 50, 51, 100, 257, 1000])
@pytest.mark.parametrize("shape", ["random", "sorted", "reversed", "dups", "sawtooth"])
def test_go_sort_slice_sorts(n: int, shape: str) -> None:
    rng = random.Random(n * 31 + len(shape))
    if shape == "random":
        data = [rng.randrange(10 * n + 1) for _ in range(n)]
    elif shape == "sorted":
        data = list(range(n))
    elif shape == "reversed":
        data = list(range(n, 0, -1))
    elif shape == "dups":
        data = [rng.randrange(3) for _ in range(n)]
    else:
        data = [i % 7 for i in range(n)]
    items = [(v, i) for i, v in enumerate(data)]
    go_sort_slice(items, lambda a, b: a[0] < b[0])
    assert [v for v, _ in items] == sorted(data)
    assert sorted(i for _, i in items) == list(range(n))


def test_go_sort_slice_small_is_insertion_sort() -> None:
    # Up to 12 elements Go uses insertion sort: stable for a consistent less ...
    items = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    go_sort_slice(items, lambda x, y: x[0] < y[0])
    assert items == [(0, "b"), (0, "d"), (1, "a"), (1, "c")]
    # ... and an always-true less among equals reverses them.
    rev = ["a", "b", "c", "d"]
    go_sort_slice(rev, lambda x, y: True)
    assert rev == ["d", "c", "b", "a"]
