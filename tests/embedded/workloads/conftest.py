"""Builders for workload controller tests: an embedded cluster delivering events at once, and manifests."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.controlplane import ControlPlane
from kubesched.embedded.workloads import ControllerManager
from tests.embedded.conftest import FakeClock

CONTAINERS = [{"name": "c", "image": "registry.k8s.io/pause", "resources": {"requests": {"cpu": "100m"}}}]


def start_controllers(cluster: EmbeddedCluster, rng: random.Random | None = None) -> ControllerManager:
    """Start the cluster's control plane, as a simulation does; its workload controllers."""
    plane = ControlPlane(cluster, rng=rng)
    plane.start()
    return plane.workloads


@pytest.fixture
def env() -> tuple[EmbeddedCluster, ControllerManager, FakeClock]:
    clock = FakeClock()
    counter = itertools.count(1)
    cluster = EmbeddedCluster(clock=clock, uid_factory=lambda: f"uid-{next(counter)}", synchronous=True)
    return cluster, start_controllers(cluster, random.Random(7)), clock


def node(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def template(app: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": CONTAINERS, **spec}}


def workload(kind: str, name: str, app: str | None = None, **spec: Any) -> dict[str, Any]:
    app = app or name
    api = "batch/v1" if kind == "Job" else "apps/v1"
    body: dict[str, Any] = {"template": template(app, **({"restartPolicy": "Never"} if kind == "Job" else {}))}
    if kind != "Job":
        body["selector"] = {"matchLabels": {"app": app}}
    body.update(spec)
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": body}


def pods_of(cluster: EmbeddedCluster, prefix: str = "") -> list[dict[str, Any]]:
    return [p for p in cluster.list("Pod", "default")[0] if p["metadata"]["name"].startswith(prefix)]


def bind(cluster: EmbeddedCluster, pod: dict[str, Any], node_name: str = "n1") -> None:
    cluster.bind(pod["metadata"]["namespace"], pod["metadata"]["name"], node_name)


def set_phase(cluster: EmbeddedCluster, name: str, phase: str) -> None:
    pod = cluster.get("Pod", "default", name)
    pod.setdefault("status", {})["phase"] = phase
    cluster.update(pod)
