"""Resource names and amounts as the API server validates them (``pkg/apis/core/validation``).

A misspelt resource (``CPU``, ``memroy``, ``gpu``) would otherwise be requested from no node and
quietly change where a pod lands; a negative or fractional device count would be rounded. The rules
are kube-apiserver's: unprefixed names must be standard resources, anything else a qualified name,
and extended resources (outside ``kubernetes.io/``) and object counts are whole numbers.

One rule is kubesched's own: the snapshot keeps per-node amounts in int64 columns, and scores
multiply them by 100, so no single amount may exceed :data:`MAX_SCHEDULER_UNITS` scheduler units
(milli-cores for cpu, whole units otherwise): 2**53, about 9 PB of memory or 9 billion cores. A
thousand such amounts still add up inside int64, and any real amount fits with room to spare.
"""

from __future__ import annotations

import difflib
import re
from fractions import Fraction

from kubesched.api.errors import ObjectError
from kubesched.api.quantity import QuantityError, format_quantity, int_value, parse_quantity
from kubesched.api.resources import CPU, to_scheduler_units

#: Largest amount, in scheduler units, an object may give for one resource (2**53: sums over a
#: node's pods and the x100 of scoring stay inside int64).
MAX_SCHEDULER_UNITS = 2**53

NATIVE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."
HUGEPAGES_PREFIX = "hugepages-"

#: Resources a container may request without a prefix (hugepages-<size> too).
STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
#: Every unprefixed name the API knows (helper.standardResources).
STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
#: Resources counted in whole units (helper.integerResources), extended resources aside.
INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)

_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NAME_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)


def _invalid(name: str, why: str) -> str:
    return f'Invalid value: "{name}": {why}'


def qualified_name_error(name: str) -> str | None:
    """Why ``name`` is not a qualified name (``[DNS-subdomain/]name``), or None when it is one."""
    prefix, slash, short = name.rpartition("/")
    if slash:
        if not prefix:
            return "prefix part must be non-empty"
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
            return (
                "prefix part must be a lowercase RFC 1123 subdomain: alphanumeric characters, '-' or '.', "
                "starting and ending with an alphanumeric character"
            )
    if not short:
        return "name part must be non-empty"
    if len(short) > 63:
        return "name part must be no more than 63 characters"
    if not _NAME_RE.fullmatch(short):
        return _NAME_RULE
    return None


def is_native(name: str) -> bool:
    """helper.IsNativeResource: unprefixed, or in the kubernetes.io/ namespace."""
    return "/" not in name or NATIVE_PREFIX in name


def is_extended(name: str) -> bool:
    """helper.IsExtendedResourceName: a vendor-qualified name such as ``nvidia.com/gpu``."""
    if is_native(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return qualified_name_error(REQUESTS_PREFIX + name) is None


def is_hugepages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_integer_resource(name: str) -> bool:
    return name in INTEGER_RESOURCES or is_extended(name)


def overcommit_allowed(name: str) -> bool:
    """Native resources other than hugepages may be requested below their limit."""
    return is_native(name) and not is_hugepages(name)


def _did_you_mean(name: str, choices: frozenset[str]) -> str:
    close = difflib.get_close_matches(name.lower(), sorted(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def validate_resource_name(name: str, path: str) -> None:
    """validateResourceName: a qualified name, and a standard resource when unprefixed."""
    why = qualified_name_error(name)
    if why is not None:
        raise ObjectError(path, _invalid(name, why))
    if "/" not in name and name not in STANDARD_RESOURCES and not is_hugepages(name):
        raise ObjectError(
            path,
            _invalid(
                name,
                "must be a standard resource type or fully qualified"
                + _did_you_mean(name, STANDARD_CONTAINER_RESOURCES | {"pods"}),
            ),
        )


def validate_container_resource_name(name: str, path: str) -> None:
    """validateContainerResourceName: what a container (or pod overhead) may request."""
    validate_resource_name(name, path)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not is_hugepages(name):
            raise ObjectError(path, _invalid(name, "must be a standard resource for containers"))
    elif not is_native(name) and not is_extended(name):
        raise ObjectError(path, _invalid(name, "doesn't follow extended resource name standard"))


def _shown(value: object) -> str:
    return str(value) if isinstance(value, str) else repr(value)


def parse_amount(name: str, value: object, path: str) -> Fraction:
    """Parse and check one amount (ValidateResourceQuantityValue plus the int64 column limit)."""
    try:
        quantity = parse_quantity(value)  # type: ignore[arg-type]
    except QuantityError as err:
        raise ObjectError(path, err.reason) from None
    if quantity < 0:
        raise ObjectError(path, _invalid(_shown(value), "must be greater than or equal to 0"))
    if is_integer_resource(name) and quantity.denominator != 1:
        raise ObjectError(path, _invalid(_shown(value), "must be an integer"))
    if is_hugepages(name):
        _check_hugepages(name, quantity, value, path)
    check_amount_fits(name, quantity, path, shown=_shown(value))
    return quantity


def check_amount_fits(name: str, quantity: Fraction, path: str, *, shown: str | None = None) -> None:
    """Refuse an amount larger than the snapshot's integer columns can account for."""
    if to_scheduler_units(name, quantity) <= MAX_SCHEDULER_UNITS:
        return
    limit = Fraction(MAX_SCHEDULER_UNITS, 1000) if name == CPU else Fraction(MAX_SCHEDULER_UNITS)
    shown = format_quantity(quantity) if shown is None else shown
    raise ObjectError(
        path,
        _invalid(
            shown,
            f"must be less than or equal to {format_quantity(limit)} (the largest amount kubesched can account for)",
        ),
    )


def _check_hugepages(name: str, quantity: Fraction, value: object, path: str) -> None:
    """helper.IsHugePageResourceValueDivisible: a whole number of pages of the size the name gives."""
    try:
        page = parse_quantity(name[len(HUGEPAGES_PREFIX) :])
    except QuantityError:
        page = Fraction(0)
    ok = page > 0 and (page * 1000).denominator == 1 and (page * 1000) % 1000 == 0
    if ok:
        ok = int_value(quantity) % int_value(page) == 0
    if not ok:
        raise ObjectError(path, _invalid(_shown(value), f"{_shown(value)} is not positive integer multiple of {name}"))
