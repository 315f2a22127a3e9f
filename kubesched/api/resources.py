"""Resource lists and the scheduler's view of what a pod requests.

The scheduler works on integers: cpu in millicores, everything else in whole units (bytes, devices,
pods). Sums are taken on exact quantities first and converted once, as Kubernetes does, so that
``2 x 0.5m`` adds up to ``1m`` rather than ``2m``.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.quantity import QuantityError, parse_quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

#: Defaults the scoring plugins assume for a container that names no cpu / memory request.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NATIVE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"

ResourceList = dict[str, Fraction]
"""Exact quantities by resource name, as they appear in a manifest."""


def is_extended_resource_name(name: str) -> bool:
    """A vendor resource such as ``nvidia.com/gpu`` (outside the kubernetes.io namespace)."""
    if "/" not in name or _NATIVE_PREFIX in name or name.startswith(_REQUESTS_PREFIX):
        return False
    prefix, _, short = name.partition("/")
    return bool(prefix) and bool(short) and len(short) <= 63 and len(prefix) <= 253


def is_scalar_resource_name(name: str) -> bool:
    """Resources tracked beside cpu/memory/ephemeral-storage/pods (extended, hugepages, prefixed native)."""
    return (
        is_extended_resource_name(name)
        or name.startswith(_HUGEPAGES_PREFIX)
        or _NATIVE_PREFIX in name
        or name.startswith(_ATTACHABLE_VOLUMES_PREFIX)
    )


def to_scheduler_units(name: str, quantity: Fraction) -> int:
    """The integer the scheduler keeps for a quantity: milli-units for cpu, units otherwise (rounded up)."""
    numerator = quantity.numerator * 1000 if name == CPU else quantity.numerator
    return -((-numerator) // quantity.denominator)  # integer ceiling, without a Fraction in between


def parse_resource_list(raw: Any, path: str) -> ResourceList:
    """Parse ``{name: quantity}``; an invalid quantity names its field."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ObjectError(path, f"expected a map of resource quantities, got {type(raw).__name__}")
    parsed: ResourceList = {}
    for name, value in raw.items():
        try:
            parsed[str(name)] = parse_quantity(value)
        except QuantityError as err:
            raise ObjectError(f"{path}.{name}", err.reason) from None
    return parsed


def scheduler_resources(resources: Mapping[str, Fraction]) -> dict[str, int]:
    """Keep only what the scheduler accounts for, converted to scheduler units."""
    out: dict[str, int] = {}
    for name, quantity in resources.items():
        if name in (CPU, MEMORY, PODS, EPHEMERAL_STORAGE) or is_scalar_resource_name(name):
            out[name] = to_scheduler_units(name, quantity)
    return out


def _add(into: ResourceList, extra: Mapping[str, Fraction]) -> None:
    for name, quantity in extra.items():
        # Fraction arithmetic is slow: a pod's first container (usually its only one) is taken as is.
        into[name] = into[name] + quantity if name in into else quantity


def _max_into(into: ResourceList, other: Mapping[str, Fraction]) -> None:
    for name, quantity in other.items():
        if name not in into or quantity > into[name]:
            into[name] = quantity


def _non_zero(requests: Mapping[str, Fraction]) -> tuple[int, int]:
    """cpu (milli) and memory a container counts for in scoring: defaults stand in for missing requests."""
    cpu = to_scheduler_units(CPU, requests[CPU]) if CPU in requests else DEFAULT_MILLI_CPU_REQUEST
    mem = to_scheduler_units(MEMORY, requests[MEMORY]) if MEMORY in requests else DEFAULT_MEMORY_REQUEST
    return cpu, mem


def pod_requests(
    containers: list[ResourceList],
    init_containers: list[tuple[ResourceList, bool]],
    overhead: ResourceList | None,
    *,
    non_missing_defaults: bool = False,
) -> ResourceList:
    """Effective pod request: app containers and sidecars add up, plain init containers only set a floor.

    ``init_containers`` pairs each init container's requests with whether it is a sidecar
    (``restartPolicy: Always``): a sidecar keeps running, so it adds to the pod's total and to every
    init container started after it. ``non_missing_defaults`` fills missing cpu / memory requests with
    the scoring defaults, container by container (explicit zeros stay zero).
    """

    def effective(reqs: ResourceList) -> ResourceList:
        if not non_missing_defaults:
            return reqs
        filled = dict(reqs)
        filled.setdefault(CPU, Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000))
        filled.setdefault(MEMORY, Fraction(DEFAULT_MEMORY_REQUEST))
        return filled

    total: ResourceList = {}
    for reqs in containers:
        _add(total, effective(reqs))
    sidecars: ResourceList = {}
    init_floor: ResourceList = {}
    for reqs, is_sidecar in init_containers:
        reqs = effective(reqs)
        if is_sidecar:
            _add(total, reqs)
            _add(sidecars, reqs)
            running = dict(sidecars)
        else:
            running = dict(reqs)
            _add(running, sidecars)
        _max_into(init_floor, running)
    _max_into(total, init_floor)
    if overhead:
        _add(total, overhead)
    return total


def non_zero_requests(
    containers: list[ResourceList],
    init_containers: list[tuple[ResourceList, bool]],
    overhead: ResourceList | None,
) -> tuple[int, int]:
    """cpu (milli) and memory an existing pod counts for on its node when scoring.

    Mirrors how the node accounting treats containers: app containers add up with defaults for
    missing requests; each init container (a sidecar counted with the sidecars before it) sets a
    floor; overhead is added on top.
    """
    cpu = mem = 0
    for reqs in containers:
        c, m = _non_zero(reqs)
        cpu += c
        mem += m
    init_cpu = init_mem = 0
    sidecars: ResourceList = {}
    for reqs, is_sidecar in init_containers:
        if is_sidecar:
            _add(sidecars, reqs)
            running = sidecars
        else:
            running = dict(reqs)
            _add(running, sidecars)
        c, m = _non_zero(running)
        init_cpu = max(init_cpu, c)
        init_mem = max(init_mem, m)
    cpu = max(cpu, init_cpu)
    mem = max(mem, init_mem)
    if overhead:
        if CPU in overhead:
            cpu += to_scheduler_units(CPU, overhead[CPU])
        if MEMORY in overhead:
            mem += to_scheduler_units(MEMORY, overhead[MEMORY])
    return cpu, mem
