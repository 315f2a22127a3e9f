"""GPU nodes for generated scenarios, their devices published as a DRA driver publishes them.

Each GPU node gets one ResourceSlice (``resource.k8s.io/v1``) from the driver, its pool named after the
node, as a kubelet plugin publishes node-local devices: ``gpu-0`` … ``gpu-N`` with the attributes
``model`` (string) and ``index`` (int) and the capacity ``memory``. DeviceClasses select them: ``gpu``
every device of the driver, ``gpu-<model>`` the devices of one model (a CEL selector on ``model``). Pods
ask for devices through a ResourceClaimTemplate per (count, model), so that each pod gets its own claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.quantity import parse_quantity

API_VERSION = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"
#: The class every device of the driver belongs to.
ANY_GPU_CLASS = "gpu"
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
#: The kinds a scenario folder keeps in devices.yaml.
DEVICE_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim")
_MODEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?")
_DRIVER = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+")


def check_model(model: str, where: str) -> str:
    """A model becomes part of a DeviceClass name (``gpu-<model>``): lower-case letters, digits, dashes."""
    if not _MODEL.fullmatch(model):
        raise ValueError(f"{where}: model {model!r}: expected lower-case letters, digits and '-' (e.g. a100)")
    return model


def check_driver(driver: str) -> str:
    """A driver name is a DNS subdomain with at least one dot (``gpu.example.com``), as the API requires."""
    if len(driver) > 63 or not _DRIVER.fullmatch(driver):
        raise ValueError(f"driver {driver!r}: expected a lower-case DNS subdomain such as gpu.example.com")
    return driver


@dataclass(frozen=True)
class GpuNodes:
    """``count`` nodes with ``gpus`` devices of ``model`` each, every device with ``gpu_memory``."""

    count: int
    model: str = "a100"
    gpus: int = 8
    gpu_memory: str = "80Gi"
    cpu: str = "64"
    memory: str = "512Gi"
    pods: int = 110

    @classmethod
    def parse(cls, text: str) -> GpuNodes:
        """``COUNT[:model=a100,gpus=8,gpu-memory=80Gi,cpu=64,memory=512Gi,pods=110]``."""
        count_text, _, rest = text.partition(":")
        keys = ("model", "gpus", "gpu-memory", "cpu", "memory", "pods")
        values: dict[str, str] = {}
        for part in filter(None, rest.split(",")):
            key, sep, value = part.partition("=")
            if not sep or key not in keys:
                raise ValueError(
                    f"GPU nodes {text!r}: expected COUNT[:{','.join(k + '=…' for k in keys)}], got {part!r}"
                )
            values[key] = value
        try:
            count, gpus, pods = int(count_text), int(values.get("gpus", 8)), int(values.get("pods", 110))
        except ValueError:
            raise ValueError(f"GPU nodes {text!r}: COUNT, gpus and pods must be whole numbers") from None
        if count < 0 or gpus < 1 or pods < 1:
            raise ValueError(f"GPU nodes {text!r}: COUNT must not be negative, gpus and pods must be positive")
        for key in ("gpu-memory", "cpu", "memory"):
            if key in values:
                parse_quantity(values[key])
        return cls(
            count,
            check_model(values.get("model", "a100"), f"GPU nodes {text!r}"),
            gpus,
            values.get("gpu-memory", "80Gi"),
            values.get("cpu", "64"),
            values.get("memory", "512Gi"),
            pods,
        )


def device_classes(models: Iterable[str], driver: str = DRIVER) -> list[dict[str, Any]]:
    """The class of every device of ``driver``, then one class per model, selecting on the attribute."""
    out = [_device_class(ANY_GPU_CLASS, f'device.driver == "{driver}"')]
    for model in sorted(set(models)):
        out.append(
            _device_class(
                model_class(model), f'device.driver == "{driver}" && device.attributes["{driver}"].model == "{model}"'
            )
        )
    return out


def model_class(model: str | None) -> str:
    return ANY_GPU_CLASS if model is None else f"{ANY_GPU_CLASS}-{model}"


def _device_class(name: str, expression: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def resource_slice(node: str, devices: Sequence[tuple[str, str]], driver: str = DRIVER) -> dict[str, Any]:
    """The slice ``driver`` publishes for ``node``: one pool named after the node, ``devices`` as
    (model, memory) in index order."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {"model": {"string": model}, "index": {"int": i}},
                    "capacity": {"memory": {"value": memory}},
                }
                for i, (model, memory) in enumerate(devices)
            ],
        },
    }


def gpu_node_objects(shapes: Sequence[GpuNodes], *, driver: str = DRIVER, zones: int = 3) -> Iterator[dict[str, Any]]:
    """Nodes ``gpu-<model>-<i>`` (numbered per model), each followed by its ResourceSlice."""
    numbers: dict[str, int] = {}
    index = 0
    for shape in shapes:
        for _ in range(shape.count):
            number = numbers.get(shape.model, 0)
            numbers[shape.model] = number + 1
            name = f"gpu-{shape.model}-{number}"
            resources = {"cpu": shape.cpu, "memory": shape.memory, "pods": str(shape.pods)}
            yield {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {HOSTNAME_LABEL: name, ZONE_LABEL: f"zone-{index % zones}"}},
                "status": {
                    "capacity": dict(resources),
                    "allocatable": dict(resources),
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
            yield resource_slice(name, [(shape.model, shape.gpu_memory)] * shape.gpus, driver)
            index += 1


def template_name(gpus: int, model: str | None) -> str:
    """``gpus-2`` for any model, ``a100-gpus-2`` for one."""
    return f"gpus-{gpus}" if model is None else f"{model}-gpus-{gpus}"


def claim_template(gpus: int, model: str | None, namespace: str = "default") -> dict[str, Any]:
    """A template whose claims ask for exactly ``gpus`` devices of ``model`` (any model when None)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": template_name(gpus, model), "namespace": namespace},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": "gpu", "exactly": {"deviceClassName": model_class(model), "count": gpus}}]
                }
            }
        },
    }


def use_template(pod: dict[str, Any], template: str) -> dict[str, Any]:
    """``pod`` with a claim made from ``template`` (entry ``gpu``), used by its first container."""
    spec = pod["spec"]
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    spec["containers"][0].setdefault("resources", {})["claims"] = [{"name": "gpu"}]
    return pod
