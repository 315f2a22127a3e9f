"""RowValueCache: per-row values kept across cycles answer as computing them afresh does."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.cache.row_cache import RowValueCache
from kubesched.cache.snapshot import Snapshot
from kubesched.config.pluginargs import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from tests.factories import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"


def _cache() -> Cache:
    return Cache(clock=lambda: datetime(2024, 1, 1, tzinfo=UTC))


def _snapshot(n: int) -> tuple[Cache, Snapshot]:
    cache = _cache()
    for i in range(n):
        cache.add_node(make_node(f"n{i}", cpu=str(1 + i % 3)))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return cache, snapshot


def _counting(snapshot: Snapshot, calls: list[int]) -> Callable[[np.ndarray], np.ndarray]:
    def compute(rows: np.ndarray) -> np.ndarray:
        calls.append(len(rows))
        return snapshot.requested[rows, 0] * 7 + snapshot.pod_count[rows]

    return compute


def test_rows_are_computed_when_asked_for_and_kept_from_a_shapes_second_sighting() -> None:
    _, snapshot = _snapshot(6)
    calls: list[int] = []
    kept = RowValueCache(min_rows=0)
    rows = np.array([4, 1])
    assert kept.values(snapshot, "a", rows, _counting(snapshot, calls)).tolist() == [0, 0]
    assert calls == [2]
    kept.values(snapshot, "a", rows, _counting(snapshot, calls))
    assert calls == [2, 2]  # seen again: kept from now on
    kept.values(snapshot, "a", np.array([0, 4, 5, 1]), _counting(snapshot, calls))
    assert calls == [2, 2, 2]  # only the rows never computed
    kept.values(snapshot, "a", np.array([5, 0, 1]), _counting(snapshot, calls))
    assert calls == [2, 2, 2]


def test_only_rows_written_since_are_recomputed() -> None:
    cache, snapshot = _snapshot(5)
    calls: list[int] = []
    kept = RowValueCache(min_rows=0)
    every = np.arange(5)
    for _ in range(2):
        kept.values(snapshot, "a", every, _counting(snapshot, calls))
    cache.add_pod(make_pod("p", cpu="500m", node_name="n3", uid="u1"))
    cache.update_snapshot(snapshot)
    got = kept.values(snapshot, "a", every, _counting(snapshot, calls))
    assert calls[-1] == 1
    assert got.tolist() == (snapshot.requested[:, 0] * 7 + snapshot.pod_count).tolist()


def test_rows_moving_start_the_cache_over() -> None:
    cache, snapshot = _snapshot(3)
    calls: list[int] = []
    kept = RowValueCache(min_rows=0)
    for _ in range(2):
        kept.values(snapshot, "a", np.arange(3), _counting(snapshot, calls))
    cache.add_node(make_node("joining", labels={ZONE: "z"}))
    cache.add_pod(make_pod("p", cpu="1", node_name="n0", uid="u1"))
    cache.update_snapshot(snapshot)
    got = kept.values(snapshot, "a", np.arange(4), _counting(snapshot, calls))
    assert got.tolist() == (snapshot.requested[:, 0] * 7 + snapshot.pod_count).tolist()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(("bind", "delete", "node")), st.integers(0, 1000), st.sampled_from(("100m", "1", "2500m"))
        ),
        min_size=1,
        max_size=40,
    )
)
def test_kept_filter_and_scores_equal_a_fresh_plugins(ops: list[tuple[str, int, str]]) -> None:
    """After every step (pods bound and deleted, nodes joining), the plugins that keep their values
    per row answer exactly as new plugin instances, which keep nothing yet."""
    cache = _cache()
    nodes = [f"n{i}" for i in range(4)]
    for i, name in enumerate(nodes):
        cache.add_node(make_node(name, cpu=str(1 + i), pods="3"))
    snapshot = Snapshot()
    kept_fit = NodeResourcesFit(NodeResourcesFitArgs())
    kept_balanced = NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs())
    # Keep values from the first row on (the plugins keep them from 1000 rows on).
    kept_fit._kept_verdicts = RowValueCache(min_rows=0)
    for plugin in (kept_fit, kept_balanced):
        plugin.scorer = dataclasses.replace(plugin.scorer, _kept=RowValueCache(min_rows=0))
    bound: dict[str, Pod] = {}
    for step, (op, n, cpu) in enumerate(ops):
        if op == "node":
            nodes.append(f"j{step}")
            cache.add_node(make_node(nodes[-1], cpu="2", pods="3", labels={ZONE: f"z{n % 3}"}))
        elif op == "delete" and bound:
            cache.remove_pod(bound.pop(sorted(bound)[n % len(bound)]))
        else:
            pod = make_pod(f"p{step}", cpu=cpu, node_name=nodes[n % len(nodes)], uid=f"u{step}")
            cache.add_pod(pod)
            bound[pod.uid] = pod
        cache.update_snapshot(snapshot)
        incoming = make_pod("incoming", cpu=cpu, memory="1Gi")
        rows = np.arange(len(snapshot))[::-1]
        for fresh, kept in (
            (NodeResourcesFit(NodeResourcesFitArgs()), kept_fit),
            (NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs()), kept_balanced),
        ):
            answers = []
            for plugin in (fresh, kept, kept):  # the kept one twice: its second sighting fills every row
                state = CycleState()
                if isinstance(plugin, NodeResourcesFit):
                    plugin.pre_filter(state, incoming)
                    verdict = plugin.filter_nodes(state, incoming, snapshot, rows)
                    messages = [verdict.statuses[i].message if i >= 0 else "" for i in verdict.status_index.tolist()]
                else:
                    messages = []
                plugin.pre_score(state, incoming, snapshot.nodes(rows))
                scores = plugin.score_nodes(state, incoming, snapshot.nodes(rows)).tolist()
                answers.append((messages, scores))
            assert answers[1] == answers[0] and answers[2] == answers[0]


def test_a_few_rows_are_computed_directly() -> None:
    _, snapshot = _snapshot(6)
    calls: list[int] = []
    kept = RowValueCache(min_rows=4)
    for _ in range(3):
        kept.values(snapshot, "a", np.array([4, 1]), _counting(snapshot, calls))
    assert calls == [2, 2, 2]
