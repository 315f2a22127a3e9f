from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from kubesched.api.objects import Pod
from kubesched.framework.interfaces import QueueSortPlugin
from kubesched.plugins import queuesort
from tests.factories import NO_HANDLE, make_pod

T0 = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass
class Queued:
    pod: Pod
    timestamp: datetime


def queued(priority: int, seconds: float, name: str = "p") -> Queued:
    return Queued(make_pod(name, priority=priority), T0 + timedelta(seconds=seconds))


@pytest.mark.parametrize(
    ("name", "a", "b", "want"),
    [
        ("higher priority first", queued(10, 5), queued(1, 0), True),
        ("lower priority later", queued(1, 0), queued(10, 5), False),
        ("equal priority, earlier first", queued(3, 0), queued(3, 1), True),
        ("equal priority, later second", queued(3, 1), queued(3, 0), False),
        ("identical is not less", queued(3, 1), queued(3, 1), False),
        ("negative priorities", queued(-1, 0), queued(-5, 0), True),
    ],
)
def test_less(name: str, a: Queued, b: Queued, want: bool) -> None:
    plugin = queuesort.new(None, NO_HANDLE)
    assert isinstance(plugin, QueueSortPlugin)
    assert plugin.name == "PrioritySort"
    assert plugin.less(a, b) is want


def test_sort_key_orders_like_less() -> None:
    plugin = queuesort.PrioritySort()
    rng = random.Random(3)
    infos = [queued(rng.choice([-3, 0, 0, 7, 100]), rng.choice([0, 1, 1.5, 2, 10]), f"p{i}") for i in range(60)]
    for a in infos:
        for b in infos:
            assert (plugin.sort_key(a) < plugin.sort_key(b)) == plugin.less(a, b)

    def cmp(x: Queued, y: Queued) -> int:
        return -1 if plugin.less(x, y) else (1 if plugin.less(y, x) else 0)

    by_less = sorted(infos, key=functools.cmp_to_key(cmp))
    by_key = sorted(infos, key=plugin.sort_key)
    assert [plugin.sort_key(i) for i in by_less] == [plugin.sort_key(i) for i in by_key]
