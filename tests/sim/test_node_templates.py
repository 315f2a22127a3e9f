"""Node templates with devices: a Node and its ResourceSlices copied together, and ``plan`` and
``capacity`` counting the devices the copies bring."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.scenario.manifests import ManifestError
from kubesched.sim.capacity import capacity
from kubesched.sim.node_templates import load_node_template, renamed_slice
from kubesched.sim.plan import plan
from kubesched.sim.plan_mix import plan_mix
from kubesched.sim.simulate import SimulationError

CLASSES = """
apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-0}
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
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu, count: 2}
"""

POD_SPEC = """
      containers:
      - name: train
        image: cuda
        resources: {requests: {cpu: "1"}, claims: [{name: gpus}]}
      resourceClaims:
      - {name: gpus, resourceClaimTemplateName: two-gpus}
"""


def gpu_node(name: str, gpus: int) -> str:
    devices = "\n".join(f"  - {{name: gpu-{i}}}" for i in range(gpus))
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{allocatable: {{cpu: "32", memory: 128Gi, pods: "110"}}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {name}-gpus}}
spec:
  driver: gpu.example.com
  nodeName: {name}
  pool: {{name: {name}, generation: 1, resourceSliceCount: 1}}
  devices:
{devices}
"""


def job(pods: int) -> str:
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml}}
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    spec:
      restartPolicy: Never{POD_SPEC}
"""


def write(tmp_path: Path, name: str, *docs: str) -> Path:
    path = tmp_path / name
    path.write_text("\n---\n".join(docs))
    return path


def test_plan_adds_gpu_nodes_for_pods_needing_two_gpus_each(tmp_path: Path) -> None:
    scenario = write(tmp_path, "scenario.yaml", CLASSES, job(5))
    template = write(tmp_path, "gpu-node.yaml", gpu_node("gpu", 4))
    result = plan(scenario, template, max_nodes=8)
    assert result.nodes_to_add == 3  # 5 pods x 2 GPUs = 10 GPUs; 2 nodes bring 8, 3 bring 12
    assert result.pending == [] and result.scheduled == 5
    assert result.tried[2] == 1 and result.tried[3] == 0
    assert result.simulation is not None
    assert set(result.simulation.final.values()) == {"gpu-1", "gpu-2", "gpu-3"}


def test_a_template_without_slices_brings_no_devices(tmp_path: Path) -> None:
    scenario = write(tmp_path, "scenario.yaml", CLASSES, job(2))
    bare = gpu_node("gpu", 4).split("---")[0]
    result = plan(scenario, write(tmp_path, "node.yaml", bare), max_nodes=4)
    assert result.nodes_to_add == 0 and len(result.pending) == 2


def test_plan_mix_copies_slices_too(tmp_path: Path) -> None:
    scenario = write(tmp_path, "scenario.yaml", CLASSES, job(3))
    small = write(tmp_path, "small.yaml", gpu_node("small", 2))
    big = write(tmp_path, "big.yaml", gpu_node("big", 8))
    result = plan_mix(scenario, [small, big], max_nodes=4)
    assert sum(result.mix) == 1 and result.pending == []  # one big node takes all three
    assert result.mix == (0, 1)


def test_copies_rename_slice_pool_and_node(tmp_path: Path) -> None:
    template = load_node_template(write(tmp_path, "gpu-node.yaml", gpu_node("gpu", 2)))
    copies = template.copies(2)
    node, slice_ = copies[1]
    assert node["metadata"]["name"] == "gpu-2"
    assert slice_["metadata"]["name"] == "gpu-2-gpus"
    assert slice_["spec"]["nodeName"] == "gpu-2" and slice_["spec"]["pool"]["name"] == "gpu-2"
    assert template.slices[0].obj["spec"]["nodeName"] == "gpu"  # the template itself unchanged
    other = renamed_slice(
        {"metadata": {"name": "devices"}, "spec": {"nodeName": "gpu", "pool": {"name": "p"}}}, "gpu", "gpu-7"
    )
    assert other["metadata"]["name"] == "devices-gpu-7" and other["spec"]["pool"]["name"] == "p-gpu-7"


def test_a_slice_of_another_node_is_refused(tmp_path: Path) -> None:
    text = gpu_node("gpu", 1).replace("nodeName: gpu", "nodeName: elsewhere")
    with pytest.raises(ManifestError, match=r"gpu-node.yaml: document 2 .*spec.nodeName.*'gpu'"):
        load_node_template(write(tmp_path, "gpu-node.yaml", text))


def test_other_kinds_in_a_template_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SimulationError, match=r"expected exactly one Node .*found Node, ResourceSlice, Job"):
        load_node_template(write(tmp_path, "gpu-node.yaml", gpu_node("gpu", 1), job(1)))


def test_capacity_counts_devices_of_a_gpu_pool(tmp_path: Path) -> None:
    scenario = write(tmp_path, "scenario.yaml", CLASSES, gpu_node("gpu-a", 4), gpu_node("gpu-b", 5))
    pod = write(
        tmp_path,
        "pod.yaml",
        f"""
apiVersion: v1
kind: Pod
metadata: {{name: trainer, namespace: ml}}
spec:{POD_SPEC.replace("      ", "  ", 1).replace(chr(10) + "      ", chr(10) + "  ")}
""",
    )
    result = capacity(scenario, pod)
    assert result.replicas == 4  # 2 on gpu-a (4 GPUs), 2 on gpu-b (5 GPUs: one left over)
    assert result.placements == {"gpu-a": 2, "gpu-b": 2}
    assert "cannot allocate all claims" in result.stop_reason
