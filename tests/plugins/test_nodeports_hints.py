"""NodePorts' v1.34 registrations and queueing hint (v1.30's: test_nodeports.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.plugins import nodeports
from tests.factories import pod_dict
from tests.plugins.queueing import QUEUE, SKIP, V134, hint_for, pod, registrations

POD_DELETE = ClusterEvent("Pod", ActionType.DELETE)


def _ports(*ports: tuple[int, str, str]) -> dict[str, Any]:
    return {
        "containers": [
            {
                "name": "c",
                "image": "x",
                "ports": [
                    {"containerPort": p, "hostPort": p, "protocol": proto, "hostIP": ip} for p, proto, ip in ports
                ],
            }
        ]
    }


def test_v134_registers_pod_deletions_with_a_hint_and_node_additions() -> None:
    assert registrations(nodeports.new(None, V134)) == [
        (POD_DELETE, True),
        (ClusterEvent("Node", ActionType.ADD), False),
    ]


@pytest.mark.parametrize(
    ("name", "deleted_spec", "bound", "want"),
    [
        ("a bound pod held the port", _ports((8080, "TCP", "")), True, QUEUE),
        ("a pending pod never held it", _ports((8080, "TCP", "")), False, SKIP),
        ("the deleted pod used no host port", {}, True, SKIP),
        ("another port", _ports((9090, "TCP", "")), True, SKIP),
        ("the same port over another protocol", _ports((8080, "UDP", "")), True, SKIP),
        ("the same port on a specific ip (the pod binds all ips)", _ports((8080, "TCP", "10.0.0.1")), True, QUEUE),
    ],
)
def test_is_schedulable_after_pod_deleted(name: str, deleted_spec: dict[str, Any], bound: bool, want: object) -> None:
    target = pod("p", spec=_ports((8080, "TCP", "")))
    deleted = pod("q", node_name="n" if bound else "", spec=deleted_spec)
    assert hint_for(nodeports.new(None, V134), POD_DELETE)(target, deleted, None) is want


def test_a_nominated_pod_held_its_ports_too() -> None:
    target = pod("p", spec=_ports((8080, "TCP", "")))
    raw = pod_dict("q", spec=_ports((8080, "TCP", "")))
    raw["status"]["nominatedNodeName"] = "n"
    assert hint_for(nodeports.new(None, V134), POD_DELETE)(target, Pod.from_dict(raw), None) is QUEUE
