"""Builders shared by the node resources tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.objects import Node, Pod
from tests.factories import make_node, make_pod, pod_dict


def node(
    name: str, cpu: str = "10", memory: str = "20", pods: int = 32, extra: Mapping[str, str] | None = None
) -> Node:
    """A node with the given allocatable (``extra``: further resources such as ``example.com/gpu``)."""
    return make_node(name, cpu=cpu, memory=memory, pods=str(pods), extra=extra)


def pod(
    name: str = "p",
    requests: Mapping[str, str] | None = None,
    *,
    node_name: str = "",
    init: Sequence[Mapping[str, str]] = (),
    overhead: Mapping[str, str] | None = None,
    containers: Sequence[Mapping[str, str] | None] | None = None,
) -> Pod:
    """A pod with one container requesting ``requests`` (or several ``containers``), init containers."""
    spec: dict[str, Any] = {}
    if containers is not None:
        spec["containers"] = [
            {"name": f"c{i}", "image": "img", **({} if r is None else {"resources": {"requests": dict(r)}})}
            for i, r in enumerate(containers)
        ]
    if init:
        spec["initContainers"] = [
            {"name": f"i{i}", "image": "img", "resources": {"requests": dict(r)}} for i, r in enumerate(init)
        ]
    if overhead:
        spec["overhead"] = dict(overhead)
    if containers is not None or init or overhead:
        return Pod.from_dict(pod_dict(name, requests=requests, node_name=node_name, spec=spec))
    return make_pod(name, requests=requests, node_name=node_name)
