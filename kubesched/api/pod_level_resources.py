"""Pod-level resources (``spec.resources``): what the API server fills in and refuses (PodLevelResources).

With the gate on (beta, on in v1.34) a pod may give requests and limits for itself as a whole, for
cpu, memory and hugepages; the scheduler then uses them in place of its containers' sums. Before
storing such a pod the API server defaults and validates the field, and the scheduler only ever sees
the result:

* defaulting (after each container's requests were defaulted from its limits): a hugepages limit the
  containers set but the pod does not (nor requests) becomes the pod's limit, as their aggregate; then,
  when the pod has limits, each cpu / memory request it lacks becomes the containers' aggregate
  request, and each limit still without a request becomes that request;
* validation: only cpu, memory and hugepages; requests within limits (hugepages equal to them); not
  below the containers' aggregate requests; hugepages limits not below the containers' aggregate
  limits; no container limit above the pod's; not for Windows pods; no claims.

Aggregates follow the sidecar rule of the scheduler's requests (sidecars add up with the containers,
init containers set a floor), without overhead. Amounts keep the format they were written in, as
quantities do in the API server, so the amounts it writes and names read as it writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubesched.api import fields as f
from kubesched.api.errors import ObjectError
from kubesched.api.quantity import QuantityError, parse_quantity, quantity_format, quantity_string
from kubesched.api.resource_names import (
    is_hugepages,
    overcommit_allowed,
    parse_amount,
    validate_resource_name,
)
from kubesched.api.resources import CPU, MEMORY, is_supported_pod_level_resource

#: What ``spec.resources`` may name, as the API server lists it in its refusal.
SUPPORTED_NAMES = ("cpu", "hugepages-", "memory")

#: An amount and the format it is written in.
Amount = tuple[Fraction, str]


def _amounts(raw: object, path: str) -> dict[str, Amount]:
    out: dict[str, Amount] = {}
    for name, value in f.mapping(raw, path).items():
        try:
            out[str(name)] = (parse_quantity(value), quantity_format(value))
        except QuantityError as err:
            raise ObjectError(f"{path}[{name}]", err.reason) from None
    return out


def _shown(amount: Amount) -> str:
    return quantity_string(*amount)


def _add(into: dict[str, Amount], extra: Mapping[str, Amount]) -> None:
    """Quantity.Add per resource: a sum keeps the format of its first non-zero amount."""
    for name, (value, fmt) in extra.items():
        if name not in into:
            into[name] = (value, fmt)
        else:
            held, held_fmt = into[name]
            into[name] = (held + value, fmt if held == 0 else held_fmt)


def _max(into: dict[str, Amount], other: Mapping[str, Amount]) -> None:
    for name, amount in other.items():
        if name not in into or amount[0] > into[name][0]:
            into[name] = amount


def _container_amounts(spec: Mapping[str, Any], key: str, field: str) -> list[tuple[dict[str, Amount], bool]]:
    out = []
    for i, c in enumerate(f.sequence(spec.get(key), f"spec.{key}")):
        c = f.mapping(c, f"spec.{key}[{i}]")
        resources = f.mapping(c.get("resources"), f"spec.{key}[{i}].resources")
        out.append(
            (
                _amounts(resources.get(field), f"spec.{key}[{i}].resources.{field}"),
                key == "initContainers" and c.get("restartPolicy") == "Always",
            )
        )
    return out


def aggregate_containers(spec: Mapping[str, Any], field: str) -> dict[str, Amount]:
    """The containers' ``requests`` or ``limits`` (``field``) summed as the pod's (AggregateContainer*)."""
    total: dict[str, Amount] = {}
    for amounts, _ in _container_amounts(spec, "containers", field):
        _add(total, amounts)
    sidecars: dict[str, Amount] = {}
    floor: dict[str, Amount] = {}
    for amounts, is_sidecar in _container_amounts(spec, "initContainers", field):
        if is_sidecar:
            _add(total, amounts)
            _add(sidecars, amounts)
            running = sidecars
        else:
            running = {}
            _add(running, amounts)
            _add(running, sidecars)
        _max(floor, running)
    _max(total, floor)
    return total


# -- defaulting -------------------------------------------------------------------------------------
def default_pod_level_resources(spec: dict[str, Any]) -> None:
    """Fill in ``spec.resources`` as the API server does (see the module docstring); in place."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return
    _default_hugepage_limits(spec, resources)
    _default_requests(spec, resources)


def _default_hugepage_limits(spec: Mapping[str, Any], resources: dict[str, Any]) -> None:
    limits = f.mapping(resources.get("limits"), "spec.resources.limits")
    requests = f.mapping(resources.get("requests"), "spec.resources.requests")
    if not limits and not requests:
        return
    pod_limits = dict(limits)
    for name, amount in aggregate_containers(spec, "limits").items():
        if is_hugepages(name) and name not in requests and name not in pod_limits:
            pod_limits[name] = _shown(amount)
    if pod_limits:
        resources["limits"] = pod_limits


def _default_requests(spec: Mapping[str, Any], resources: dict[str, Any]) -> None:
    limits = f.mapping(resources.get("limits"), "spec.resources.limits")
    if not limits:
        return
    pod_requests = dict(f.mapping(resources.get("requests"), "spec.resources.requests"))
    for name, amount in aggregate_containers(spec, "requests").items():
        if name not in pod_requests and is_supported_pod_level_resource(name) and overcommit_allowed(name):
            pod_requests[name] = _shown(amount)
    for name, amount in _amounts(limits, "spec.resources.limits").items():
        if name not in pod_requests and is_supported_pod_level_resource(name):
            pod_requests[name] = _shown(amount)
    if pod_requests:
        resources["requests"] = pod_requests


# -- validation -------------------------------------------------------------------------------------
def validate_pod_level_resources(spec: Mapping[str, Any], path: str = "spec") -> None:
    """Refuse ``spec.resources`` as the API server would (after defaulting); ObjectError names the
    field and gives the API server's words."""
    raw = spec.get("resources")
    if raw is None:
        return
    where = f"{path}.resources"
    resources = f.mapping(raw, where)
    os_name = f.mapping(spec.get("os"), f"{path}.os").get("name")
    if os_name == "windows":
        raise ObjectError(where, "Forbidden: may not be set for a windows pod")
    if resources.get("claims") is not None:
        raise ObjectError(f"{where}.claims", "Forbidden: claims may not be set for Resources at pod-level")
    limits = _checked_amounts(resources.get("limits"), f"{where}.limits")
    requests = _checked_amounts(resources.get("requests"), f"{where}.requests")
    _check_requests_within_limits(requests, limits, where)
    named = {*limits, *requests}
    if any(is_hugepages(name) for name in named) and not named & {CPU, MEMORY}:
        raise ObjectError(where, "Forbidden: HugePages require cpu or memory")
    _check_consistency(spec, requests, limits, where)


def _checked_amounts(raw: object, path: str) -> dict[str, Amount]:
    """Resource names pod level supports, with valid amounts (validatePodResourceName, quantity rules)."""
    out: dict[str, Amount] = {}
    for name, value in sorted(f.mapping(raw, path).items()):
        name = str(name)
        field = f"{path}[{name}]"
        validate_resource_name(name, field)
        if not is_supported_pod_level_resource(name):
            supported = ", ".join(f'"{s}"' for s in SUPPORTED_NAMES)
            raise ObjectError(field, f'Unsupported value: "{name}": supported values: {supported}')
        out[name] = (parse_amount(name, value, field), quantity_format(value))
    return out


def _check_requests_within_limits(requests: Mapping[str, Amount], limits: Mapping[str, Amount], where: str) -> None:
    for name, request in requests.items():
        limit = limits.get(name)
        if limit is None:
            if not overcommit_allowed(name):
                raise ObjectError(
                    f"{where}.limits", "Required value: Limit must be set for non overcommitable resources"
                )
        elif request[0] != limit[0] and not overcommit_allowed(name):
            raise ObjectError(
                f"{where}.requests",
                f'Invalid value: "{_shown(request)}": must be equal to {name} limit of {_shown(limit)}',
            )
        elif request[0] > limit[0]:
            raise ObjectError(
                f"{where}.requests",
                f'Invalid value: "{_shown(request)}": must be less than or equal to {name} limit of {_shown(limit)}',
            )


def _check_consistency(
    spec: Mapping[str, Any], requests: Mapping[str, Amount], limits: Mapping[str, Amount], where: str
) -> None:
    """The pod's amounts against its containers' (validatePodResourceConsistency)."""
    for name, total in sorted(aggregate_containers(spec, "requests").items()):
        own = requests.get(name)
        if own is not None and total[0] > own[0]:
            raise ObjectError(
                f"{where}.requests[{name}]",
                f'Invalid value: "{_shown(own)}": must be greater than '
                f"or equal to aggregate container requests of "
                f"{_shown(total)}",
            )
    for name, total in sorted(aggregate_containers(spec, "limits").items()):
        own = limits.get(name)
        if is_hugepages(name) and own is not None and total[0] > own[0]:
            raise ObjectError(
                f"{where}.limits[{name}]",
                f'Invalid value: "{_shown(own)}": must be greater than '
                f"or equal to aggregate container limits of {_shown(total)}",
            )
    containers: Sequence[tuple[dict[str, Amount], bool]] = _container_amounts(spec, "containers", "limits")
    for i, (container_limits, _) in enumerate(containers):
        for name, limit in sorted(container_limits.items()):
            own = limits.get(name)
            if own is not None and limit[0] > own[0]:
                # The API server names this field so: the container under spec.resources.
                raise ObjectError(
                    f"{where}.containers[{i}][{name}].limits",
                    f'Invalid value: "{_shown(limit)}": must be less than or equal to pod limits of {_shown(own)}',
                )
