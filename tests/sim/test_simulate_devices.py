"""Devices (DRA) through ``kubesched.simulate()`` with manifests: workloads whose pods get claims from
templates, devices freed when pods finish, bad input refused or explained, never a crash."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import kubesched
from kubesched import ManifestError
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.sim.report import pending_pods

DEVICES = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {zone: b}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: a100}}}
  - {name: gpu-1, attributes: {model: {string: h100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric}
spec:
  driver: gpu.example.com
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions: [{key: zone, operator: In, values: [b]}]
  pool: {name: fabric, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: a100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu}
"""

POD_SPEC = """
      containers:
      - name: train
        image: cuda
        resources: {claims: [{name: gpu}]}
      resourceClaims:
      - {name: gpu, resourceClaimTemplateName: one-gpu}
"""

WORKLOADS = f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: ml}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:{POD_SPEC}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: ml}}
spec:
  replicas: 1
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:{POD_SPEC}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: batch, namespace: ml}}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never{POD_SPEC}
"""


def write(tmp_path: Path, text: str, name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_workload_pods_get_a_claim_each_and_the_devices_run_out(tmp_path: Path) -> None:
    result = kubesched.simulate(write(tmp_path, DEVICES + "---" + WORKLOADS), seed=3, tie_break="name")
    placed = {pod: node for pod, node in result.final.items() if node}
    assert len(result.final) == 4 and len(placed) == 3  # three devices: two on n1, one reaching n2
    assert sorted(placed.values()) == ["n1", "n1", "n2"]
    claims = {c["metadata"]["name"]: c for c in _cluster(result).list("ResourceClaim", "ml")[0]}
    assert len(claims) == 4
    for pod in result.final:
        name = pod.split("/")[1]
        (claim,) = [c for c in claims.values() if c["metadata"]["ownerReferences"][0]["name"] == name]
        assert re.fullmatch(re.escape(name) + "-gpu-[bcdfghjklmnpqrstvwxz2456789]{5}", claim["metadata"]["name"])
        reserved = [r["name"] for r in (claim.get("status") or {}).get("reservedFor") or []]
        assert reserved == ([name] if placed.get(pod) else [])
    (waiting,) = set(result.final) - set(placed)
    messages = {a["message"] for a in result.attempts if a["pod"] == waiting}
    assert messages == {
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: "
        "0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    }


def test_devices_come_back_when_pods_finish(tmp_path: Path) -> None:
    pods = "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata: {{name: job-{i}, namespace: ml, annotations: {{kubesched.io/duration: 10m}}}}
spec:
      nodeSelector: {{zone: a}}{POD_SPEC}"""
        for i in range(5)
    )
    result = kubesched.simulate(write(tmp_path, DEVICES + pods), seed=1, tie_break="name")
    assert all(node == "n1" for node in result.final.values())  # two at a time on n1's two devices
    assert _cluster(result).list("ResourceClaim", "ml")[0] == []  # every pod finished: its claim is gone
    assert not result.looping


BAD_OBJECTS = [
    (
        "a selector of the wrong type",
        """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: broken}
spec:
  selectors:
  - cel: {expression: 'device.attributes["gpu.example.com"].model + 1'}
""",
        "document 1 (DeviceClass broken): spec.selectors[0].cel.expression: Invalid value",
    ),
    (
        "a slice naming a device twice",
        """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: twice}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: twice, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-0}]
""",
        'document 1 (ResourceSlice twice): spec.devices[1].name: Duplicate value: "gpu-0"',
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD_OBJECTS, ids=[c[0] for c in BAD_OBJECTS])
def test_objects_the_api_server_refuses_are_named(tmp_path: Path, name: str, text: str, message: str) -> None:
    with pytest.raises(ManifestError) as err:
        kubesched.simulate(write(tmp_path, text))
    assert message in str(err.value)


def _claim_pod(claim: str, template: bool = False) -> str:
    field = "resourceClaimTemplateName" if template else "resourceClaimName"
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: ml}}
spec:
  containers: [{{name: c, image: cuda}}]
  resourceClaims: [{{name: gpu, {field}: {claim}}}]
"""


def _claim(name: str, request: str) -> str:
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: ml}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {request}
"""


BAD_SCENARIOS = [
    (
        "missing class",
        _claim("c", "{deviceClassName: tpu}") + _claim_pod("c"),
        "0/2 nodes are available: request gpu: device class tpu does not exist. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    ),
    (
        "more devices than exist",
        _claim("c", "{deviceClassName: gpu, count: 3}") + _claim_pod("c"),
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling.",
    ),
    (
        "a selector failing on the devices",
        _claim(
            "c",
            '{deviceClassName: gpu, selectors: [{cel: {expression: \'device.attributes["gpu.example.com"]'
            ".memory > 1'}}]}",
        )
        + _claim_pod("c"),
        'running "DynamicResources" filter plugin: claim ml/c: selector #0: CEL runtime error: no such key: memory',
    ),
    (
        "conflicting slices of one pool",
        """---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus-again}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 2}
  devices: [{name: gpu-0}]
"""
        + _claim("c", "{deviceClassName: gpu}")
        + _claim_pod("c"),
        'running "DynamicResources" filter plugin: pool n1 is invalid: duplicate device name gpu-0',
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD_SCENARIOS, ids=[c[0] for c in BAD_SCENARIOS])
def test_bad_device_requests_end_in_the_plugins_status(tmp_path: Path, name: str, text: str, message: str) -> None:
    result = kubesched.simulate(write(tmp_path, DEVICES + text), seed=1, tie_break="name")
    assert result.final == {"ml/p": None}
    assert {a["message"] for a in result.attempts} == {message}


def test_a_pod_whose_claim_never_appears_waits_and_its_template_is_reported(tmp_path: Path) -> None:
    result = kubesched.simulate(write(tmp_path, DEVICES + _claim_pod("nowhere", template=True)), seed=1)
    assert result.final == {"ml/p": None} and list(result.attempts) == []
    # As kube-controller-manager does, an event on the pod says so; the pod's pending reason too (it is
    # no warning: the template may yet come, and the reference's runs do not warn of it).
    why = (
        'PodResourceClaim gpu: resource claim template "nowhere": resourceclaimtemplate.resource.k8s.io '
        '"nowhere" not found'
    )
    assert result.warnings == [] and result.claims_not_made == {"ml/p": why}
    assert [p.reason for p in pending_pods(result)] == [f"waiting for its ResourceClaims: {why}"]
    events = _cluster(result).list("Event")[0]
    assert [e["message"] for e in events if e["reason"] == "FailedResourceClaimCreation"] == [why]


def _cluster(result: kubesched.SimulationResult) -> EmbeddedCluster:
    assert result.cluster is not None
    return result.cluster


UID = "6f1c2a9e-0000-4000-8000-000000000001"
STATE = f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: running, namespace: ml, uid: {UID}}}
spec:
  nodeName: n1
  containers: [{{name: train, image: cuda, resources: {{claims: [{{name: gpu}}]}}}}]
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: two-gpus}}]
status:
  resourceClaimStatuses: [{{name: gpu, resourceClaimName: running-gpu-x7k2p}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: running-gpu-x7k2p
  namespace: ml
  annotations: {{resource.kubernetes.io/pod-claim-name: gpu}}
  ownerReferences: [{{apiVersion: v1, kind: Pod, name: running, uid: {UID}, controller: true,
                     blockOwnerDeletion: true}}]
spec:
  devices:
    requests: [{{name: gpu, exactly: {{deviceClassName: gpu, count: 2}}}}]
status:
  allocation:
    devices:
      results:
      - {{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}}
      - {{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-1}}
  reservedFor: [{{resource: pods, name: running, uid: {UID}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: two-gpus, namespace: ml}}
spec:
  spec:
    devices:
      requests: [{{name: gpu, exactly: {{deviceClassName: gpu, count: 2}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: newcomer, namespace: ml}}
spec:
  containers: [{{name: train, image: cuda, resources: {{claims: [{{name: gpu}}]}}}}]
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
"""


def test_a_loaded_claim_stays_allocated_to_the_pod_its_uid_names(tmp_path: Path) -> None:
    """A snapshot's template claims name their pod by uid (owner and reservedFor): loading keeps the uids,
    so the devices stay taken (were the pod given a new uid, its claim would look orphaned and go)."""
    result = kubesched.simulate(write(tmp_path, DEVICES + STATE), seed=0)
    held = _cluster(result).get("ResourceClaim", "ml", "running-gpu-x7k2p")
    assert [r["device"] for r in held["status"]["allocation"]["devices"]["results"]] == ["gpu-0", "gpu-1"]
    assert [r["uid"] for r in held["status"]["reservedFor"]] == [UID]
    assert result.final["ml/newcomer"] == "n2"  # n1's two devices are held: only the fabric's is free
