"""Devices as the tools count them after a run: per request on a node, per DeviceClass per node, and the
pods DynamicResources rejected, on examples/dra with one more pod wanting two A100s (one is left per node)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched import simulate
from kubesched.sim.device_use import (
    DeviceInventory,
    RequestCount,
    class_columns,
    explain_pod_devices,
    pod_device_counts,
)
from kubesched.sim.simulate import SimulationResult

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra"

TRAINER: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "trainer", "namespace": "ml"},
    "spec": {
        "containers": [{"name": "t", "image": "x", "resources": {"claims": [{"name": "gpus"}]}}],
        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-a100"}],
    },
}


@pytest.fixture(scope="module")
def result() -> SimulationResult:
    return simulate([EXAMPLE, TRAINER], record="full")


def cluster_objects(result: SimulationResult, kind: str) -> list[dict[str, Any]]:
    assert result.cluster is not None
    return list(result.cluster.objects(kind))


def trainer(result: SimulationResult) -> dict[str, Any]:
    return next(p for p in cluster_objects(result, "Pod") if p["metadata"]["name"] == "trainer")


def test_request_counts_say_how_many_devices_match_and_are_taken(result: SimulationResult) -> None:
    assert result.final["ml/trainer"] is None
    inventory = DeviceInventory.of_cluster(result.cluster)
    [count] = inventory.request_counts(trainer(result), "a100-0", {})
    assert (count.request, count.device_class, count.wanted) == ("gpus", "gpu-a100", "2")
    assert (count.devices, count.matching, count.allocated, count.free) == (5, 5, 4, 1)
    assert count.describe().endswith("(2 of class gpu-a100): 5 of 5 devices match, 4 already allocated")
    [t4] = inventory.request_counts(trainer(result), "t4-0", {})
    assert (t4.devices, t4.matching) == (2, 0) and t4.describe().endswith("none of 2 devices match")


def test_nodes_with_the_same_counts_come_together(result: SimulationResult) -> None:
    inventory = DeviceInventory.of_cluster(result.cluster)
    groups = pod_device_counts(inventory, trainer(result), {n: {} for n in ("a100-0", "t4-0", "a100-1", "t4-1")})
    assert [g.nodes for g in groups] == [("a100-0", "a100-1"), ("t4-0", "t4-1")]
    assert groups[0].to_dict()["requests"][0]["matching"] == 5


def test_only_pods_rejected_by_dynamic_resources_are_counted(result: SimulationResult) -> None:
    records = {
        "ml/trainer": {"filter": {"a100-0": {"plugin": "DynamicResources"}, "t4-0": {"plugin": "NodeResourcesFit"}}},
        "ml/other": {"filter": {"a100-0": {"plugin": "NodeResourcesFit"}}},
    }
    found = explain_pod_devices(result.cluster, records)
    assert list(found) == ["ml/trainer"] and found["ml/trainer"][0].nodes == ("a100-0",)


def test_class_columns_count_allocated_of_matching_per_node(result: SimulationResult) -> None:
    inventory = DeviceInventory.of_cluster(result.cluster)
    names, allocated, total = class_columns(inventory, [("a100-0", {}), ("t4-0", {}), ("cpu-only", {})])
    assert names == ["devices: gpu-a100", "devices: gpu-t4"]
    assert total == [[5, 0], [0, 2], [0, 0]]
    assert allocated[0] == [4, 0] and allocated[2] == [0, 0]
    assert inventory.class_use([("a100-0", {}), ("a100-1", {})]) == {"gpu-a100": (8, 10)}


def test_a_missing_class_and_a_failing_selector_are_reported_not_raised() -> None:
    slices = [
        {
            "metadata": {"name": "s"},
            "spec": {
                "driver": "d",
                "nodeName": "n",
                "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "g"}],
            },
        }
    ]
    classes = [{"metadata": {"name": "bad"}, "spec": {"selectors": [{"cel": {"expression": "device.nope"}}]}}]
    claim = {
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {
            "devices": {
                "requests": [
                    {"name": "a", "exactly": {"deviceClassName": "bad"}},
                    {"name": "b", "exactly": {"deviceClassName": "gone"}},
                ]
            }
        },
    }
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"resourceClaims": [{"name": "x", "resourceClaimName": "c"}]},
    }
    bad, gone = DeviceInventory(slices, classes, [claim]).request_counts(pod, "n", {})
    assert isinstance(bad, RequestCount) and "selector 'device.nope'" in bad.error and bad.matching == 0
    assert gone.error == "DeviceClass gone does not exist"
