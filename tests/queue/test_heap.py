from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from kubesched.queue.heap import IndexedHeap


@dataclass
class Item:
    key: str
    prio: int


def by_less(a: Item, b: Item) -> bool:
    return a.prio < b.prio


def make(mode: str) -> IndexedHeap[Item]:
    if mode == "less":
        return IndexedHeap(lambda i: i.key, less=by_less)
    return IndexedHeap(lambda i: i.key, sort_key=lambda i: i.prio)


MODES = ["less", "key"]


@pytest.mark.parametrize("mode", MODES)
def test_pop_order_and_fifo_ties(mode: str) -> None:
    h = make(mode)
    for key, prio in [("a", 3), ("b", 1), ("c", 3), ("d", 2), ("e", 1)]:
        h.add(Item(key, prio))
    assert [i.key for i in h.ordered()] == ["b", "e", "d", "a", "c"]
    assert [h.pop().key for _ in range(5)] == ["b", "e", "d", "a", "c"]  # type: ignore[union-attr]
    assert h.pop() is None and h.peek() is None and len(h) == 0


@pytest.mark.parametrize("mode", MODES)
def test_update_keeps_rank_and_delete(mode: str) -> None:
    h = make(mode)
    for key in "abc":
        h.add(Item(key, 1))
    h.update(Item("a", 1))  # same priority: stays ahead of b and c
    assert h.peek() == Item("a", 1)
    h.update(Item("c", 0))
    assert h.peek() == Item("c", 0)
    assert h.delete("c") == Item("c", 0)
    assert h.delete("c") is None
    assert "c" not in h and "a" in h and len(h) == 2
    assert h.get("b") == Item("b", 1) and h.get("zz") is None
    assert [i.key for i in h.ordered()] == ["a", "b"]
    assert sorted(i.key for i in h) == ["a", "b"]


def test_exactly_one_ordering() -> None:
    with pytest.raises(ValueError):
        IndexedHeap(lambda i: i)
    with pytest.raises(ValueError):
        IndexedHeap(lambda i: i, less=lambda a, b: True, sort_key=lambda i: i)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(5))
def test_random_operations_match_model(mode: str, seed: int) -> None:
    rng = random.Random(seed)
    h = make(mode)
    model: dict[str, tuple[int, int]] = {}  # key -> (prio, rank)
    rank = 0
    for _ in range(2000):
        op = rng.random()
        key = f"k{rng.randrange(60)}"
        if op < 0.5:
            prio = rng.randrange(10)
            h.add(Item(key, prio))
            if key in model:
                model[key] = (prio, model[key][1])
            else:
                model[key] = (prio, rank)
                rank += 1
        elif op < 0.7:
            assert (h.delete(key) is not None) == (key in model)
            model.pop(key, None)
        else:
            got = h.pop()
            if not model:
                assert got is None
                continue
            want = min(model, key=lambda k: model[k])
            assert got is not None and got.key == want
            del model[want]
        assert len(h) == len(model)
    assert [i.key for i in h.ordered()] == sorted(model, key=lambda k: model[k])
