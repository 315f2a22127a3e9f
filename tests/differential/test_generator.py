"""The seeded scenario generator: deterministic, within its bounds, and covering what it promises."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from kubesched import simulate
from testing.differential.catalogue import parse_quantity
from testing.differential.generator import GPU, START, Scenario, generate
from testing.differential.replay import NOT_FOR_THE_SIMULATOR
from testing.differential.upstream import SCHEDULER_CONFIG

SEEDS = range(200)


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return [generate(seed) for seed in SEEDS]


def test_a_seed_always_makes_the_same_scenario() -> None:
    assert json.dumps(generate(7).objects() + generate(7).pending) == json.dumps(
        generate(7).objects() + generate(7).pending
    )
    assert json.dumps(generate(7).pending) != json.dumps(generate(8).pending)


def test_sizes_stay_small(scenarios: list[Scenario]) -> None:
    for sc in scenarios:
        assert 3 <= len(sc.nodes) <= 12 and 0 <= len(sc.existing) <= 20 and 3 <= len(sc.pending) <= 10, sc.seed


def test_names_and_namespaces_carry_the_seed(scenarios: list[Scenario]) -> None:
    for sc in scenarios:
        assert all(n["metadata"]["name"].startswith(f"s{sc.seed}-") for n in [*sc.nodes, *sc.volumes])
        namespaced = [*sc.existing, *sc.pending, *sc.claims, *sc.budgets]
        assert {o["metadata"]["namespace"] for o in namespaced} == {f"diff-{sc.seed}"}


def test_bound_pods_start_at_distinct_times_before_the_pending_ones(scenarios: list[Scenario]) -> None:
    """Distinct start times make preemption's choice of node deterministic (see compare)."""
    stamp = START.strftime("%Y-%m-%dT%H:%M:%SZ")
    for sc in scenarios:
        starts = [p["status"]["startTime"] for p in sc.existing]
        assert len(set(starts)) == len(starts) and all(s < stamp for s in starts), sc.seed
        assert all(p["spec"]["terminationGracePeriodSeconds"] == 0 for p in [*sc.existing, *sc.pending])


def _requests(pod: dict[str, Any]) -> Counter[str]:
    total: Counter[str] = Counter()
    for container in pod["spec"]["containers"]:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[name] += parse_quantity(value)  # type: ignore[assignment]
    return total


def test_bound_pods_fit_their_nodes(scenarios: list[Scenario]) -> None:
    for sc in scenarios:
        for node in sc.nodes:
            pods = [p for p in sc.existing if p["spec"]["nodeName"] == node["metadata"]["name"]]
            used = sum((_requests(p) for p in pods), Counter())
            allocatable = node["status"]["allocatable"]
            assert len(pods) <= int(allocatable["pods"])
            for resource in ("cpu", "memory", GPU):
                assert used[resource] <= parse_quantity(allocatable.get(resource, "0")), (sc.seed, node)


def _has(pod: dict[str, Any], path: str) -> bool:
    value: Any = pod["spec"]
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return False
        value = value[key]
    return bool(value)


FEATURES = (
    "nodeSelector",
    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
    "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
    "tolerations",
    "topologySpreadConstraints",
    "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
    "affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution",
    "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
    "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
    "volumes",
    "initContainers",
    "runtimeClassName",
    "hostNetwork",
)


def test_pending_pods_cover_every_feature(scenarios: list[Scenario]) -> None:
    pending = [p for sc in scenarios for p in sc.pending]
    for feature in FEATURES:
        assert any(_has(p, feature) for p in pending), feature
    spreads = {c["whenUnsatisfiable"] for p in pending for c in p["spec"].get("topologySpreadConstraints") or []}
    assert spreads == {"DoNotSchedule", "ScheduleAnyway"}
    assert any(c.get("ports") for p in pending for c in p["spec"]["containers"])
    assert any(_requests(p)[GPU] for p in pending)
    assert {p["spec"].get("priorityClassName") for p in pending} >= {
        None,
        "diff-low",
        "diff-high",
        "diff-critical",
        "diff-high-never",
    }


def test_clusters_cover_taints_images_volumes_and_budgets(scenarios: list[Scenario]) -> None:
    effects = {t["effect"] for sc in scenarios for n in sc.nodes for t in n["spec"].get("taints") or []}
    assert effects == {"NoSchedule", "PreferNoSchedule", "NoExecute"}
    assert any(n["status"]["images"] for sc in scenarios for n in sc.nodes)
    assert any(sc.volumes for sc in scenarios) and any(sc.budgets for sc in scenarios)
    modes = {c["spec"]["accessModes"][0] for sc in scenarios for c in sc.claims}
    assert modes == {"ReadWriteOnce", "ReadWriteOncePod"}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_kubesched_loads_and_schedules_a_scenario(seed: int) -> None:
    sc = generate(seed)
    objects = [o for o in sc.objects() if o["kind"] not in NOT_FOR_THE_SIMULATOR]
    result = simulate([*objects, *sc.pending], config=SCHEDULER_CONFIG)
    assert sorted(result.final) == sorted(f"{sc.namespace}/{p['metadata']['name']}" for p in sc.pending)


def test_no_two_bound_pods_share_a_host_port_on_a_node(scenarios: list[Scenario]) -> None:
    """A state no kubelet allows, where kube-scheduler's set of used ports would mislead it."""
    for sc in scenarios:
        for node in sc.nodes:
            held = [
                (p.get("hostIP", "0.0.0.0"), p["protocol"], p["hostPort"])
                for pod in sc.existing
                if pod["spec"]["nodeName"] == node["metadata"]["name"]
                for c in pod["spec"]["containers"]
                for p in c.get("ports") or []
            ]
            for i, (ip, protocol, port) in enumerate(held):
                for other, other_protocol, other_port in held[i + 1 :]:
                    same = (protocol, port) == (other_protocol, other_port)
                    assert not (same and (ip == other or "0.0.0.0" in (ip, other))), (sc.seed, held)
