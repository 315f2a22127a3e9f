"""Resource lists and the scheduler's view of what a pod requests.

The scheduler works on integers: cpu in millicores, everything else in whole units (bytes, devices,
pods). Sums are taken on exact quantities first and converted once, as Kubernetes does, so that
``2 x 0.5m`` adds up to ``1m`` rather than ``2m``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

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


#: What a container naming no cpu / memory request counts for in scoring, as exact quantities.
NON_MISSING_DEFAULTS: Mapping[str, Fraction] = {
    CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}


def is_supported_pod_level_resource(name: str) -> bool:
    """What ``spec.resources`` may hold at pod level: cpu, memory and hugepages of any size."""
    return name in (CPU, MEMORY) or name.startswith(_HUGEPAGES_PREFIX)


class GateReader(Protocol):
    """The part of the feature gates that decides how requests add up (FeatureGates has it)."""

    def enabled(self, name: str) -> bool: ...

    def at_least(self, version: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class ResourceRules:
    """How a pod's requests add up, which depends on the emulated release and two of its gates.

    ``v134`` selects what v1.34 changed without a gate: the non-zero (scoring) requests of a placed
    pod fill the defaults in container by container before summing, sidecars included in the sum
    (v1.30 kept the larger of the app containers' sum and each init container's use); host ports of
    sidecars count; and status resources are read as v1.34 reads them. ``pod_level_resources``
    (PodLevelResources) lets ``spec.resources.requests`` replace the container sums.
    ``in_place_resize`` (InPlacePodVerticalScaling) lets the resources containers report in the pod's
    status raise what a placed pod counts for.
    """

    v134: bool = True
    pod_level_resources: bool = True
    in_place_resize: bool = True


#: The rules of the emulated releases with their default gates.
V1_34_RULES = ResourceRules()
V1_30_RULES = ResourceRules(v134=False, pod_level_resources=False, in_place_resize=False)


def resource_rules(features: GateReader) -> ResourceRules:
    """The rules of the emulated release and gates ``features`` (read once, when a scheduler starts)."""
    return ResourceRules(
        v134=features.at_least("1.34"),
        pod_level_resources=features.enabled("PodLevelResources"),
        in_place_resize=features.enabled("InPlacePodVerticalScaling"),
    )


def pod_requests(
    containers: Sequence[ResourceList],
    init_containers: Sequence[tuple[ResourceList, bool]],
    overhead: ResourceList | None,
    *,
    non_missing: Mapping[str, Fraction] | None = None,
    pod_level: Mapping[str, Fraction] | None = None,
) -> ResourceList:
    """Effective pod request: app containers and sidecars add up, plain init containers only set a floor.

    ``init_containers`` pairs each init container's requests with whether it is a sidecar
    (``restartPolicy: Always``): a sidecar keeps running, so it adds to the pod's total and to every
    init container started after it. ``non_missing`` fills the requests a container leaves out, for
    the resources it names, container by container (explicit zeros stay zero). ``pod_level`` (the
    pod's own ``spec.resources.requests``, when set) replaces the container sum of each resource it
    names. Overhead comes on top.
    """

    def effective(reqs: ResourceList) -> ResourceList:
        if not non_missing or all(name in reqs for name in non_missing):
            return reqs
        filled = dict(reqs)
        for name, amount in non_missing.items():
            filled.setdefault(name, amount)
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
    if pod_level:
        total.update(pod_level)
    if overhead:
        _add(total, overhead)
    return total


def _non_zero(requests: Mapping[str, Fraction]) -> tuple[int, int]:
    """cpu (milli) and memory a container counts for in scoring: defaults stand in for missing requests."""
    cpu = to_scheduler_units(CPU, requests[CPU]) if CPU in requests else DEFAULT_MILLI_CPU_REQUEST
    mem = to_scheduler_units(MEMORY, requests[MEMORY]) if MEMORY in requests else DEFAULT_MEMORY_REQUEST
    return cpu, mem


def non_zero_requests(
    containers: Sequence[ResourceList],
    init_containers: Sequence[tuple[ResourceList, bool]],
    overhead: ResourceList | None,
) -> tuple[int, int]:
    """cpu (milli) and memory an existing pod counts for on its node when scoring, by v1.30's rule.

    App containers add up with defaults for missing requests, each rounded on its own; each init
    container (a sidecar counted with the sidecars before it) sets a floor, so a sidecar is not added
    to the app containers here, unlike in the pod's requests; overhead is added on top.
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


def _cpu_and_memory(requests: Mapping[str, Fraction]) -> tuple[int, int]:
    cpu = to_scheduler_units(CPU, requests[CPU]) if CPU in requests else 0
    mem = to_scheduler_units(MEMORY, requests[MEMORY]) if MEMORY in requests else 0
    return cpu, mem


@dataclass(frozen=True, slots=True)
class PodResources:
    """The amounts the scheduler keeps for one pod, exact (see :func:`pod_resources`)."""

    #: What Fit checks and the node accounts for (NodeInfo.Requested).
    requests: ResourceList
    #: cpu (milli) and memory the pod counts for in scoring once on a node (NodeInfo.NonZeroRequested).
    non_zero_cpu: int
    non_zero_memory: int
    #: The containers' requests with the scoring defaults filled in per container: what NodeResourcesFit
    #: weighs an incoming pod by.
    scoring: ResourceList


def pod_resources(
    containers: Sequence[ResourceList],
    init_containers: Sequence[tuple[ResourceList, bool]],
    overhead: ResourceList | None,
    pod_level: Mapping[str, Fraction] | None,
    rules: ResourceRules,
) -> PodResources:
    """A pod's requests, non-zero requests and scoring requests under ``rules``.

    ``pod_level`` is the pod's supported ``spec.resources.requests`` (None when it sets none); it is
    ignored unless the rules allow pod-level resources. v1.34 takes the non-zero amounts from one
    sum with the defaults filled in per container (rounded once); with pod-level requests set, a
    default is filled in only for cpu / memory neither the pod nor any container requests. The
    scoring requests never read pod-level requests: v1.34's NodeResourcesFit builds its scorer
    without that switch (BalancedAllocation, which has it, weighs ``requests``).
    """
    if not rules.pod_level_resources:
        pod_level = None
    requests = pod_requests(containers, init_containers, overhead, pod_level=pod_level)
    scoring = pod_requests(containers, init_containers, overhead, non_missing=NON_MISSING_DEFAULTS)
    if not rules.v134:
        cpu, mem = non_zero_requests(containers, init_containers, overhead)
    elif pod_level is None:
        cpu, mem = _cpu_and_memory(scoring)  # the same sum: every container with the defaults
    else:
        missing = {name: amount for name, amount in NON_MISSING_DEFAULTS.items() if name not in requests}
        non_zero = (
            requests
            if not missing
            else pod_requests(containers, init_containers, overhead, non_missing=missing, pod_level=pod_level)
        )
        cpu, mem = _cpu_and_memory(non_zero)
    return PodResources(requests, cpu, mem, scoring)


@dataclass(frozen=True, slots=True)
class ContainerResizeStatus:
    """What a container's status reports about its resources (InPlacePodVerticalScaling)."""

    #: ``status.resources.requests``; None when the status has no ``resources`` block.
    requests: ResourceList | None
    #: ``allocatedResources``.
    allocated: ResourceList


def _max_of(first: Mapping[str, Fraction], *others: Mapping[str, Fraction]) -> ResourceList:
    out = dict(first)
    for other in others:
        _max_into(out, other)
    return out


def resized_requests(
    spec: ResourceList, status: ContainerResizeStatus | None, infeasible: bool, rules: ResourceRules
) -> ResourceList:
    """A running container's requests once its status is taken into account.

    v1.34 reads containers whose status has a ``resources`` block: the larger of spec, status and
    allocated amounts, or of status and allocated alone while a resize is infeasible. v1.30 (gate on)
    takes the larger of spec and allocated amounts, or the allocated alone while infeasible.
    """
    if status is None or not rules.in_place_resize:
        return spec
    if rules.v134:
        if status.requests is None:
            return spec
        return (
            _max_of(status.requests, status.allocated)
            if infeasible
            else _max_of(spec, status.requests, status.allocated)
        )
    return dict(status.allocated) if infeasible else _max_of(spec, status.allocated)
