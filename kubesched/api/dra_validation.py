"""What kube-apiserver refuses in DRA objects (``pkg/apis/resource/validation``), with its messages.

DeviceClass, ResourceSlice, ResourceClaim (spec, and status through the status subresource) and
ResourceClaimTemplate, plus the DRA parts of a pod (``spec.resourceClaims`` and containers'
``resources.claims``). As everywhere in :mod:`kubesched.api.validation`, the first bad field raises
:class:`~kubesched.api.errors.ObjectError` with its path and the API server's text
(``spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero``). CEL selectors
are compiled here, as the API server compiles them, so an expression that does not compile is refused
when the object is loaded, not when a pod needs it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.api import dra_cel
from kubesched.api import fields as f
from kubesched.api.dra import ALL, ALLOCATION_MODES, EXACT_COUNT, RESERVED_FOR_MAX_SIZE
from kubesched.api.errors import ObjectError
from kubesched.api.labels import NodeSelector, validate_label_key
from kubesched.api.quantity import parse_quantity
from kubesched.api.resource_names import is_extended

#: resourceapi limits.
REQUESTS_MAX = 32
CONSTRAINTS_MAX = 32
CONFIG_MAX = 32
SELECTORS_MAX = 32
FIRST_AVAILABLE_MAX = 8
TOLERATIONS_MAX = 16
SLICE_DEVICES_MAX = 128
ATTRIBUTES_AND_CAPACITIES_MAX = 32
ATTRIBUTE_VALUE_MAX_LENGTH = 64
DRIVER_NAME_MAX_LENGTH = 63
POOL_NAME_MAX_LENGTH = 253
ID_MAX_LENGTH = 32
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
ALLOCATION_RESULTS_MAX = 32
TAINT_EFFECTS = ("NoExecute", "NoSchedule")
TOLERATION_OPERATORS = ("Equal", "Exists")

_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_C_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SEMVER_RE = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
    "validation is '[A-Za-z_][A-Za-z0-9_]*')"
)
_REQUEST_REF_MSG = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)


# ---------------------------------------------------------------------------------------------------------
# field.Error texts


def shown(value: object) -> str:
    """A bad value as field.Error prints it: strings quoted, numbers and booleans bare, the rest as JSON."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"), default=str)


def invalid(path: str, value: object, detail: str) -> ObjectError:
    return ObjectError(path, f"Invalid value: {shown(value)}: {detail}")


def required(path: str, detail: str = "") -> ObjectError:
    return ObjectError(path, f"Required value: {detail}" if detail else "Required value")


def forbidden(path: str, detail: str) -> ObjectError:
    return ObjectError(path, f"Forbidden: {detail}")


def too_long(path: str, limit: int) -> ObjectError:
    return ObjectError(path, f"Too long: may not be more than {limit} bytes")


def too_many(path: str, count: int, limit: int) -> ObjectError:
    return ObjectError(path, f"Too many: {count}: must have at most {limit} items")


def duplicate(path: str, value: object) -> ObjectError:
    return ObjectError(path, f"Duplicate value: {shown(value)}")


def not_supported(path: str, value: object, allowed: Iterable[str]) -> ObjectError:
    return ObjectError(
        path, f"Unsupported value: {shown(value)}: supported values: " + ", ".join(json.dumps(a) for a in allowed)
    )


def immutable(path: str, value: object) -> ObjectError:
    return invalid(path, value, "field is immutable")


# ---------------------------------------------------------------------------------------------------------
# Names


def dns_label(name: str, path: str) -> None:
    if len(name) > 63:
        raise invalid(path, name, "must be no more than 63 characters")
    if not _LABEL_RE.fullmatch(name):
        raise invalid(path, name, _LABEL_MSG)


def dns_subdomain(name: str, path: str) -> None:
    if len(name) > 253:
        raise invalid(path, name, "must be no more than 253 characters")
    if not _SUBDOMAIN_RE.fullmatch(name):
        raise invalid(path, name, _SUBDOMAIN_MSG)


def driver_name(name: str, path: str) -> None:
    """ValidateCSIDriverName, which DRA driver names share."""
    if not name:
        raise required(path)
    if len(name) > DRIVER_NAME_MAX_LENGTH:
        raise too_long(path, DRIVER_NAME_MAX_LENGTH)
    if not _SUBDOMAIN_RE.fullmatch(name.lower()):
        raise invalid(path, name, _SUBDOMAIN_MSG)


def pool_name(name: str, path: str) -> None:
    if not name:
        raise required(path)
    if len(name) > POOL_NAME_MAX_LENGTH:
        raise too_long(path, POOL_NAME_MAX_LENGTH)
    for part in name.split("/"):
        dns_subdomain(part, path)


def _c_identifier(ident: str, path: str) -> None:
    if len(ident) > ID_MAX_LENGTH:
        raise too_long(path, ID_MAX_LENGTH)
    if not _C_IDENTIFIER_RE.fullmatch(ident):
        raise invalid(path, ident, _C_IDENTIFIER_MSG)


def qualified_name(name: str, path: str) -> None:
    """An attribute or capacity name: ``id`` or ``domain/id``."""
    if not name:
        raise required(path, "name required")
    parts = name.split("/")
    if len(parts) == 1:
        _c_identifier(name, path)
    elif len(parts) == 2:
        if not parts[0]:
            raise required(path, "the domain must not be empty")
        driver_name(parts[0], path)
        if not parts[1]:
            raise required(path, "the name must not be empty")
        _c_identifier(parts[1], path)


def fully_qualified_name(name: str, path: str) -> None:
    qualified_name(name, path)
    if "/" not in name:
        raise invalid(path, name, "must include a domain")


def _strings(value: object, path: str) -> list[str]:
    return [f.string(item, f"{path}[{i}]") for i, item in enumerate(f.sequence(value, path))]


def _items(value: object, path: str, limit: int | None) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, mapping) of each list item, refusing a list longer than ``limit``."""
    items = f.sequence(value, path)
    if limit is not None and len(items) > limit:
        raise too_many(path, len(items), limit)
    return [(f"{path}[{i}]", f.mapping(item, f"{path}[{i}]")) for i, item in enumerate(items)]


def _unique(keys: Iterable[tuple[str, str]]) -> None:
    """validateSet's duplicate check: (path, key) pairs; the second of two equal keys is refused."""
    seen: set[str] = set()
    for path, key in keys:
        if key in seen:
            raise duplicate(path, key)
        seen.add(key)


# ---------------------------------------------------------------------------------------------------------
# Selectors and configuration


def selectors(value: object, path: str) -> None:
    for where, item in _items(value, path, SELECTORS_MAX):
        cel = item.get("cel")
        if cel is None:
            raise required(f"{where}.cel")
        body = f.mapping(cel, f"{where}.cel")
        expression = f.string(body.get("expression"), f"{where}.cel.expression")
        if len(expression) > dra_cel.MAX_EXPRESSION_LENGTH:
            raise too_long(f"{where}.cel.expression", dra_cel.MAX_EXPRESSION_LENGTH)
        compiled = dra_cel.compile_selector(expression)
        if compiled.error is not None:
            raise invalid(f"{where}.cel.expression", expression, compiled.error)


def opaque_configuration(body: Mapping[str, Any], path: str) -> None:
    opaque = body.get("opaque")
    if opaque is None:
        raise required(f"{path}.opaque")
    opaque = f.mapping(opaque, f"{path}.opaque")
    driver_name(f.string(opaque.get("driver"), f"{path}.opaque.driver"), f"{path}.opaque.driver")
    parameters = opaque.get("parameters")
    where = f"{path}.opaque.parameters"
    if parameters is None:
        raise required(where)
    if not isinstance(parameters, Mapping):
        raise invalid(where, "<value omitted>", "must be a valid JSON object")
    if len(json.dumps(parameters, separators=(",", ":"))) > OPAQUE_PARAMETERS_MAX_LENGTH:
        raise too_long(where, OPAQUE_PARAMETERS_MAX_LENGTH)


def device_class(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    selectors(spec.get("selectors"), "spec.selectors")
    for where, item in _items(spec.get("config"), "spec.config", CONFIG_MAX):
        opaque_configuration(item, where)
    name = spec.get("extendedResourceName")
    if name is not None and not is_extended(f.string(name, "spec.extendedResourceName")):
        raise invalid("spec.extendedResourceName", name, "must be a valid extended resource name")


# ---------------------------------------------------------------------------------------------------------
# Claims and templates


def _allocation_mode(body: Mapping[str, Any], path: str) -> None:
    """validateDeviceAllocationMode, after the API server's defaults (ExactCount, count 1)."""
    mode = f.string(body.get("allocationMode"), f"{path}.allocationMode") or EXACT_COUNT
    count = f.integer(body.get("count"), f"{path}.count")
    if mode == ALL:
        if count != 0:
            raise invalid(f"{path}.count", count, f"must not be specified when allocationMode is '{ALL}'")
    elif mode == EXACT_COUNT:
        if count < 0:
            raise invalid(f"{path}.count", count, "must be greater than zero")
    else:
        raise not_supported(f"{path}.allocationMode", mode, ALLOCATION_MODES)


def _toleration(body: Mapping[str, Any], path: str) -> None:
    key = f.string(body.get("key"), f"{path}.key")
    if key:
        validate_label_key(key, f"{path}.key")
    operator = f.string(body.get("operator"), f"{path}.operator")
    value = f.string(body.get("value"), f"{path}.value")
    if operator == "Exists":
        if value:
            raise invalid(f"{path}.value", value, "must be empty for operator `Exists`")
    elif operator == "Equal":
        if value and (len(value) > 63 or not re.fullmatch(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", value)):
            raise invalid(
                f"{path}.value",
                value,
                "a valid label must be an empty string or consist of "
                "alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character",
            )
    elif operator == "":
        raise required(f"{path}.operator")
    else:
        raise not_supported(f"{path}.operator", operator, TOLERATION_OPERATORS)
    effect = f.string(body.get("effect"), f"{path}.effect")
    if effect and effect not in TAINT_EFFECTS:
        raise not_supported(f"{path}.effect", effect, TAINT_EFFECTS)
    f.integer(body.get("tolerationSeconds"), f"{path}.tolerationSeconds")


def _request_body(body: Mapping[str, Any], path: str) -> None:
    """What exact requests and subrequests share: class, selectors, mode and count, tolerations."""
    class_name = f.string(body.get("deviceClassName"), f"{path}.deviceClassName")
    if not class_name:
        raise required(f"{path}.deviceClassName")
    dns_subdomain(class_name, f"{path}.deviceClassName")
    selectors(body.get("selectors"), f"{path}.selectors")
    _allocation_mode(body, path)
    for where, item in _items(body.get("tolerations"), f"{path}.tolerations", TOLERATIONS_MAX):
        _toleration(item, where)
    f.boolean(body.get("adminAccess"), f"{path}.adminAccess")
    f.mapping(body.get("capacity"), f"{path}.capacity")


def _device_request(body: Mapping[str, Any], path: str) -> None:
    dns_label(f.string(body.get("name"), f"{path}.name"), f"{path}.name")
    subs = _items(body.get("firstAvailable"), f"{path}.firstAvailable", FIRST_AVAILABLE_MAX)
    for where, sub in subs:
        dns_label(f.string(sub.get("name"), f"{where}.name"), f"{where}.name")
        _request_body(sub, where)
    _unique((f"{where}.name", str(sub.get("name"))) for where, sub in subs)
    exactly = body.get("exactly")
    if exactly is not None:
        _request_body(f.mapping(exactly, f"{path}.exactly"), f"{path}.exactly")
    if not subs and exactly is None:
        raise required(path, "exactly one of `exactly` or `firstAvailable` is required")
    if subs and exactly is not None:
        raise invalid(
            path, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
        )


def _request_names(requests: list[tuple[str, Mapping[str, Any]]]) -> dict[str, frozenset[str] | None]:
    """Request name -> its subrequest names (None for a request without subrequests)."""
    names: dict[str, frozenset[str] | None] = {}
    for _, request in requests:
        subs = f.sequence(request.get("firstAvailable"), "")
        names[str(request.get("name"))] = frozenset(str(f.mapping(s, "").get("name")) for s in subs) if subs else None
    return names


def _request_ref(name: str, path: str, names: Mapping[str, frozenset[str] | None]) -> None:
    segments = name.split("/")
    if len(segments) > 2:
        raise invalid(path, name, _REQUEST_REF_MSG)
    for segment in segments:
        dns_label(segment, path)
    subs = names.get(segments[0], frozenset())
    known = segments[0] in names and (len(segments) == 1 or (subs is not None and segments[1] in subs))
    if not known:
        raise invalid(path, name, _REQUEST_REF_MSG)


def _request_refs(value: object, path: str, names: Mapping[str, frozenset[str] | None]) -> None:
    refs = _strings(value, path)
    if len(refs) > REQUESTS_MAX:
        raise too_many(path, len(refs), REQUESTS_MAX)
    for i, ref in enumerate(refs):
        _request_ref(ref, f"{path}[{i}]", names)
    _unique((f"{path}[{i}]", ref) for i, ref in enumerate(refs))


def claim_spec(raw: object, path: str) -> None:
    """validateResourceClaimSpec: ``spec`` of a claim (``spec.spec`` of a template)."""
    devices = f.mapping(f.mapping(raw, path).get("devices"), f"{path}.devices")
    base = f"{path}.devices"
    requests = _items(devices.get("requests"), f"{base}.requests", REQUESTS_MAX)
    for where, request in requests:
        _device_request(request, where)
    _unique((f"{where}.name", str(request.get("name"))) for where, request in requests)
    names = _request_names(requests)
    for where, constraint in _items(devices.get("constraints"), f"{base}.constraints", CONSTRAINTS_MAX):
        _request_refs(constraint.get("requests"), f"{where}.requests", names)
        match, distinct = constraint.get("matchAttribute"), constraint.get("distinctAttribute")
        if match is not None:
            fully_qualified_name(f.string(match, f"{where}.matchAttribute"), f"{where}.matchAttribute")
        elif distinct is not None:
            fully_qualified_name(f.string(distinct, f"{where}.distinctAttribute"), f"{where}.distinctAttribute")
        else:
            raise required(f"{where}.matchAttribute")
    for where, config in _items(devices.get("config"), f"{base}.config", CONFIG_MAX):
        _request_refs(config.get("requests"), f"{where}.requests", names)
        opaque_configuration(config, where)


def resource_claim(obj: Mapping[str, Any]) -> None:
    if obj.get("spec") is None:
        raise required("spec")
    claim_spec(obj.get("spec"), "spec")
    claim_status(obj, None)


def resource_claim_template(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    meta = f.mapping(spec.get("metadata"), "spec.metadata")
    f.string_map(meta.get("labels"), "spec.metadata.labels")
    f.string_map(meta.get("annotations"), "spec.metadata.annotations")
    claim_spec(spec.get("spec"), "spec.spec")


def admin_access_requested(obj: Mapping[str, Any]) -> str | None:
    """The path of the first request asking for admin access (AuthorizedForAdmin), None if none does."""
    devices = f.mapping(f.mapping(obj.get("spec"), "spec").get("devices"), "spec.devices")
    for i, request in enumerate(f.sequence(devices.get("requests"), "spec.devices.requests")):
        exactly = f.mapping(f.mapping(request, "").get("exactly"), "")
        if exactly.get("adminAccess") is True:
            return f"spec.devices.requests[{i}].adminAccess"
    return None


# ---------------------------------------------------------------------------------------------------------
# Claim status (the status subresource)


def _allocation(raw: object, path: str, names: Mapping[str, frozenset[str] | None]) -> None:
    body = f.mapping(raw, path)
    devices = f.mapping(body.get("devices"), f"{path}.devices")
    for where, result in _items(devices.get("results"), f"{path}.devices.results", ALLOCATION_RESULTS_MAX):
        _request_ref(f.string(result.get("request"), f"{where}.request"), f"{where}.request", names)
        driver_name(f.string(result.get("driver"), f"{where}.driver"), f"{where}.driver")
        pool_name(f.string(result.get("pool"), f"{where}.pool"), f"{where}.pool")
        dns_label(f.string(result.get("device"), f"{where}.device"), f"{where}.device")
        f.boolean(result.get("adminAccess"), f"{where}.adminAccess")
    for where, config in _items(devices.get("config"), f"{path}.devices.config", 2 * CONFIG_MAX):
        source = f.string(config.get("source"), f"{where}.source")
        if not source:
            raise required(f"{where}.source")
        if source not in ("FromClaim", "FromClass"):
            raise not_supported(f"{where}.source", source, ("FromClaim", "FromClass"))
        _request_refs(config.get("requests"), f"{where}.requests", names)
        opaque_configuration(config, where)
    selector = body.get("nodeSelector")
    if selector is not None:
        try:
            NodeSelector.from_dict(f.mapping(selector, f"{path}.nodeSelector"))
        except ObjectError as err:
            raise err.under(f"{path}.nodeSelector") from None


def claim_status(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """ValidateResourceClaimStatusUpdate (``old`` None: a claim created with a status, as a snapshot is)."""
    status = f.mapping(obj.get("status"), "status")
    reserved = _items(status.get("reservedFor"), "status.reservedFor", None)
    for where, ref in reserved:
        for key in ("resource", "name", "uid"):
            if not f.string(ref.get(key), f"{where}.{key}"):
                raise required(f"{where}.{key}")
        f.string(ref.get("apiGroup"), f"{where}.apiGroup")
    if len(reserved) > RESERVED_FOR_MAX_SIZE:
        raise too_many("status.reservedFor", len(reserved), RESERVED_FOR_MAX_SIZE)
    _unique((f"{where}.uid", str(ref.get("uid"))) for where, ref in reserved)
    allocation = status.get("allocation")
    if reserved and allocation is None:
        raise forbidden("status.reservedFor", "may not be specified when `allocated` is not set")
    old_allocation = None if old is None else f.mapping(old.get("status"), "status").get("allocation")
    if old_allocation is not None and allocation is not None:
        if allocation != old_allocation:
            raise immutable("status.allocation", allocation)
    elif allocation is not None:
        spec = f.mapping(obj.get("spec"), "spec")
        devices = f.mapping(spec.get("devices"), "spec.devices")
        requests = _items(devices.get("requests"), "spec.devices.requests", None)
        _allocation(allocation, "status.allocation", _request_names(requests))


# ---------------------------------------------------------------------------------------------------------
# ResourceSlice


def _attribute(body: Mapping[str, Any], path: str) -> None:
    present = [k for k in ("bool", "int", "string", "version") if body.get(k) is not None]
    if not present:
        raise required(path, "exactly one value must be specified")
    if len(present) > 1:
        raise invalid(path, dict(body), "exactly one value must be specified")
    kind = present[0]
    if kind == "bool":
        f.boolean(body[kind], f"{path}.bool")
    elif kind == "int":
        f.integer(body[kind], f"{path}.int")
    else:
        text = f.string(body[kind], f"{path}.{kind}")
        if kind == "version" and not _SEMVER_RE.fullmatch(text):
            raise invalid(f"{path}.version", text, "must be a string compatible with semver.org spec 2.0.0")
        if len(text) > ATTRIBUTE_VALUE_MAX_LENGTH:
            raise too_long(f"{path}.{kind}", ATTRIBUTE_VALUE_MAX_LENGTH)


def _quantity(value: object, path: str) -> None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ObjectError(path, f"expected a quantity, got {f.describe(value)}")
    try:
        parse_quantity(value)
    except ObjectError as err:
        raise ObjectError(path, err.reason) from None


def _node_selection(body: Mapping[str, Any], path: str, options: str) -> list[str]:
    """The node selection fields set in a slice spec or a device (the ones it names in ``options``)."""
    chosen = []
    node_name = body.get("nodeName")
    if node_name is not None:
        if not f.string(node_name, f"{path}nodeName"):
            raise invalid(f"{path}nodeName", "", "must be either unset or set to a non-empty string")
        dns_subdomain(node_name, f"{path}nodeName")
        chosen.append("`nodeName`")
    selector = body.get("nodeSelector")
    if selector is not None:
        try:
            parsed = NodeSelector.from_dict(f.mapping(selector, f"{path}nodeSelector"))
        except ObjectError as err:
            raise err.under(f"{path}nodeSelector") from None
        if options == "slice" and len(parsed.terms) != 1:
            raise invalid(
                f"{path}nodeSelector.nodeSelectorTerms",
                selector.get("nodeSelectorTerms"),
                "must have exactly one node selector term",
            )
        chosen.append("`nodeSelector`")
    for name in ("allNodes", "perDeviceNodeSelection") if options == "slice" else ("allNodes",):
        value = body.get(name)
        if value is not None:
            if not f.boolean(value, f"{path}{name}"):
                raise invalid(f"{path}{name}", False, "must be either unset or set to true")
            chosen.append(f"`{name}`")
    return chosen


def _device(body: Mapping[str, Any], path: str, per_device: bool) -> None:
    dns_label(f.string(body.get("name"), f"{path}.name"), f"{path}.name")
    attributes = f.mapping(body.get("attributes"), f"{path}.attributes")
    capacity = f.mapping(body.get("capacity"), f"{path}.capacity")
    total = len(attributes) + len(capacity)
    if total > ATTRIBUTES_AND_CAPACITIES_MAX:
        raise invalid(
            path,
            total,
            f"the total number of attributes and capacities must not exceed {ATTRIBUTES_AND_CAPACITIES_MAX}",
        )
    for key, value in attributes.items():
        qualified_name(str(key), f"{path}.attributes[{key}]")
        _attribute(f.mapping(value, f"{path}.attributes[{key}]"), f"{path}.attributes[{key}]")
    for key, value in capacity.items():
        qualified_name(str(key), f"{path}.capacity[{key}]")
        _quantity(f.mapping(value, f"{path}.capacity[{key}]").get("value"), f"{path}.capacity[{key}].value")
    for where, taint in _items(body.get("taints"), f"{path}.taints", 4):
        validate_label_key(f.string(taint.get("key"), f"{where}.key"), f"{where}.key")
        effect = f.string(taint.get("effect"), f"{where}.effect")
        if not effect:
            raise required(f"{where}.effect")
        if effect not in TAINT_EFFECTS:
            raise not_supported(f"{where}.effect", effect, TAINT_EFFECTS)
    _strings(body.get("bindingConditions"), f"{path}.bindingConditions")
    _strings(body.get("bindingFailureConditions"), f"{path}.bindingFailureConditions")
    f.boolean(body.get("allowMultipleAllocations"), f"{path}.allowMultipleAllocations")
    f.sequence(body.get("consumesCounters"), f"{path}.consumesCounters")
    chosen = _node_selection(body, f"{path}.", "device")
    if per_device:
        if len(chosen) != 1:
            detail = (
                "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
            )
            raise required(path, detail) if not chosen else invalid(path, "{" + ", ".join(chosen) + "}", detail)
    elif chosen:
        raise invalid(
            path,
            None,
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        )


def resource_slice(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    driver_name(f.string(spec.get("driver"), "spec.driver"), "spec.driver")
    pool = f.mapping(spec.get("pool"), "spec.pool")
    pool_name(f.string(pool.get("name"), "spec.pool.name"), "spec.pool.name")
    count = f.integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount")
    if count <= 0:
        raise invalid("spec.pool.resourceSliceCount", count, "must be greater than zero")
    generation = f.integer(pool.get("generation"), "spec.pool.generation")
    if generation < 0:
        raise invalid("spec.pool.generation", generation, "must be greater than or equal to zero")
    chosen = _node_selection(spec, "spec.", "slice")
    detail = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not chosen:
        raise required("spec", detail)
    if len(chosen) > 1:
        raise invalid("spec", "{" + ", ".join(chosen) + "}", detail + ", but multiple fields are set")
    devices = _items(spec.get("devices"), "spec.devices", None)
    per_device = spec.get("perDeviceNodeSelection") is True
    for where, device in devices:
        _device(device, where, per_device)
    if len(devices) > SLICE_DEVICES_MAX:
        raise too_many("spec.devices", len(devices), SLICE_DEVICES_MAX)
    _unique((f"{where}.name", str(device.get("name"))) for where, device in devices)
    f.sequence(spec.get("sharedCounters"), "spec.sharedCounters")


def resource_slice_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> None:
    """The fields of a slice that may not change: driver, pool name, node name."""
    spec, old_spec = f.mapping(obj.get("spec"), "spec"), f.mapping(old.get("spec"), "spec")
    pool, old_pool = f.mapping(spec.get("pool"), "spec.pool"), f.mapping(old_spec.get("pool"), "spec.pool")
    if pool.get("name") != old_pool.get("name"):
        raise immutable("spec.pool.name", pool.get("name"))
    for name in ("driver", "nodeName"):
        if spec.get(name) != old_spec.get(name):
            raise immutable(f"spec.{name}", spec.get(name))


# ---------------------------------------------------------------------------------------------------------
# Pods


def pod_resource_claims(spec: Mapping[str, Any], path: str) -> None:
    """A pod spec's ``resourceClaims`` and the containers' ``resources.claims`` that refer to them."""
    names: set[str] = set()
    for where, claim in _items(spec.get("resourceClaims"), f"{path}.resourceClaims", None):
        name = f.string(claim.get("name"), f"{where}.name")
        if not name:
            raise required(f"{where}.name")
        if name in names:
            raise duplicate(f"{where}.name", name)
        dns_label(name, f"{where}.name")
        names.add(name)
        by_name, by_template = claim.get("resourceClaimName"), claim.get("resourceClaimTemplateName")
        if by_name is not None and by_template is not None:
            raise invalid(
                where, dict(claim), "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
            )
        if by_name is None and by_template is None:
            raise invalid(where, dict(claim), "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        for key, value in (("resourceClaimName", by_name), ("resourceClaimTemplateName", by_template)):
            if value is not None:
                dns_subdomain(f.string(value, f"{where}.{key}"), f"{where}.{key}")
    for group in ("initContainers", "containers"):
        for i, container in enumerate(f.sequence(spec.get(group), f"{path}.{group}")):
            base = f"{path}.{group}[{i}].resources.claims"
            resources = f.mapping(f.mapping(container, f"{path}.{group}[{i}]").get("resources"), "")
            _container_claims(resources.get("claims"), base, names)


def _container_claims(value: object, path: str, pod_claims: set[str]) -> None:
    seen: set[str] = set()
    for i, (where, claim) in enumerate(_items(value, path, None)):
        name = f.string(claim.get("name"), f"{where}.name")
        request = f.string(claim.get("request"), f"{where}.request")
        if not name:
            raise required(where)
        if request:
            dns_label(request, f"{where}.request")
        key = f"{name}/{request}" if request else name
        if name in seen or key in seen or (not request and any(k.startswith(name + "/") for k in seen)):
            raise duplicate(f"{path}[{i}]", name if name in seen or not request else key)
        seen.add(key)
        if name not in pod_claims:
            known = ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            raise ObjectError(
                f"{path}[{i}]", f'Not found: "{name}": must be one of the names in pod.spec.resourceClaims{known}'
            )


BY_KIND: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "DeviceClass": device_class,
    "ResourceSlice": resource_slice,
    "ResourceClaim": resource_claim,
    "ResourceClaimTemplate": resource_claim_template,
}
