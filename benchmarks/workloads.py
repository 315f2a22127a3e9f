"""Workload builders: scheduler_perf's "SchedulingBasic", built as plain dicts in memory.

Upstream (test/integration/scheduler_perf/config/performance-config.yaml) creates nodes from
node-default.yaml (cpu 4, memory 32Gi, pods 110), a set of already-running pods, then a burst of
pending pods from pod-default.yaml (one pause container requesting cpu 100m, memory 500Mi) and
measures how fast they are scheduled. Objects are built directly as dicts so that the measurement
covers scheduling and binding, not manifest parsing.
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
    return [
        Case(f"basic-{size}-{cfg}", workload, nodes, existing, measured, cfg, pct, quick)
        for workload, size, nodes, existing, measured, quick in sizes
        for cfg, pct in configs
    ]


CASES: dict[str, Case] = {case.name: case for case in _cases()}


def node_dict(index: int) -> dict[str, Any]:
    """A node like scheduler_perf's node-default.yaml, labelled with its hostname and one of three zones."""
    name = f"node-{index}"
    resources = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, ZONE_LABEL: ZONES[index % len(ZONES)]},
        },
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running",
        },
    }


def pod_dict(name: str, node_name: str | None = None) -> dict[str, Any]:
    """A pod like scheduler_perf's pod-default.yaml; ``node_name`` makes it an existing, bound pod."""
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
    status: dict[str, Any] = {"phase": "Pending"}
    if node_name is not None:
        spec["nodeName"] = node_name
        status = {"phase": "Running"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
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
    return (node_dict(i) for i in range(case.nodes))


def existing_pods(case: Case) -> Iterator[dict[str, Any]]:
    """Already-running pods, spread round-robin over the nodes."""
    return (pod_dict(f"existing-{i}", f"node-{i % case.nodes}") for i in range(case.existing))


def measured_pods(case: Case) -> Iterator[dict[str, Any]]:
    return (pod_dict(f"pod-{i}") for i in range(case.measured))


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
            obj = self.cluster.lookup("Pod", NAMESPACE, name)
            node = ((obj or {}).get("spec") or {}).get("nodeName")
            if node:
                counts[node] = counts.get(node, 0) + 1
        return counts

    def unbound(self) -> list[str]:
        """Measured pods that the cluster does not show bound to a node."""
        missing = []
        for name in self.measured_names:
            obj = self.cluster.lookup("Pod", NAMESPACE, name)
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
