"""Benchmark cases over scheduler_perf's workloads (:mod:`kubesched.scenario.generate.perf`).

Upstream (test/integration/scheduler_perf/config/performance-config.yaml) creates the nodes, a set of
already-running pods, then a burst of pending pods and measures how fast they are scheduled. Objects
are built directly as dicts so that the measurement covers scheduling and binding, not manifest
parsing; the scheduler is moved by the simulator's own driver loop.

Cases whose ``path`` is not "core" measure what users run instead: the whole ``kubesched.simulate()``
call (loading the objects into the embedded cluster, scheduling the burst, recording, building the
result) on the same objects, with the recording the path names (:data:`USER_PATHS`).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubesched.clock import VirtualClock
from kubesched.config import load_config
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.scenario.generate.perf import (
    HOSTNAME_LABEL,
    IMAGE,
    NAMESPACE,
    SETUP_NS,
    TEST_NS,
    WORKLOADS,
    ZONE_LABEL,
    ZONES,
    PodShape,
    Workload,
    node_dict,
    pod_dict,
)
from kubesched.scheduler import Scheduler
from kubesched.sim.driver import Driver

__all__ = [
    "CASES",
    "HOSTNAME_LABEL",
    "IMAGE",
    "NAMESPACE",
    "SETUP_NS",
    "TEST_NS",
    "USER_PATHS",
    "WORKLOADS",
    "ZONES",
    "ZONE_LABEL",
    "Case",
    "PodShape",
    "Prepared",
    "Workload",
    "node_dict",
    "pod_dict",
    "prepare",
]

START_TIME = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Case:
    """One benchmark case: a workload size and a scheduler configuration."""

    name: str
    workload: str
    nodes: int
    existing: int
    measured: int
    config: str
    #: percentageOfNodesToScore; None leaves it unset (the adaptive default).
    percentage: int | None = None
    quick: bool = False
    #: "core" times the scheduling loop alone, "core+summary" / "core+full" / "core+trace" the same loop
    #: with that recorder attached; anything else is a key of USER_PATHS.
    path: str = "core"
    #: Whether a plain ``python -m benchmarks`` runs it; the scale cases run only when ``--only`` names them.
    default: bool = True

    def with_measured(self, measured: int) -> Case:
        """The same case with a different number of measured pods (e.g. a shorter profile run)."""
        return dataclasses.replace(self, measured=measured)


#: The environment variable ``python -m benchmarks --emulated-version V`` hands every case's subprocess.
EMULATED_VERSION_ENV = "KUBESCHED_BENCH_EMULATED_VERSION"


def emulated_version() -> str | None:
    """The kube-scheduler version the benchmarks run as (None: kubesched's default)."""
    return os.environ.get(EMULATED_VERSION_ENV) or None


def emulated_features() -> FeatureGates:
    return feature_gates(emulated_version())


#: User paths: the ``kubesched.simulate()`` options each one adds to the defaults (burst arrival aside,
#: which every case uses). "trace" streams the full trace to a file in a temporary folder.
USER_PATHS: dict[str, dict[str, Any]] = {
    "simulate": {},
    "simulate-none": {"record": "none"},
    "simulate-full": {"record": "full"},
    "simulate-trace": {"trace": "trace.jsonl"},
    "simulate-trace-gz": {"trace": "trace.jsonl.gz"},
}


def _cases() -> list[Case]:
    sizes = [
        ("SchedulingBasic", "500", 500, 500, 1000, False),
        ("SchedulingBasic", "5000", 5000, 1000, 10000, False),
        ("SchedulingBasic", "quick", 500, 100, 200, True),
    ]
    configs: list[tuple[str, int | None]] = [("default", None), ("pct100", 100)]
    cases = [
        Case(f"basic-{size}-{cfg}", workload, nodes, existing, measured, cfg, pct, quick)
        for workload, size, nodes, existing, measured, quick in sizes
        for cfg, pct in configs
    ]
    # Inter-pod workloads: upstream's 5000Nodes sizes, default configuration; a small quick variant each.
    inter_pod = [
        ("anti-affinity", "SchedulingPodAntiAffinity", 1000, 1000),
        ("affinity", "SchedulingPodAffinity", 5000, 1000),
        ("preferred-affinity", "SchedulingPreferredPodAffinity", 5000, 1000),
        ("preferred-anti-affinity", "SchedulingPreferredPodAntiAffinity", 5000, 1000),
        ("spreading", "TopologySpreading", 5000, 2000),
        ("preferred-spreading", "PreferredTopologySpreading", 5000, 2000),
    ]
    for short, workload, existing, measured in inter_pod:
        cases.append(Case(f"{short}-5000-default", workload, 5000, existing, measured, "default"))
        cases.append(Case(f"{short}-quick-default", workload, 500, existing // 10, 200, "default", quick=True))
    # The user path beside the core loop it is compared with: recording off, the default summary, full
    # records and streamed traces; and what recording alone costs the core loop.
    by_name = {c.name: c for c in cases}
    for base in ("basic-500-pct100", "basic-5000-default"):
        c = by_name[base]
        cases.extend(
            Case(
                f"{base}-{p.replace('+', '-')}",
                c.workload,
                c.nodes,
                c.existing,
                c.measured,
                c.config,
                c.percentage,
                c.quick,
                p,
            )
            for p in ("core+summary", "core+full", "core+trace")
        )
    user_paths = {
        "basic-500-default": ("simulate", "simulate-none"),
        "basic-500-pct100": ("simulate", "simulate-none", "simulate-full", "simulate-trace"),
        "basic-5000-default": ("simulate", "simulate-trace", "simulate-trace-gz"),
        "basic-quick-default": ("simulate", "simulate-trace"),
    }
    for base, paths in user_paths.items():
        c = by_name[base]
        cases.extend(
            Case(f"{base}-{p}", c.workload, c.nodes, c.existing, c.measured, c.config, c.percentage, c.quick, p)
            for p in paths
        )
    return cases + _scale_cases()


#: The sizes of the scale series, by name: nodes, and measured pods of the default and pct100 configs.
SCALES: tuple[tuple[str, int, int, int], ...] = (
    ("5k", 5_000, 5_000, 5_000),
    ("50k", 50_000, 50_000, 10_000),
    ("100k", 100_000, 100_000, 10_000),
    ("1m", 1_000_000, 100_000, 1_000),
)


def _scale_cases() -> list[Case]:
    """SchedulingBasic through the user path at 5k to 1M nodes, 1000 pods running, adaptive scoring
    (``scale-basic-*``) and every node scored (``scale-pct100-*``): how the cost grows with size."""
    cases = []
    for size, node_count, basic, full in SCALES:
        cases.append(
            Case(
                f"scale-basic-{size}",
                "SchedulingBasic",
                node_count,
                1000,
                basic,
                "default",
                path="simulate",
                default=False,
            )
        )
        cases.append(
            Case(
                f"scale-pct100-{size}",
                "SchedulingBasic",
                node_count,
                1000,
                full,
                "pct100",
                100,
                path="simulate",
                default=False,
            )
        )
    return cases


CASES: dict[str, Case] = {case.name: case for case in _cases()}


def config_dict(percentage: int | None) -> dict[str, Any]:
    """A KubeSchedulerConfiguration with the default profile; ``percentage`` sets percentageOfNodesToScore."""
    cfg: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if percentage is not None:
        cfg["percentageOfNodesToScore"] = percentage
    return cfg


def nodes(case: Case) -> Iterator[dict[str, Any]]:
    zones = WORKLOADS[case.workload].zones
    return (node_dict(i, zones) for i in range(case.nodes))


def existing_pods(case: Case) -> Iterator[dict[str, Any]]:
    """Already-running pods, spread round-robin over the nodes."""
    shape = WORKLOADS[case.workload].existing
    return (pod_dict(f"existing-{i}", f"node-{i % case.nodes}", shape) for i in range(case.existing))


def measured_pods(case: Case) -> Iterator[dict[str, Any]]:
    shape = WORKLOADS[case.workload].measured
    return (pod_dict(f"pod-{i}", None, shape) for i in range(case.measured))


def _counting_uids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: str(uuid.UUID(int=next(counter), version=4))


@dataclass
class Prepared:
    """A cluster holding the nodes, existing pods and the burst of measured pods, with a started scheduler
    that has seen every event: the next step is the measured scheduling loop."""

    case: Case
    clock: VirtualClock
    cluster: EmbeddedCluster
    scheduler: Scheduler
    driver: Driver
    measured_names: list[str] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        return WORKLOADS[self.case.workload].measured.namespace

    def run_until_idle(self) -> int:
        """Schedule and bind until the queue has nothing to pop; returns the number of scheduling cycles."""
        return self.driver.run_until_idle()

    def placements(self) -> dict[str, int]:
        """How many measured pods each node received (a sanity check that pods spread as expected)."""
        counts: dict[str, int] = {}
        for name in self.measured_names:
            obj = self.cluster.lookup("Pod", self.namespace, name)
            node = ((obj or {}).get("spec") or {}).get("nodeName")
            if node:
                counts[node] = counts.get(node, 0) + 1
        return counts

    def violations(self) -> list[str]:
        """Placements the workload's hard constraints forbid (the benchmark must not get speed by cheating)."""
        workload = WORKLOADS[self.case.workload]
        placements = self.placements()
        problems = []
        anti = (workload.measured.affinity or {}).get("podAntiAffinity", {})
        if anti.get("requiredDuringSchedulingIgnoredDuringExecution"):
            crowded = [n for n, c in placements.items() if c > 1]
            taken = {f"node-{i % self.case.nodes}" for i in range(self.case.existing)}
            shared = [n for n in placements if n in taken]
            if crowded or shared:
                problems.append(f"anti-affinity broken on {len(crowded) + len(shared)} nodes")
        for constraint in workload.measured.spread:
            if constraint["whenUnsatisfiable"] != "DoNotSchedule":
                continue
            per_zone = dict.fromkeys(workload.zones, 0)
            for node, count in placements.items():
                per_zone[workload.zones[int(node.split("-")[1]) % len(workload.zones)]] += count
            skew = max(per_zone.values()) - min(per_zone.values())
            if skew > constraint["maxSkew"]:
                problems.append(f"zone skew {skew} exceeds maxSkew {constraint['maxSkew']}: {per_zone}")
        return problems

    def unbound(self) -> list[str]:
        """Measured pods that the cluster does not show bound to a node."""
        missing = []
        for name in self.measured_names:
            obj = self.cluster.lookup("Pod", self.namespace, name)
            if obj is None or not (obj.get("spec") or {}).get("nodeName"):
                missing.append(name)
        return missing


def prepare(case: Case, *, seed: int = 0) -> Prepared:
    """Build the cluster and scheduler for ``case`` and create the pending burst (not timed)."""
    clock = VirtualClock(START_TIME)
    features = emulated_features()
    cluster = EmbeddedCluster(clock=clock.now, uid_factory=_counting_uids(), features=features)
    for obj in itertools.chain(nodes(case), existing_pods(case)):
        cluster.create(obj)
    config = load_config(config_dict(case.percentage), features=features)
    scheduler = Scheduler(cluster, config, clock=clock, rng=random.Random(seed))
    driver = Driver(cluster, scheduler, clock, detect_loops=False)
    driver.start()
    prepared = Prepared(case, clock, cluster, scheduler, driver)
    for obj in measured_pods(case):
        cluster.create(obj)
        prepared.measured_names.append(obj["metadata"]["name"])
    cluster.deliver_pending()
    return prepared
