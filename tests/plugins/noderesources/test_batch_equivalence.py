"""Batch forms (filter_nodes / score_nodes) agree with the per-node forms on random clusters.

Each random cluster is read at both emulated versions: v1.34 adds up requests differently (sidecars
in the non-zero sums, pod-level requests, unresolvable rejections, best-effort pods unscored), and
those rules must reach the snapshot's columns and the vectorised forms exactly as the per-node ones.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import resource_rules
from kubesched.cache.snapshot import Snapshot
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.config.pluginargs import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.noderesources import balanced_allocation, fit
from tests.factories import NO_HANDLE, make_snapshot, pod_dict
from tests.plugins.noderesources.builders import node

SCALARS = ("example.com/gpu", "vendor.io/fpga", "hugepages-2Mi")
RESOURCES = ("cpu", "memory", "ephemeral-storage", *SCALARS)


def _requests(rng: random.Random) -> dict[str, str]:
    reqs: dict[str, str] = {}
    if rng.random() < 0.8:
        reqs["cpu"] = f"{rng.choice([0, 1, 50, 100, 250, 500, 1000, 3000])}m"
    if rng.random() < 0.8:
        reqs["memory"] = str(rng.choice([0, 1, 1 << 20, 200 << 20, rng.randrange(1, 1 << 34)]))
    if rng.random() < 0.3:
        reqs["ephemeral-storage"] = str(rng.randrange(0, 1 << 33))
    for name in SCALARS:
        if rng.random() < 0.25:
            reqs[name] = str(rng.randrange(0, 4))
    return reqs


def _node(rng: random.Random, i: int) -> Node:
    extra = {}
    if rng.random() < 0.7:
        extra["ephemeral-storage"] = str(rng.randrange(0, 1 << 35))
    for name in SCALARS:
        if rng.random() < 0.5:
            extra[name] = str(rng.randrange(0, 8))
    return node(
        f"n{i:03d}",
        cpu=f"{rng.choice([0, 500, 1000, 2000, 4000, 8000, 16000])}m",
        memory=str(rng.choice([0, 1 << 30, 4 << 30, rng.randrange(1, 1 << 36)])),
        pods=rng.choice([1, 2, 5, 110]),
        extra=extra,
    )


def _container(name: str, requests: dict[str, str] | None, *, sidecar: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "image": "img"}
    if requests is not None:
        body["resources"] = {"requests": requests}
    if sidecar:
        body["restartPolicy"] = "Always"
    return body


def _pod(rng: random.Random, name: str, node_name: str = "") -> dict[str, Any]:
    """A random pod: one or two containers, sometimes init containers and sidecars, sometimes
    pod-level requests (cpu / memory, what PodLevelResources lets a pod give for itself)."""
    roll = rng.random()
    if roll < 0.15:
        return pod_dict(name, node_name=node_name)
    if roll < 0.5:
        spec: dict[str, Any] = {"containers": [_container("a", _requests(rng)), _container("b", None)]}
        spec["initContainers"] = [
            _container(f"i{k}", rng.choice([None, _requests(rng)]), sidecar=rng.random() < 0.5)
            for k in range(rng.randrange(0, 3))
        ]
        if rng.random() < 0.4:
            spec["resources"] = {"requests": {k: v for k, v in _requests(rng).items() if k in ("cpu", "memory")}}
        return pod_dict(name, node_name=node_name, spec=spec)
    return pod_dict(name, requests=_requests(rng), node_name=node_name)


def _cluster(rng: random.Random) -> tuple[list[Node], list[dict[str, Any]]]:
    nodes = [_node(rng, i) for i in range(rng.randrange(1, 40))]
    existing = [_pod(rng, f"e{j}", rng.choice(nodes).name) for j in range(rng.randrange(0, 80))]
    return nodes, existing


def _specs(rng: random.Random, weights: bool) -> tuple[ResourceSpec, ...]:
    names = rng.sample(RESOURCES, rng.randrange(1, len(RESOURCES) + 1))
    return tuple(ResourceSpec(n, rng.randrange(1, 101) if weights else 1) for n in names)


def _fit_args(rng: random.Random) -> NodeResourcesFitArgs:
    kind = rng.choice(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
    rtcr = None
    if kind == "RequestedToCapacityRatio":
        utils = sorted(rng.sample(range(0, 101), rng.randrange(1, 5)))
        points = tuple(UtilizationShapePoint(u, rng.randrange(0, 11)) for u in utils)
        rtcr = RequestedToCapacityRatioParam(points)
    ignored = tuple(n for n in SCALARS[:1] if rng.random() < 0.3)
    groups = ("vendor.io",) if rng.random() < 0.3 else ()
    return NodeResourcesFitArgs(ignored, groups, ScoringStrategy(kind, _specs(rng, True), rtcr))


def _random_case(seed: int, features: FeatureGates) -> tuple[random.Random, Snapshot, Pod, fit.NodeResourcesFit]:
    """A random cluster's snapshot, an incoming pod and a NodeResourcesFit with random arguments, all
    read as the emulated version of ``features`` reads them."""
    rng = random.Random(seed)
    rules = resource_rules(features)
    nodes, existing = _cluster(rng)
    snapshot = make_snapshot(nodes, [Pod.from_dict(raw, rules) for raw in existing])
    incoming = Pod.from_dict(_pod(rng, "p"), rules)
    return rng, snapshot, incoming, fit.NodeResourcesFit(_fit_args(rng), features=features)


VERSIONS = ("1.30", "1.34")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", range(60))
def test_batch_matches_per_node(seed: int, version: str) -> None:
    features = feature_gates(version)
    rng, snapshot, incoming, fit_plugin = _random_case(seed, features)
    balanced = balanced_allocation.NodeResourcesBalancedAllocation(
        NodeResourcesBalancedAllocationArgs(_specs(rng, False)), features=features
    )

    n = len(snapshot.node_infos)
    rows = rng.sample(range(n), rng.randrange(1, n + 1))  # any subset, in any order
    indices = np.array(rows, dtype=np.int64)
    subset = snapshot.nodes(indices)

    state = CycleState()
    fit_plugin.pre_filter(state, incoming)
    result = fit_plugin.filter_nodes(state, incoming, snapshot, indices)
    assert len(result.status_index) == len(indices)
    for k, info in enumerate(subset):
        want = fit_plugin.filter(state, incoming, info)
        got = None if result.status_index[k] == -1 else result.statuses[result.status_index[k]]
        assert got == want, (seed, info.name)

    for plugin in (fit_plugin, balanced):
        for with_state in (True, False):
            s = CycleState()
            if with_state and plugin.pre_score(s, incoming, subset) is not None:
                continue  # skipped: the plugin is not scored for this pod
            batch = plugin.score_nodes(s, incoming, subset)
            per_node = [plugin.score(s, incoming, info)[0] for info in subset]
            assert batch.tolist() == per_node, (seed, plugin.name)
            assert all(0 <= v <= 100 for v in per_node)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", range(40))
def test_fit_checks_agree_with_filter_on_nodes_with_extra_pods(seed: int, version: str) -> None:
    """The FitChecks capability (nodes as if more pods ran there, vectorised and as arithmetic on a
    node's totals) gives the per-node Filter's verdict, code included, on a copy of the node holding
    those pods."""
    features = feature_gates(version)
    rng, snapshot, incoming, fit_plugin = _random_case(seed, features)
    rules = resource_rules(features)
    state = CycleState()
    fit_plugin.pre_filter(state, incoming)
    checks = fit_plugin.fit_checks(state)
    assert checks is not None
    n = len(snapshot.node_infos)
    rows = np.array(rng.sample(range(n), rng.randrange(1, n + 1)), dtype=np.int64)
    extras = [[Pod.from_dict(_pod(rng, f"x{r}-{i}"), rules) for i in range(rng.randrange(0, 3))] for r in rows.tolist()]
    got = checks.filter_with_pods(snapshot, rows, extras)
    assert len(got) == len(rows)
    for k, row in enumerate(rows.tolist()):
        with_extras = snapshot.node_infos[row].snapshot()
        for extra in extras[k]:
            with_extras.add_pod(extra)
        want = fit_plugin.filter(state, incoming, with_extras)
        assert got[k] == want, (seed, row)
        shortages = checks.shortages(with_extras.allocatable, with_extras.requested, len(with_extras.pods))
        assert shortages == (want.reasons if want is not None else ()), (seed, row)
        if extras[k]:  # the last extra pod asked about as one more pod, without placing it
            without_last = snapshot.node_infos[row].snapshot()
            for extra in extras[k][:-1]:
                without_last.add_pod(extra)
            adding = checks.shortages(
                without_last.allocatable, without_last.requested, len(without_last.pods), extras[k][-1].requests
            )
            assert adding == shortages, (seed, row)


def test_fit_checks_need_pre_filter() -> None:
    plugin = fit.new(None, NO_HANDLE)
    assert plugin.fit_checks(CycleState()) is None


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", range(40))
def test_a_few_rows_get_the_verdicts_and_scores_of_the_arrays_over_all_rows(seed: int, version: str) -> None:
    """A few rows (what a kept verdict or score recomputes after a bind) are checked and scored one by
    one: what the arrays over every row give."""
    features = feature_gates(version)
    rng, snapshot, incoming, fit_plugin = _random_case(seed, features)
    balanced = balanced_allocation.NodeResourcesBalancedAllocation(
        NodeResourcesBalancedAllocationArgs(_specs(rng, False)), features=features
    )
    everything = np.arange(len(snapshot.node_infos), dtype=np.int64)
    state = CycleState()
    fit_plugin.pre_filter(state, incoming)
    verdicts = fit_plugin.filter_nodes(state, incoming, snapshot, everything)
    for row in everything.tolist():
        alone = fit_plugin.filter_nodes(state, incoming, snapshot, np.array([row], dtype=np.int64))
        got = None if alone.status_index[0] == -1 else alone.statuses[alone.status_index[0]]
        index = verdicts.status_index[row]
        assert got == (None if index == -1 else verdicts.statuses[index]), (seed, row)
    for plugin in (fit_plugin, balanced):
        s = CycleState()
        if plugin.pre_score(s, incoming, snapshot.nodes(everything)) is not None:
            continue
        whole = plugin.score_nodes(s, incoming, snapshot.nodes(everything)).tolist()
        for row in everything.tolist():
            one = plugin.score_nodes(s, incoming, snapshot.nodes(np.array([row], dtype=np.int64)))
            assert one.tolist() == [whole[row]], (seed, plugin.name, row)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", range(30))
def test_a_few_rejected_rows_get_what_the_table_of_codes_gives(
    seed: int, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verdicts set row by row for a few rejected rows: the same indexes and the same statuses, in the
    same order, as the table of every code built for many."""
    features = feature_gates(version)
    _, snapshot, incoming, fit_plugin = _random_case(seed, features)
    everything = np.arange(len(snapshot.node_infos), dtype=np.int64)
    state = CycleState()
    fit_plugin.pre_filter(state, incoming)
    results = []
    for few in (10**9, -1):  # every rejection set one by one; the table whatever the count
        monkeypatch.setattr(fit, "_FEW_FAILING", few)
        results.append(fit_plugin.filter_nodes(state, incoming, snapshot, everything))
    by_rows, by_table = results
    assert by_rows.status_index.tolist() == by_table.status_index.tolist()
    assert by_rows.statuses == by_table.statuses
