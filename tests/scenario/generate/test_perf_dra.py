"""scheduler_perf's DRA workloads: upstream's templates, the init load allocated consistently, valid objects."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kubesched.scenario.generate import workload_objects
from kubesched.scenario.generate.perf_dra import DRIVER, NODE_PREFIX, dra_workload_objects
from kubesched.sim.simulate import simulate


def _by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_template_workload_nodes_devices_and_pods() -> None:
    objects = list(workload_objects("SchedulingWithResourceClaimTemplate", 3, 7, 4))
    nodes, slices = _by_kind(objects, "Node"), _by_kind(objects, "ResourceSlice")
    assert [n["metadata"]["name"] for n in nodes] == [f"{NODE_PREFIX}{i}" for i in range(3)]
    assert nodes[0]["metadata"]["labels"] == {"node-with-dra": "true"}
    assert [(s["metadata"]["name"], s["spec"]["nodeName"], s["spec"]["pool"]["name"]) for s in slices] == [
        (n["metadata"]["name"],) * 3 for n in nodes
    ]
    device = slices[0]["spec"]["devices"][3]
    assert len(slices[0]["spec"]["devices"]) == 10 and slices[0]["spec"]["driver"] == DRIVER
    assert device == {
        "name": "instance-3",
        "attributes": {
            "model": {"string": "A100"},
            "family": {"string": "GPU"},
            "driverVersion": {"version": "1.2.3"},
            "dra.example.com/numa": {"int": 3},
        },
        "capacity": {"memory": {"value": "1Gi"}},
    }
    (template,) = _by_kind(objects, "ResourceClaimTemplate")
    measured = [p for p in _by_kind(objects, "Pod") if p["metadata"]["namespace"] == "test"]
    assert len(measured) == 4
    assert {p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] for p in measured} == {
        template["metadata"]["name"]
    }


def test_init_claims_are_allocated_on_distinct_devices_of_their_pods_nodes() -> None:
    objects = list(dra_workload_objects("SchedulingWithResourceClaim", 2, 13, 6))
    claims = {c["metadata"]["name"]: c for c in _by_kind(objects, "ResourceClaim")}
    init = [c for c in claims.values() if c["metadata"]["namespace"] == "init"]
    assert len(init) == 3  # 13 pods, five to a claim
    devices = [(r["pool"], r["device"]) for c in init for r in c["status"]["allocation"]["devices"]["results"]]
    assert len(set(devices)) == len(devices) == 3
    for c in init:
        (result,) = c["status"]["allocation"]["devices"]["results"]
        term = c["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
        assert term["values"] == [result["pool"]] and c["metadata"]["finalizers"]
    for pod in (p for p in _by_kind(objects, "Pod") if p["metadata"]["namespace"] == "init"):
        claim = claims[pod["spec"]["resourceClaims"][0]["resourceClaimName"]]
        assert pod["spec"]["nodeName"] == claim["status"]["allocation"]["devices"]["results"][0]["pool"]
    measured = [p for p in _by_kind(objects, "Pod") if p["metadata"]["namespace"] == "test"]
    sharing = Counter(p["spec"]["resourceClaims"][0]["resourceClaimName"] for p in measured)
    assert sharing == {"test-claim-0": 5, "test-claim-1": 1}
    assert "status" not in claims["test-claim-0"]


def test_more_init_pods_than_devices_is_refused() -> None:
    with pytest.raises(ValueError, match="more than 1 nodes x 10"):
        list(workload_objects("SchedulingWithResourceClaimTemplate", 1, 11, 0))


@pytest.mark.parametrize("workload", ["SchedulingWithResourceClaimTemplate", "SchedulingWithResourceClaim"])
def test_dra_workloads_load(workload: str) -> None:
    result = simulate(list(workload_objects(workload, 4, 8, 10)), burst=True)
    assert len(result.final) == 10  # every object passed the API server's validation
