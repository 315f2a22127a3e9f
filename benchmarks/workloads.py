"""Workload builders: scheduler_perf's workloads, built as plain dicts in memory.

Upstream (test/integration/scheduler_perf/config/performance-config.yaml) creates nodes from
node-default.yaml (cpu 4, memory 32Gi, pods 110), a set of already-running pods, then a burst of
pending pods (one pause container requesting cpu 100m, memory 500Mi) and measures how fast they are
scheduled. Objects are built directly as dicts so that the measurement covers scheduling and
binding, not manifest parsing.

Besides SchedulingBasic, the inter-pod workloads (SchedulingPodAntiAffinity, SchedulingPodAffinity,
SchedulingPreferredPodAffinity, SchedulingPreferredPodAntiAffinity, TopologySpreading,
PreferredTopologySpreading) use upstream's pod templates, with two deliberate differences: the
affinity terms name the namespaces the pods are really created in (sched-0 / sched-1; some upstream
versions name namespaces that do not exist, so the terms match nothing), and TopologySpreading uses
maxSkew 1 (upstream 5), the stricter setting. Existing pods are bound round-robin before timing.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubesched.clock import VirtualClock
from kubesched.cluster.embedded import EmbeddedCluster
from kubesched.config import load_config
from kubesched.scheduler import Scheduler

START_TIME = datetime(2024, 1, 1, tzinfo=UTC)
ZONES = ("zone-a", "zone-b", "zone-c")
ZONE_LABEL = "topology.kubernetes.io/zone"
IMAGE = "registry.k8s.io/pause:3.9"
NAMESPACE = "sched-perf"
HOSTNAME_LABEL = "kubernetes.io/hostname"
SETUP_NS, TEST_NS = "sched-0", "sched-1"


@dataclass(frozen=True)
class PodShape:
    """What distinguishes a workload's pods from pod-default.yaml: namespace, labels, affinity, spreading."""

    namespace: str = NAMESPACE
    labels: tuple[tuple[str, str], ...] = ()
    affinity: dict[str, Any] | None = None
    spread: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Workload:
    """A scheduler_perf workload: zone labels of the nodes and the shapes of existing and measured pods."""

    zones: tuple[str, ...] = ZONES
    existing: PodShape = PodShape()
    measured: PodShape = PodShape()


def _term(color: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key,
            "namespaces": [TEST_NS, SETUP_NS]}


def _affine(color: str, kind: str, key: str, *, preferred: bool) -> PodShape:
    term = _term(color, key)
    block = ({"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": term}]}
             if preferred else {"requiredDuringSchedulingIgnoredDuringExecution": [term]})
    return PodShape(namespace=TEST_NS, labels=(("color", color),), affinity={kind: block})


def _spreading(when: str, max_skew: int) -> PodShape:
    return PodShape(labels=(("color", "blue"),), spread=({
        "maxSkew": max_skew, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"color": "blue"}}},))


def _in_setup(shape: PodShape) -> PodShape:
    return PodShape(SETUP_NS, shape.labels, shape.affinity, shape.spread)


def _workloads() -> dict[str, Workload]:
    anti = _affine("green", "podAntiAffinity", HOSTNAME_LABEL, preferred=False)
    aff = _affine("blue", "podAffinity", ZONE_LABEL, preferred=False)
    pref = _affine("red", "podAffinity", HOSTNAME_LABEL, preferred=True)
    pref_anti = _affine("yellow", "podAntiAffinity", HOSTNAME_LABEL, preferred=True)
    moons = ("moon-1", "moon-2", "moon-3")
    return {
        "SchedulingBasic": Workload(),
        "SchedulingPodAntiAffinity": Workload(existing=_in_setup(anti), measured=anti),
        "SchedulingPodAffinity": Workload(zones=("zone1",), existing=_in_setup(aff), measured=aff),
        "SchedulingPreferredPodAffinity": Workload(existing=_in_setup(pref), measured=pref),
        "SchedulingPreferredPodAntiAffinity": Workload(existing=_in_setup(pref_anti), measured=pref_anti),
        "TopologySpreading": Workload(zones=moons, measured=_spreading("DoNotSchedule", 1)),
        "PreferredTopologySpreading": Workload(zones=moons, measured=_spreading("ScheduleAnyway", 5)),
    }


WORKLOADS: dict[str, Workload] = _workloads()


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

    def with_measured(self, measured: int) -> Case:
        """The same case with a different number of measured pods (e.g. a shorter profile run)."""
        return Case(self.name, self.workload, self.nodes, self.existing, measured, self.config,
                    self.percentage, self.quick)


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
    return cases


CASES: dict[str, Case] = {case.name: case for case in _cases()}


def node_dict(index: int, zones: tuple[str, ...] = ZONES) -> dict[str, Any]:
    """A node like scheduler_perf's node-default.yaml, labelled with its hostname and one of ``zones``."""
    name = f"node-{index}"
    resources = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {HOSTNAME_LABEL: name, ZONE_LABEL: zones[index % len(zones)]},
        },
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running",
        },
    }


def pod_dict(name: str, node_name: str | None = None, shape: PodShape = PodShape()) -> dict[str, Any]:
    """A pod like scheduler_perf's templates; ``node_name`` makes it an existing, bound pod."""
    spec: dict[str, Any] = {
        "containers": [{
            "name": "pause",
            "image": IMAGE,
            "resources": {
                "requests": {"cpu": "100m", "memory": "500Mi"},
                "limits": {"cpu": "100m", "memory": "500Mi"},
            },
        }],
    }
    if shape.affinity is not None:
        spec["affinity"] = shape.affinity
    if shape.spread:
        spec["topologySpreadConstraints"] = list(shape.spread)
    status: dict[str, Any] = {"phase": "Pending"}
    if node_name is not None:
        spec["nodeName"] = node_name
        status = {"phase": "Running"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": shape.namespace, "labels": dict(shape.labels)},
        "spec": spec,
        "status": status,
    }


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
    measured_names: list[str] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        return WORKLOADS[self.case.workload].measured.namespace

    def run_until_idle(self) -> int:
        """Schedule and bind until the queue has nothing to pop; returns the number of scheduling cycles."""
        scheduler, cluster = self.scheduler, self.cluster
        cycles = 0
        while scheduler.schedule_next():
            cycles += 1
            scheduler.run_pending_tasks()
            cluster.deliver_pending()
        # Bindings still in flight when the queue went empty (none expected, but never leave them).
        scheduler.run_pending_tasks()
        cluster.deliver_pending()
        return cycles

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
    cluster = EmbeddedCluster(clock=clock.now, uid_factory=_counting_uids())
    for obj in itertools.chain(nodes(case), existing_pods(case)):
        cluster.create(obj)
    config = load_config(config_dict(case.percentage))
    scheduler = Scheduler(cluster, config, clock=clock, rng=random.Random(seed))
    scheduler.start()
    cluster.deliver_pending()
    prepared = Prepared(case, clock, cluster, scheduler)
    for obj in measured_pods(case):
        cluster.create(obj)
        prepared.measured_names.append(obj["metadata"]["name"])
    cluster.deliver_pending()
    return prepared
