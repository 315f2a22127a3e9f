"""Small scenarios shared by the capacity, plan, explain and report tests."""

from __future__ import annotations

from typing import Any


def node(name: str, cpu: str = "2", memory: str = "4Gi", *, zone: str = "a", taints: list | None = None,
         pods: str = "110") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zone}},
            "spec": {"taints": taints} if taints else {},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}


def pod(name: str, cpu: str = "500m", memory: str = "256Mi", *, node_name: str | None = None,
        namespace: str = "default", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "x",
                                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": body}


def deployment(name: str, replicas: int, cpu: str = "500m", namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": pod(name, cpu)["spec"]}}}
