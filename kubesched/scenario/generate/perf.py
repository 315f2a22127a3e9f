"""scheduler_perf's templates and workloads (test/integration/scheduler_perf), as plain dicts.

Upstream creates nodes from node-default.yaml (cpu 4, memory 32Gi, pods 110), a set of already-running
pods, then pending pods (one pause container requesting cpu 100m, memory 500Mi). Besides
SchedulingBasic, the inter-pod workloads (SchedulingPodAntiAffinity, SchedulingPodAffinity,
SchedulingPreferredPodAffinity, SchedulingPreferredPodAntiAffinity, TopologySpreading,
PreferredTopologySpreading) use upstream's pod templates, with two deliberate differences: the
affinity terms name the namespaces the pods are really created in (sched-0 / sched-1; some upstream
versions name namespaces that do not exist, so the terms match nothing), and TopologySpreading uses
maxSkew 1 (upstream 5), the stricter setting. Existing pods are bound round-robin.

The DRA workloads (SchedulingWithResourceClaimTemplate, SchedulingWithResourceClaim) live in
:mod:`kubesched.scenario.generate.perf_dra`; :func:`workload_objects` makes either kind.

The benchmarks build their cases from these; ``kubesched generate perf`` writes them as a scenario.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kubesched.scenario.generate.perf_dra import DRA_WORKLOADS, dra_workload_objects

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
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key, "namespaces": [TEST_NS, SETUP_NS]}


def _affine(color: str, kind: str, key: str, *, preferred: bool) -> PodShape:
    term = _term(color, key)
    block = (
        {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": term}]}
        if preferred
        else {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    )
    return PodShape(namespace=TEST_NS, labels=(("color", color),), affinity={kind: block})


def _spreading(when: str, max_skew: int) -> PodShape:
    return PodShape(
        labels=(("color", "blue"),),
        spread=(
            {
                "maxSkew": max_skew,
                "topologyKey": ZONE_LABEL,
                "whenUnsatisfiable": when,
                "labelSelector": {"matchLabels": {"color": "blue"}},
            },
        ),
    )


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
        "containers": [
            {
                "name": "pause",
                "image": IMAGE,
                "resources": {
                    "requests": {"cpu": "100m", "memory": "500Mi"},
                    "limits": {"cpu": "100m", "memory": "500Mi"},
                },
            }
        ],
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


def workload_objects(workload: str, nodes: int, existing: int, measured: int) -> Iterator[dict[str, Any]]:
    """A scheduler_perf scenario: ``nodes`` nodes, ``existing`` bound pods, then ``measured`` pending ones."""
    if workload in DRA_WORKLOADS:
        yield from dra_workload_objects(workload, nodes, existing, measured)
        return
    try:
        w = WORKLOADS[workload]
    except KeyError:
        raise ValueError(f"unknown workload {workload!r}; known: {', '.join([*WORKLOADS, *DRA_WORKLOADS])}") from None
    for i in range(nodes):
        yield node_dict(i, w.zones)
    for i in range(existing):
        yield pod_dict(f"existing-{i}", f"node-{i % nodes}", w.existing)
    for i in range(measured):
        yield pod_dict(f"pod-{i}", None, w.measured)
