"""Poisson arrivals over a cluster of given node shapes, each pod living for a drawn lifetime.

Pods arrive as a Poisson process (exponential gaps) at ``rate`` per second, or at the rate that keeps
``utilisation`` of the cluster's cpu requested at steady state (Little's law: pods running = rate x mean
lifetime). Each pod carries ``kubesched.io/arrival`` and ``kubesched.io/duration``; objects are yielded
lazily, so a million pods never sit in memory together. GPU nodes (:mod:`kubesched.scenario.generate.devices`)
publish their GPUs through DRA; a pod shape asking for GPUs gets a claim made from a ResourceClaimTemplate.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.quantity import milli_value
from kubesched.scenario.generate.devices import (
    DRIVER,
    GpuNodes,
    check_model,
    claim_template,
    device_classes,
    gpu_node_objects,
    template_name,
    use_template,
)
from kubesched.scenario.generate.lifetimes import Distribution, parse_distribution
from kubesched.scenario.timing import ARRIVAL_ANNOTATION, DURATION_ANNOTATION

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
IMAGE = "registry.k8s.io/pause:3.9"
_BLOCK = 4096


@dataclass(frozen=True)
class NodeShape:
    """``count`` nodes with this allocatable (and extra labels)."""

    count: int
    cpu: str = "4"
    memory: str = "32Gi"
    pods: int = 110
    labels: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> NodeShape:
        """``COUNT[:cpu=4,memory=32Gi,pods=110]``, e.g. ``5000:cpu=8,memory=64Gi``."""
        count_text, _, rest = text.partition(":")
        try:
            count = int(count_text)
        except ValueError:
            raise ValueError(f"node shape {text!r}: expected COUNT[:cpu=…,memory=…,pods=…]") from None
        values = _key_values(rest, text, ("cpu", "memory", "pods"))
        return cls(count, values.get("cpu", "4"), values.get("memory", "32Gi"), int(values.get("pods", 110)))


@dataclass(frozen=True)
class PodShape:
    """A pod's requests, how often it is drawn relative to other shapes, and the GPUs it claims (of
    ``gpu_model``, or of any model when None)."""

    cpu: str = "100m"
    memory: str = "500Mi"
    weight: float = 1.0
    gpus: int = 0
    gpu_model: str | None = None

    @classmethod
    def parse(cls, text: str) -> PodShape:
        """``cpu=500m,memory=1Gi[,weight=2][,gpus=1[,gpu-model=a100]]``."""
        values = _key_values(text, text, ("cpu", "memory", "weight", "gpus", "gpu-model"))
        try:
            gpus = int(values.get("gpus", 0))
        except ValueError:
            raise ValueError(f"pod shape {text!r}: gpus must be a whole number") from None
        model = values.get("gpu-model")
        if gpus < 0 or (model is not None and gpus == 0):
            raise ValueError(f"pod shape {text!r}: gpus must not be negative, and gpu-model needs gpus")
        return cls(
            values.get("cpu", "100m"),
            values.get("memory", "500Mi"),
            float(values.get("weight", 1)),
            gpus,
            None if model is None else check_model(model, f"pod shape {text!r}"),
        )


def _key_values(text: str, whole: str, allowed: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep or key not in allowed:
            raise ValueError(f"{whole!r}: expected {', '.join(k + '=…' for k in allowed)}, got {part!r}")
        out[key] = value
    return out


def node_objects(shapes: Sequence[NodeShape], zones: int = 3) -> Iterator[dict[str, Any]]:
    """Nodes named node-0, node-1, … with hostname and zone labels."""
    index = 0
    for shape in shapes:
        for _ in range(shape.count):
            name = f"node-{index}"
            resources = {"cpu": shape.cpu, "memory": shape.memory, "pods": str(shape.pods)}
            yield {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {HOSTNAME_LABEL: name, ZONE_LABEL: f"zone-{index % zones}", **shape.labels},
                },
                "status": {
                    "capacity": dict(resources),
                    "allocatable": dict(resources),
                    "conditions": [{"type": "Ready", "status": "True"}],
                },
            }
            index += 1


def rate_for(
    utilisation: float, nodes: Sequence[NodeShape | GpuNodes], shapes: Sequence[PodShape], lifetime: Distribution
) -> float:
    """Arrivals per second that keep ``utilisation`` of the cpu requested at steady state."""
    total_cpu = sum(s.count * milli_value(s.cpu) for s in nodes)
    weights = np.array([s.weight for s in shapes], dtype=float)
    mean_cpu = float(np.dot(weights / weights.sum(), [milli_value(s.cpu) for s in shapes]))
    if mean_cpu <= 0 or lifetime.mean <= 0:
        raise ValueError("utilisation needs pods that request cpu and a positive mean lifetime")
    return utilisation * total_cpu / (mean_cpu * lifetime.mean)


def format_seconds(seconds: float) -> str:
    """Seconds as a Go duration with millisecond precision (``12.345s``)."""
    return f"{seconds:.3f}s"


def poisson_pods(
    count: int,
    rate: float,
    lifetime: Distribution | str,
    shapes: Sequence[PodShape] = (PodShape(),),
    *,
    seed: int = 0,
    namespace: str = "default",
) -> Iterator[dict[str, Any]]:
    """``count`` pods arriving at ``rate`` per second, lazily, in arrival order."""
    if rate <= 0:
        raise ValueError(f"rate must be positive, got {rate}")
    dist = parse_distribution(lifetime) if isinstance(lifetime, str) else lifetime
    rng = np.random.default_rng(seed)
    weights = np.array([s.weight for s in shapes], dtype=float)
    weights /= weights.sum()
    now = 0.0
    width = len(str(max(count - 1, 0)))
    for start in range(0, count, _BLOCK):
        n = min(_BLOCK, count - start)
        arrivals = now + np.cumsum(rng.exponential(1.0 / rate, n))
        now = float(arrivals[-1])
        durations = np.asarray(dist.sample(rng, n), dtype=float)
        picks = rng.choice(len(shapes), size=n, p=weights)
        # As Python numbers, read once per block: indexing the arrays pod by pod makes a NumPy scalar each.
        for i, (arrival, duration, pick) in enumerate(
            zip(arrivals.tolist(), durations.tolist(), picks.tolist(), strict=True)
        ):
            shape = shapes[pick]
            requests = {"cpu": shape.cpu, "memory": shape.memory}
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"pod-{start + i:0{width}d}",
                    "namespace": namespace,
                    "annotations": {
                        ARRIVAL_ANNOTATION: format_seconds(arrival),
                        DURATION_ANNOTATION: format_seconds(duration),
                    },
                },
                "spec": {
                    "containers": [
                        {"name": "app", "image": IMAGE, "resources": {"requests": requests, "limits": dict(requests)}}
                    ]
                },
            }
            yield use_template(pod, template_name(shape.gpus, shape.gpu_model)) if shape.gpus else pod


def poisson_objects(
    nodes: Sequence[NodeShape],
    pods: int,
    *,
    rate: float | None = None,
    utilisation: float | None = None,
    lifetime: str = "exp:10m",
    shapes: Sequence[PodShape] = (PodShape(),),
    seed: int = 0,
    gpu_nodes: Sequence[GpuNodes] = (),
    driver: str = DRIVER,
) -> Iterator[dict[str, Any]]:
    """The whole scenario: nodes first (GPU nodes each with its ResourceSlice), the DeviceClasses and
    ResourceClaimTemplates GPU pods use, then the pods (give ``rate`` or ``utilisation``)."""
    dist = parse_distribution(lifetime)
    if (rate is None) == (utilisation is None):
        raise ValueError("give either a rate or a target utilisation")
    _check_gpu_shapes(shapes, gpu_nodes)
    if rate is None:
        assert utilisation is not None
        rate = rate_for(utilisation, [*nodes, *gpu_nodes], shapes, dist)
    yield from node_objects(nodes)
    yield from gpu_node_objects(gpu_nodes, driver=driver)
    if gpu_nodes:
        yield from device_classes((g.model for g in gpu_nodes), driver)
    for gpus, model in sorted({(s.gpus, s.gpu_model) for s in shapes if s.gpus}, key=str):
        yield claim_template(gpus, model)
    yield from poisson_pods(pods, rate, dist, shapes, seed=seed)


def _check_gpu_shapes(shapes: Sequence[PodShape], gpu_nodes: Sequence[GpuNodes]) -> None:
    """Pods asking for GPUs need GPU nodes, of their model when they name one."""
    models = {g.model for g in gpu_nodes if g.count}
    for shape in shapes:
        if shape.gpus and not models:
            raise ValueError(f"pod shape with gpus={shape.gpus}: no GPU nodes (add --gpu-nodes)")
        if shape.gpu_model is not None and shape.gpu_model not in models:
            raise ValueError(
                f"pod shape with gpu-model={shape.gpu_model}: no GPU nodes of that model "
                f"(models: {', '.join(sorted(models))})"
            )
