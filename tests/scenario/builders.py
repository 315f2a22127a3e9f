"""Objects scenario tests build: namespaces, PriorityClasses, pods that leave their priority to admission."""

from __future__ import annotations

from typing import Any

from tests.factories import pod_dict


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def priority_class(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def classless_pod(name: str, **kw: Any) -> dict[str, Any]:
    pod = pod_dict(name, **kw)
    del pod["spec"]["priority"]  # given by priority admission
    return pod
