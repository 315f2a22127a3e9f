"""Builders for the objects tests need: plain API dicts and parsed views, with sensible defaults."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

from kubesched.api.objects import Node, Pod
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.handle import Handle

_uids = itertools.count(1)


def as_handle(fake: object) -> Handle:
    """``fake`` as a plugin's framework handle: tests hand plugins a double with only what they read."""
    return cast(Handle, fake)


#: The handle of a plugin built without a framework (one that reads nothing of it).
NO_HANDLE = as_handle(None)


def node_dict(
    name: str,
    *,
    cpu: str | int = "4",
    memory: str = "8Gi",
    pods: str | int = "110",
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, Any]] = (),
    unschedulable: bool = False,
    extra: Mapping[str, Any] | None = None,
    images: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A Node as the API serves it; ``extra`` adds allocatable resources (e.g. ``nvidia.com/gpu``)."""
    alloc: dict[str, Any] = {"cpu": str(cpu), "memory": memory, "pods": str(pods)}
    alloc.update(extra or {})
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"node-{name}", "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc), "images": [dict(i) for i in images]},
    }


def pod_dict(
    name: str,
    *,
    namespace: str = "default",
    cpu: str | None = None,
    memory: str | None = None,
    requests: Mapping[str, str] | None = None,
    node_name: str = "",
    labels: Mapping[str, str] | None = None,
    priority: int = 0,
    spec: Mapping[str, Any] | None = None,
    uid: str | None = None,
    image: str = "busybox",
) -> dict[str, Any]:
    """A Pod with one container; ``spec`` entries are merged over the defaults."""
    reqs: dict[str, str] = dict(requests or {})
    if cpu is not None:
        reqs["cpu"] = cpu
    if memory is not None:
        reqs["memory"] = memory
    container: dict[str, Any] = {"name": "c", "image": image}
    if reqs:
        container["resources"] = {"requests": reqs}
    body: dict[str, Any] = {"containers": [container], "schedulerName": "default-scheduler", "priority": priority}
    if node_name:
        body["nodeName"] = node_name
    body.update(spec or {})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid or f"uid-{name}-{next(_uids)}",
            "labels": dict(labels or {}),
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
        "spec": body,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def make_node(name: str, **kw: Any) -> Node:
    return Node.from_dict(node_dict(name, **kw))


def make_pod(name: str, **kw: Any) -> Pod:
    return Pod.from_dict(pod_dict(name, **kw))


def make_snapshot(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> Snapshot:
    """A snapshot of ``nodes`` with the bound ``pods`` (each must carry ``node_name``) accounted."""
    cache = Cache(clock=lambda: datetime(2024, 1, 1, tzinfo=UTC))
    for node in nodes:
        cache.add_node(node)
    for pod in pods:
        cache.add_pod(pod)
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return snapshot
