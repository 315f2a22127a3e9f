"""Scenarios shared by the capacity, plan, explain and report tests (small ones, and one of a thousand nodes)."""

from __future__ import annotations

from typing import Any


def node(
    name: str, cpu: str = "2", memory: str = "4Gi", *, zone: str = "a", taints: list | None = None, pods: str = "110"
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
        "spec": {"taints": taints} if taints else {},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }


def pod(
    name: str,
    cpu: str = "500m",
    memory: str = "256Mi",
    *,
    node_name: str | None = None,
    namespace: str = "default",
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        **spec,
    }
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": body}


def deployment(name: str, replicas: int, cpu: str = "500m", namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod(name, cpu)["spec"]},
        },
    }


POOL_LABEL = "cloud.google.com/gke-nodepool"


def pooled_cluster(nodes: int = 1000, pending: int = 1500) -> list[dict[str, Any]]:
    """A large cluster in three node pools (general, highmem and tainted gpu nodes with nvidia.com/gpu), one
    running pod per node, and pending pods: web pods that request ephemeral-storage too, gpu pods (more than
    there are GPUs) and a few that fit nowhere."""
    out: list[dict[str, Any]] = []
    gpu_nodes, highmem = max(1, nodes // 25), max(1, nodes // 12)
    for i in range(nodes):
        pool = "gpu" if i < gpu_nodes else "highmem" if i < gpu_nodes + highmem else "general"
        n = node(
            f"node-{i}",
            cpu="16" if pool != "general" else "8",
            memory={"gpu": "64Gi", "highmem": "128Gi"}.get(pool, "32Gi"),
            zone="abc"[i % 3],
            taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}] if pool == "gpu" else None,
        )
        n["metadata"]["labels"][POOL_LABEL] = pool
        n["status"]["allocatable"]["ephemeral-storage"] = "100Gi"
        if pool == "gpu":
            n["status"]["allocatable"]["nvidia.com/gpu"] = "4"
        out.append(n)
        out.append(pod(f"running-{i}", cpu="1", memory="2Gi", node_name=f"node-{i}", namespace="system"))
    gpus, huge = min(pending // 8, gpu_nodes * 4 + 20), max(1, pending // 75)
    toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    for i in range(pending):
        if i < gpus:
            p = pod(f"train-{i}", cpu="2", memory="8Gi", namespace="ml", tolerations=toleration)
            resources = p["spec"]["containers"][0]["resources"]
            resources["requests"]["nvidia.com/gpu"] = "1"
            resources["limits"] = {"nvidia.com/gpu": "1"}
        elif i < gpus + huge:
            p = pod(f"huge-{i}", cpu="64", memory="1Ti", namespace="batch")
        else:
            p = pod(f"web-{i}", cpu="500m", memory="1Gi")
            p["spec"]["containers"][0]["resources"]["requests"]["ephemeral-storage"] = "1Gi"
        out.append(p)
    return out
