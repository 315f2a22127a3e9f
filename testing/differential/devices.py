"""DRA in the seeded scenarios (``generate(seed, dra=True)``, as the benchmark and the tests ask):
devices, classes, claims.

In about half the seeds, some nodes get GPUs that the driver ``gpu.example.com`` publishes as a DRA
driver does (one ResourceSlice per node, its pool named after the node; devices with the attributes
``model`` and ``numa`` and the capacity ``memory``, and no attribute that tells two devices of one node
apart, so that equivalent devices exist); the seed's DeviceClasses select all of them or one model (CEL);
a few claims are allocated already (on a device of some node, reserved for nobody), and some pending
pods claim devices: a claim of their own (a count of one model, every device of a model, a prioritized
list, two devices on one NUMA node, a class that does not exist), a claim an earlier pod uses, a claim
allocated elsewhere (DynamicResources' PostFilter deallocates it), or a ResourceClaimTemplate.

Everything comes from an RNG of its own, so a seed's other objects are the same with and without DRA.
Cluster-scoped names carry the seed (``s7-gpu-a100``, ``s7-n3-gpu``) like the nodes'.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

API_VERSION = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"
MODELS = {"a100": "80Gi", "t4": "16Gi"}
FINALIZER = "resource.kubernetes.io/delete-protection"
#: Share of the seeds with devices.
DRA_SHARE = 0.5


@dataclass
class _Devices:
    seed: int
    namespace: str
    rng: random.Random
    #: node -> [(device, model, numa)]
    devices: dict[str, list[tuple[str, str, int]]] = field(default_factory=dict)
    objects: list[dict[str, Any]] = field(default_factory=list)
    #: Claims made so far for pending pods (a later pod may share one), and the allocated ones.
    own_claims: list[str] = field(default_factory=list)
    allocated: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)

    def name(self, suffix: str) -> str:
        return f"s{self.seed}-{suffix}"

    def class_name(self, model: str | None) -> str:
        return self.name("gpu" if model is None else f"gpu-{model}")


def devices_for(seed: int, namespace: str, nodes: list[str], pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The seed's DRA objects (empty in seeds without devices); some ``pending`` pods get claims."""
    rng = random.Random(f"dra-{seed}")
    if rng.random() >= DRA_SHARE:
        return []
    ctx = _Devices(seed, namespace, rng)
    _slices(ctx, nodes)
    _classes(ctx)
    _allocated_claims(ctx)
    _templates(ctx)
    for pod in pending:
        if rng.random() < 0.45:
            _claim_for(ctx, pod)
    return ctx.objects


def _slices(ctx: _Devices, nodes: list[str]) -> None:
    for node in nodes:
        if ctx.rng.random() < 0.4:
            continue
        model = ctx.rng.choice(sorted(MODELS))
        mixed = ctx.rng.random() < 0.2
        devices = []
        for i in range(ctx.rng.randint(1, 4)):
            m = ctx.rng.choice(sorted(MODELS)) if mixed else model
            devices.append((f"gpu-{i}", m, i // 2))
        ctx.devices[node] = devices
        ctx.objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": "ResourceSlice",
                "metadata": {"name": f"{node}-gpu"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": name,
                            "attributes": {"model": {"string": m}, "numa": {"int": numa}},
                            "capacity": {"memory": {"value": MODELS[m]}},
                        }
                        for name, m, numa in devices
                    ],
                },
            }
        )


def _classes(ctx: _Devices) -> None:
    selectors: dict[str | None, str] = {None: f'device.driver == "{DRIVER}"'}
    selectors.update(
        {m: f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "{m}"' for m in sorted(MODELS)}
    )
    for model, expression in selectors.items():
        ctx.objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": "DeviceClass",
                "metadata": {"name": ctx.class_name(model)},
                "spec": {"selectors": [{"cel": {"expression": expression}}]},
            }
        )


def _exactly(ctx: _Devices, model: str | None, **extra: Any) -> dict[str, Any]:
    return {"deviceClassName": ctx.class_name(model), **extra}


def _claim(
    ctx: _Devices, name: str, requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ctx.namespace},
        "spec": {"devices": devices},
    }


def _allocated_claims(ctx: _Devices) -> None:
    """Claims allocated on a device of some node, reserved for nobody (as a scheduler left them)."""
    taken: set[tuple[str, str]] = set()
    for k in range(ctx.rng.choice((0, 0, 1, 2))):
        free = [(node, d) for node, devices in ctx.devices.items() for d, _, _ in devices if (node, d) not in taken]
        if not free:
            return
        node, device = ctx.rng.choice(free)
        taken.add((node, device))
        claim = _claim(ctx, f"held-{k}", [{"name": "gpu", "exactly": _exactly(ctx, None)}])
        claim["metadata"]["finalizers"] = [FINALIZER]
        claim["status"] = {
            "allocation": {
                "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node, "device": device}]},
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            }
        }
        ctx.objects.append(claim)
        ctx.allocated.append(claim["metadata"]["name"])


def _templates(ctx: _Devices) -> None:
    for name, model, count in (("one-gpu", None, 1), ("two-a100", "a100", 2)):
        ctx.objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": ctx.namespace},
                "spec": {
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": _exactly(ctx, model, count=count)}]}}
                },
            }
        )
        ctx.templates.append(name)


# -- what a pending pod claims ----------------------------------------------------------------------
def _r_count(ctx: _Devices) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    model = ctx.rng.choice((None, *sorted(MODELS)))
    return [{"name": "gpu", "exactly": _exactly(ctx, model, count=ctx.rng.choice((1, 1, 2, 3)))}], []


def _r_all(ctx: _Devices) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [{"name": "gpus", "exactly": _exactly(ctx, ctx.rng.choice(sorted(MODELS)), allocationMode="All")}], []


def _r_first_available(ctx: _Devices) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [
        {
            "name": "gpu",
            "firstAvailable": [
                {"name": "big", "deviceClassName": ctx.class_name("a100")},
                {"name": "small", "deviceClassName": ctx.class_name("t4"), "count": 2},
            ],
        }
    ], []


def _r_same_numa(ctx: _Devices) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return (
        [{"name": "gpus", "exactly": _exactly(ctx, None, count=2)}],
        [{"requests": ["gpus"], "matchAttribute": f"{DRIVER}/numa"}],
    )


def _r_same_model(ctx: _Devices) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return (
        [{"name": "a", "exactly": _exactly(ctx, None)}, {"name": "b", "exactly": _exactly(ctx, None)}],
        [{"matchAttribute": f"{DRIVER}/model"}],
    )


def _r_missing_class(ctx: _Devices) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [{"name": "gpu", "exactly": {"deviceClassName": ctx.name("tpu")}}], []


Requests = Callable[[_Devices], tuple[list[dict[str, Any]], list[dict[str, Any]]]]
#: What a claim of the pod's own asks for, with weights.
OWN_CLAIMS: tuple[tuple[int, Requests], ...] = (
    (5, _r_count),
    (2, _r_all),
    (2, _r_first_available),
    (2, _r_same_numa),
    (1, _r_same_model),
    (1, _r_missing_class),
)


def _claim_for(ctx: _Devices, pod: dict[str, Any]) -> None:
    rng = ctx.rng
    choice = rng.random()
    entry: dict[str, Any] = {"name": "gpu"}
    if choice < 0.25 and ctx.templates:
        entry["resourceClaimTemplateName"] = rng.choice(ctx.templates)
    elif choice < 0.4 and ctx.own_claims:
        entry["resourceClaimName"] = rng.choice(ctx.own_claims)
    elif choice < 0.5 and ctx.allocated:
        entry["resourceClaimName"] = ctx.allocated.pop(0)
    else:
        weights = [w for w, _ in OWN_CLAIMS]
        ((_, make),) = rng.choices(OWN_CLAIMS, weights=weights)
        requests, constraints = make(ctx)
        name = f"claim-{len(ctx.own_claims)}"
        ctx.objects.append(_claim(ctx, name, requests, constraints))
        ctx.own_claims.append(name)
        entry["resourceClaimName"] = name
    pod["spec"]["resourceClaims"] = [entry]
    pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": "gpu"}]
