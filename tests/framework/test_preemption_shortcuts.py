"""The preemption shortcuts (the screen of every node's first check, the kept reprieves, the kept sums of
nominated pods) give exactly what the node-by-node procedure gives: a crowded cluster with pods of three
priorities, nodes of several sizes, pod-slot limits and many preemptors nominated at once is simulated
with and without them, and every attempt's record must be the same."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import simulate
from kubesched.framework import preemption_reprieves
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.noderesources.fit import PreFilterState
from tests.sim.scenarios import node, pod

CLASSES = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    for name, value in (("low", 1), ("mid", 5), ("high", 10))
]


def _objects() -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = list(CLASSES)
    for i in range(12):
        objects.append(node(f"n{i:02}", cpu=("4", "3", "6")[i % 3], pods=("110", "5", "110", "4")[i % 4]))
        for j in range(4):
            cls = "mid" if (i + j) % 5 == 0 else "low"
            objects.append(
                pod(f"p{i:02}-{j}", cpu=("900m", "700m", "1")[j % 3], node_name=f"n{i:02}", priorityClassName=cls)
            )
    for k in range(14):
        cls = "mid" if k % 4 == 3 else "high"
        objects.append(pod(f"q{k:02}", cpu=("3", "2500m", "1500m")[k % 3], priorityClassName=cls))
    return objects


def _records(version: str) -> list[dict[str, Any]]:
    result = simulate(_objects(), tie_break="name", record="full", emulated_version=version)
    return [record.to_dict() for record in result.records]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_the_shortcuts_decide_every_attempt_as_the_procedure_does(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_shortcuts = _records(version)
    assert any(r.get("victims") for r in with_shortcuts)  # preemption happened, more than once
    assert sum(1 for r in with_shortcuts if r.get("nominatedNode")) > 3
    monkeypatch.setattr(DefaultPreemption, "screen_victims", lambda self, state, pod, infos: None)
    monkeypatch.setattr(
        preemption_reprieves.ReprieveCache,
        "outcome",
        lambda self, pod, node_info, nominated, shapes, compute: compute(),
    )
    monkeypatch.delattr(PreFilterState, "filter_shifted")  # the Filter walk sums nominees per node again
    assert _records(version) == with_shortcuts
