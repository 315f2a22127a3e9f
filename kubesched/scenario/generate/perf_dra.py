"""scheduler_perf's DRA workloads (test/integration/scheduler_perf/dra/performance-config.yaml) as plain dicts.

Upstream makes nodes from node-with-dra-test-driver.yaml (cpu 4, memory 32Gi, pods 110, labelled
``node-with-dra``), publishes ``maxClaimsPerNode`` devices per node for the driver
``test-driver.cdi.k8s.io`` (one ResourceSlice per node named after it, devices ``instance-<i>`` with
the attributes model A100, family GPU, driverVersion 1.2.3, ``dra.example.com/numa`` and 1Gi of memory),
the DeviceClass ``test-class``, then pods whose claims ask for one device of that class:

* SchedulingWithResourceClaimTemplate: each pod claims a device through the ResourceClaimTemplate
  ``test-claim-template`` (10 devices per node);
* SchedulingWithResourceClaim: five pods share each ResourceClaim ``test-claim-<i / 5>`` (2 devices per
  node).

Upstream schedules the ``init`` pods in an unmeasured warm-up; here they are bound already, round-robin,
with their claims allocated as the scheduler would have left them (device ``instance-<k>`` of the node
for the node's k-th claim; reserved for their pods by the resourceclaim controller, not in the
manifests, since only the API server knows a pod's UID). The measured pods are pending, in ``test``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kubesched.scenario.generate.devices import API_VERSION

DRIVER = "test-driver.cdi.k8s.io"
DEVICE_CLASS = "test-class"
TEMPLATE = "test-claim-template"
NODE_PREFIX = "scheduler-perf-dra-"
INIT_NS, TEST_NS = "init", "test"
IMAGE = "registry.k8s.io/pause:3.10.1"
CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"


@dataclass(frozen=True)
class DraWorkload:
    """Devices per node, and whether pods claim through a template or share named claims."""

    claims_per_node: int
    template: bool
    pods_per_claim: int = 1


DRA_WORKLOADS: dict[str, DraWorkload] = {
    "SchedulingWithResourceClaimTemplate": DraWorkload(10, template=True),
    "SchedulingWithResourceClaim": DraWorkload(2, template=False, pods_per_claim=5),
}


def dra_node(index: int) -> dict[str, Any]:
    """node-with-dra-test-driver.yaml, named ``scheduler-perf-dra-<index>``."""
    resources = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"{NODE_PREFIX}{index}", "labels": {"node-with-dra": "true"}},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running",
        },
    }


def driver_slice(node: str, devices: int) -> dict[str, Any]:
    """The test driver's ResourceSlice for ``node`` (scheduler_perf's resourceSlice())."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": node},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"instance-{i}",
                    "attributes": {
                        "model": {"string": "A100"},
                        "family": {"string": "GPU"},
                        "driverVersion": {"version": "1.2.3"},
                        "dra.example.com/numa": {"int": i},
                    },
                    "capacity": {"memory": {"value": "1Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": DEVICE_CLASS},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def _request_spec() -> dict[str, Any]:
    return {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": DEVICE_CLASS}}]}}


def claim_template(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": namespace},
        "spec": {"spec": _request_spec()},
    }


def claim(name: str, namespace: str, allocated_on: tuple[str, int] | None = None) -> dict[str, Any]:
    """resourceclaim.yaml; ``allocated_on`` (node, device index) gives it the allocation upstream's
    scheduler would have written."""
    obj: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": _request_spec(),
    }
    if allocated_on is not None:
        node, device = allocated_on
        obj["metadata"]["finalizers"] = [CLAIM_FINALIZER]
        obj["status"] = {
            "allocation": {
                "devices": {
                    "results": [{"request": "req-0", "driver": DRIVER, "pool": node, "device": f"instance-{device}"}]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            }
        }
    return obj


def dra_pod(
    name: str, namespace: str, *, template: bool, claim_name: str = "", node: str | None = None
) -> dict[str, Any]:
    """pod-with-claim-template.yaml or pod-with-claim-ref.yaml; ``node`` makes it a bound, running pod."""
    source = {"resourceClaimTemplateName": TEMPLATE} if template else {"resourceClaimName": claim_name}
    container = {"image": IMAGE, "name": "pause", "resources": {"claims": [{"name": "resource"}]}}
    spec: dict[str, Any] = {"containers": [container], "resourceClaims": [{"name": "resource", **source}]}
    status: dict[str, Any] = {"phase": "Pending"}
    if node is not None:
        spec["nodeName"] = node
        status = {"phase": "Running"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": status,
    }


def dra_workload_objects(workload: str, nodes: int, existing: int, measured: int) -> Iterator[dict[str, Any]]:
    """Nodes with their slices, the class, the ``init`` load (bound pods and allocated claims), then the
    measured pods with their template or claims."""
    w = DRA_WORKLOADS[workload]
    claims_existing = -(-existing // w.pods_per_claim)
    if claims_existing > nodes * w.claims_per_node:
        raise ValueError(
            f"{workload}: {existing} existing pods need {claims_existing} devices, "
            f"more than {nodes} nodes x {w.claims_per_node} have"
        )
    for i in range(nodes):
        node = dra_node(i)
        yield node
        yield driver_slice(node["metadata"]["name"], w.claims_per_node)
    yield device_class()
    for j in range(claims_existing):  # claim j: node j % nodes, the (j // nodes)-th device there
        node_name = f"{NODE_PREFIX}{j % nodes}"
        yield claim(f"init-claim-{j}", INIT_NS, (node_name, j // nodes))
    for i in range(existing):
        j = i // w.pods_per_claim
        yield dra_pod(
            f"init-{i}", INIT_NS, template=False, claim_name=f"init-claim-{j}", node=f"{NODE_PREFIX}{j % nodes}"
        )
    if w.template:
        yield claim_template(TEST_NS)
    else:
        for j in range(-(-measured // w.pods_per_claim)):
            yield claim(f"test-claim-{j}", TEST_NS)
    for i in range(measured):
        yield dra_pod(f"test-dra-{i}", TEST_NS, template=w.template, claim_name=f"test-claim-{i // w.pods_per_claim}")
