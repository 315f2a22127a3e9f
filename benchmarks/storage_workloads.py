"""scheduler_perf's volume and preemption workloads, run through ``kubesched.simulate``'s own path.

SchedulingCSIPVs and SchedulingInTreePVs (performance-config.yaml, 5000Nodes): every pod, existing
or measured, has its own claim bound to its own PV (pv-csi.yaml: driver ebs.csi.aws.com; pv-aws.yaml:
an in-tree awsElasticBlockStore disk), ReadOnlyMany, 1Gi. For CSI the nodes report
``attachable-volumes-csi-ebs.csi.aws.com: 39`` and a CSINode allowing 39 volumes; the in-tree nodes
have neither, so EBSLimits applies its default of 39. PreemptionBasic: 1000 nodes full of
low-priority pods (pod-low-priority.yaml: priority 1, cpu 900m) and 1000 high-priority pods
(pod-high-priority.yaml: priority 10, cpu 3) that each must preempt; priorities come from
PriorityClasses here because the embedded cluster runs Priority admission.

Existing pods are bound round-robin in the manifests (upstream schedules them in an unmeasured
warm-up); the measured pods arrive together (``burst``), as createPods makes them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from benchmarks.workloads import IMAGE, node_dict

NAMESPACE = "sched-perf"
CSI_DRIVER = "ebs.csi.aws.com"
MAX_VOLUMES = 39


@dataclass(frozen=True)
class SimCase:
    """A case measured through kubesched.simulate's Simulation: with path "sim" the load is untimed and
    the run timed, with "simulate" the whole ``kubesched.simulate()`` call, loading included."""

    name: str
    workload: str
    nodes: int
    existing: int
    measured: int
    quick: bool = False
    config: str = "default"
    path: str = "sim"
    #: Whether a plain ``python -m benchmarks`` runs it; the scale cases run only when ``--only`` names them.
    default: bool = True

    def with_measured(self, measured: int) -> SimCase:
        return dataclasses.replace(self, measured=measured)


def _sim_cases() -> list[SimCase]:
    out = []
    for short, workload in (("csi-pvs", "SchedulingCSIPVs"), ("in-tree-pvs", "SchedulingInTreePVs")):
        out.append(SimCase(f"{short}-5000-default", workload, 5000, 5000, 1000))
        out.append(SimCase(f"{short}-quick-default", workload, 500, 500, 200, quick=True))
    out.append(SimCase("preemption-1000-default", "PreemptionBasic", 1000, 4000, 1000))
    out.append(SimCase("preemption-quick-default", "PreemptionBasic", 100, 400, 100, quick=True))
    # PreemptionBasic through the user path as it grows: four low-priority pods on every node.
    for size, nodes, measured in (
        ("1k", 1000, 1000),
        ("5k", 5000, 5000),
        ("50k", 50_000, 10_000),
        ("100k", 100_000, 10_000),
    ):
        out.append(
            SimCase(
                f"scale-preemption-{size}",
                "PreemptionBasic",
                nodes,
                4 * nodes,
                measured,
                path="simulate",
                default=False,
            )
        )
    return out


SIM_CASES: dict[str, SimCase] = {c.name: c for c in _sim_cases()}


def _pod(
    name: str,
    *,
    node: str | None = None,
    claim: str | None = None,
    cpu: str = "100m",
    priority_class: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "pause",
                "image": IMAGE,
                "resources": {"requests": {"cpu": cpu, "memory": "500Mi"}, "limits": {"cpu": cpu, "memory": "500Mi"}},
            }
        ]
    }
    if claim is not None:
        spec["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": claim}}]
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    status: dict[str, Any] = {}
    if node is not None:
        spec["nodeName"] = node
        status = {"phase": "Running"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": spec,
        "status": status,
    }


def _volume_pair(index: int, csi: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A PV and its claim, bound to each other (as scheduler_perf creates them)."""
    pv_name, claim_name = f"pv-{index}", f"pvc-{index}"
    source = (
        {"csi": {"driver": CSI_DRIVER, "fsType": "ext4", "volumeHandle": f"vol-{index:017x}"}}
        if csi
        else {"awsElasticBlockStore": {"volumeID": f"vol-{index:017x}", "fsType": "ext4"}}
    )
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "capacity": {"storage": "1Gi"},
            "persistentVolumeReclaimPolicy": "Retain",
            **source,
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": NAMESPACE,
                "name": claim_name,
            },
        },
        "status": {"phase": "Bound"},
    }
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": claim_name,
            "namespace": NAMESPACE,
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
        },
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "",
            "volumeName": pv_name,
        },
        "status": {"phase": "Bound", "accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"}},
    }
    return pv, pvc


def _csi_node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [{"name": CSI_DRIVER, "nodeID": name, "allocatable": {"count": MAX_VOLUMES}}]},
    }


def objects(case: SimCase) -> Iterator[dict[str, Any]]:
    """Every object of the case in manifest order: cluster objects, existing pods, measured pods."""
    if case.workload == "PreemptionBasic":
        for name, value in (("low", 1), ("high", 10)):
            yield {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
        for i in range(case.nodes):
            yield node_dict(i)
        for i in range(case.existing):
            yield _pod(f"low-{i}", node=f"node-{i % case.nodes}", cpu="900m", priority_class="low")
        for i in range(case.measured):
            yield _pod(f"high-{i}", cpu="3", priority_class="high")
        return
    csi = case.workload == "SchedulingCSIPVs"
    for i in range(case.nodes):
        node = node_dict(i)
        if csi:
            for key in ("capacity", "allocatable"):
                node["status"][key][f"attachable-volumes-csi-{CSI_DRIVER}"] = str(MAX_VOLUMES)
        yield node
        if csi:
            yield _csi_node(node["metadata"]["name"])
    for i in range(case.existing + case.measured):
        yield from _volume_pair(i, csi)
    for i in range(case.existing):
        yield _pod(f"existing-{i}", node=f"node-{i % case.nodes}", claim=f"pvc-{i}")
    for i in range(case.measured):
        yield _pod(f"pod-{i}", claim=f"pvc-{case.existing + i}")
