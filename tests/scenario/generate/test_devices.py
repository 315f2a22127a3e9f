"""GPU nodes published through DRA: their slices, classes and templates, and the generate command's flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.api.dra import DeviceClass, ResourceSlice
from kubesched.api.dra_cel import compile_selector, evaluate
from kubesched.app.cli import main
from kubesched.scenario.generate import NodeShape, PodShape, poisson_objects
from kubesched.scenario.generate.devices import (
    GpuNodes,
    claim_template,
    device_classes,
    gpu_node_objects,
    resource_slice,
)
from kubesched.scenario.manifests import load_manifests
from kubesched.sim.simulate import simulate


def test_gpu_nodes_parse_with_defaults_and_values() -> None:
    assert GpuNodes.parse("4") == GpuNodes(4, "a100", 8, "80Gi", "64", "512Gi", 110)
    assert GpuNodes.parse("2:model=t4,gpus=2,gpu-memory=16Gi,cpu=16,memory=64Gi,pods=50") == GpuNodes(
        2, "t4", 2, "16Gi", "16", "64Gi", 50
    )


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("x", "whole numbers"),
        ("2:gpus=0", "positive"),
        ("2:colour=red", "expected COUNT"),
        ("2:model=A100", "lower-case"),
        ("2:gpu-memory=lots", "lots"),
        ("-1", "negative"),
    ],
)
def test_bad_gpu_nodes_are_refused(text: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        GpuNodes.parse(text)


def test_each_gpu_node_is_followed_by_the_slice_its_driver_publishes() -> None:
    objects = list(
        gpu_node_objects(
            [GpuNodes(2, "a100", gpus=3), GpuNodes(1, "t4", gpus=1, gpu_memory="16Gi")], driver="gpus.example.org"
        )
    )
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Node", "gpu-a100-0"),
        ("ResourceSlice", "gpu-a100-0-gpus.example.org"),
        ("Node", "gpu-a100-1"),
        ("ResourceSlice", "gpu-a100-1-gpus.example.org"),
        ("Node", "gpu-t4-0"),
        ("ResourceSlice", "gpu-t4-0-gpus.example.org"),
    ]
    spec = objects[1]["spec"]
    assert spec["driver"] == "gpus.example.org" and spec["nodeName"] == "gpu-a100-0"
    assert spec["pool"] == {"name": "gpu-a100-0", "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in spec["devices"]] == ["gpu-0", "gpu-1", "gpu-2"]
    assert spec["devices"][2] == {
        "name": "gpu-2",
        "attributes": {"model": {"string": "a100"}, "index": {"int": 2}},
        "capacity": {"memory": {"value": "80Gi"}},
    }
    assert objects[5]["spec"]["devices"][0]["capacity"] == {"memory": {"value": "16Gi"}}


def test_model_classes_select_their_model_and_the_gpu_class_every_device() -> None:
    classes = {c["metadata"]["name"]: DeviceClass.from_dict(c) for c in device_classes(["t4", "a100", "t4"])}
    assert sorted(classes) == ["gpu", "gpu-a100", "gpu-t4"]
    devices = ResourceSlice.from_dict(resource_slice("n", [("a100", "80Gi"), ("t4", "16Gi")])).devices

    def selected(name: str) -> list[str]:
        (expression,) = classes[name].selectors
        selector = compile_selector(expression)
        return [d.name for d in devices if evaluate(selector, d, "gpu.example.com")]

    assert selected("gpu") == ["gpu-0", "gpu-1"]
    assert selected("gpu-a100") == ["gpu-0"]
    assert selected("gpu-t4") == ["gpu-1"]


def test_claim_templates_ask_for_a_count_of_a_model() -> None:
    template = claim_template(2, "a100", "batch")
    assert template["metadata"] == {"name": "a100-gpus-2", "namespace": "batch"}
    assert template["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu-a100", "count": 2}}
    ]
    assert claim_template(1, None)["metadata"]["name"] == "gpus-1"


def test_pod_shapes_with_gpus_parse_and_are_checked() -> None:
    assert PodShape.parse("cpu=1,memory=1Gi,gpus=2,gpu-model=t4") == PodShape("1", "1Gi", 1.0, 2, "t4")
    for text in ("gpus=-1", "gpu-model=t4", "gpus=two"):
        with pytest.raises(ValueError, match="gpus"):
            PodShape.parse(text)


def test_gpu_pods_claim_through_templates_and_the_scenario_loads() -> None:
    shapes = [PodShape(weight=1), PodShape(cpu="1", gpus=1, gpu_model="a100"), PodShape(cpu="1", gpus=2)]
    objects = list(
        poisson_objects(
            [NodeShape(2)],
            60,
            rate=1.0,
            shapes=shapes,
            seed=4,
            gpu_nodes=[GpuNodes(2, "a100", gpus=4), GpuNodes(1, "t4", gpus=2)],
        )
    )
    kinds = [o["kind"] for o in objects]
    assert kinds.count("Node") == 5 and kinds.count("ResourceSlice") == 3 and kinds.count("DeviceClass") == 3
    templates = {o["metadata"]["name"] for o in objects if o["kind"] == "ResourceClaimTemplate"}
    assert templates == {"a100-gpus-1", "gpus-2"}
    pods = [o for o in objects if o["kind"] == "Pod"]
    claimed = {
        p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] for p in pods if "resourceClaims" in p["spec"]
    }
    assert claimed == templates
    for pod in pods:
        if "resourceClaims" in pod["spec"]:
            assert pod["spec"]["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    assert kinds.index("ResourceClaimTemplate") < kinds.index("Pod")
    result = simulate(objects)  # every object passes the API server's validation
    assert len(result.final) == 60


@pytest.mark.parametrize(
    ("shape", "complaint"),
    [(PodShape(gpus=1), "no GPU nodes"), (PodShape(gpus=1, gpu_model="h100"), "no GPU nodes of that model")],
)
def test_gpu_pods_need_gpu_nodes_of_their_model(shape: PodShape, complaint: str) -> None:
    gpu_nodes = [] if shape.gpu_model is None else [GpuNodes(1, "a100")]
    with pytest.raises(ValueError, match=complaint):
        list(poisson_objects([NodeShape(1)], 1, rate=1.0, shapes=[shape], gpu_nodes=gpu_nodes))


def test_generate_poisson_writes_devices_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "gpus"
    (out).mkdir()
    args = [
        "generate",
        "poisson",
        "--gpu-nodes",
        "2:model=a100,gpus=2",
        "--gpu-nodes",
        "1:model=t4,gpus=1",
        "--gpu-driver",
        "gpus.example.org",
        "--pod-shape",
        "cpu=1,memory=1Gi,gpus=1,gpu-model=t4",
        "--pods",
        "5",
        "--rate",
        "1",
        "-o",
        str(out),
    ]
    assert main(args) == 0
    assert capsys.readouterr().out.strip() == (
        f"Wrote 3 objects in nodes.yaml, 7 objects in devices.yaml, 5 objects in pods.yaml under {out}"
    )
    devices = [m.obj for m in load_manifests([out / "devices.yaml"])]
    assert [d["kind"] for d in devices] == ["ResourceSlice"] * 3 + ["DeviceClass"] * 3 + ["ResourceClaimTemplate"]
    assert {d["spec"]["driver"] for d in devices if d["kind"] == "ResourceSlice"} == {"gpus.example.org"}
    assert json.loads((out / "nodes.yaml").read_text().split("---")[0])["metadata"]["name"] == "gpu-a100-0"
    # Written again without GPUs, the folder loses its devices.
    assert main(["generate", "poisson", "--pods", "1", "--rate", "1", "-o", str(out)]) == 0
    assert not (out / "devices.yaml").exists()


@pytest.mark.parametrize(
    ("flags", "complaint"),
    [
        (["--gpu-nodes", "2:gpus=x"], "whole numbers"),
        (["--gpu-driver", "GPU"], "DNS subdomain"),
        (["--pod-shape", "gpus=1"], "no GPU nodes"),
    ],
)
def test_generate_refuses_bad_gpu_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], complaint: str
) -> None:
    assert main(["generate", "poisson", "--pods", "1", "--rate", "1", *flags, "-o", str(tmp_path / "x")]) == 2
    assert complaint in capsys.readouterr().err
