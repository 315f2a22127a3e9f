"""DRA objects (resource.k8s.io/v1): the typed views, the API server's validation with its texts, and CEL
selectors (compile errors at load time, verdicts and run-time errors per device)."""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest

from kubesched.api import dra_cel
from kubesched.api.dra import (
    ClaimNotCreated,
    DeviceAttribute,
    DeviceClass,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    claim_name,
    container_claims,
    pod_resource_claims,
)
from kubesched.api.errors import ObjectError
from kubesched.api.validation import validate_object
from tests.dra import (
    DRIVER,
    allocated,
    claim_dict,
    device_class_dict,
    device_dict,
    first_available_dict,
    opaque,
    request_dict,
    slice_dict,
    template_dict,
)
from tests.factories import pod_dict

# ---------------------------------------------------------------------------------------------------------
# Views


def test_a_slice_parses_typed_attributes_capacities_and_where_it_is_reachable() -> None:
    attributes = {"model": "a100", "cores": 8, "ok": True, "cuda": "v12.1.0", "other.io/x": "y"}
    raw = slice_dict("s", [device_dict("g0", attributes, {"memory": "80Gi"})], node="n1", generation=3, count=2)
    view = ResourceSlice.from_dict(raw)
    assert (view.driver, view.pool, view.generation, view.resource_slice_count, view.node_name) == (
        DRIVER,
        "n1",
        3,
        2,
        "n1",
    )
    device = view.devices[0]
    assert device.attributes["model"] == DeviceAttribute("string", "a100")
    assert device.attributes["cores"] == DeviceAttribute("int", 8)
    assert device.attributes["ok"] == DeviceAttribute("bool", True)
    assert device.attributes["cuda"] == DeviceAttribute("version", "12.1.0")
    assert device.capacity["memory"] == Fraction(80 * 2**30)
    # A constraint names attributes fully qualified; the driver's own domain may be omitted in the slice.
    assert device.attribute(f"{DRIVER}/model", DRIVER) == DeviceAttribute("string", "a100")
    assert device.attribute("other.io/x", DRIVER) == DeviceAttribute("string", "y")
    assert device.attribute("other.io/model", DRIVER) is None


def test_requests_get_the_api_servers_defaults() -> None:
    claim = ResourceClaim.from_dict(
        claim_dict(
            "c",
            request_dict("one"),
            request_dict("all", mode="All"),
            first_available_dict("fa", request_dict("big", count=2), request_dict("small")),
        )
    )
    one, every, prioritized = claim.spec.requests
    assert one.exactly is not None and (one.exactly.allocation_mode, one.exactly.count) == ("ExactCount", 1)
    assert every.exactly is not None and (every.exactly.allocation_mode, every.exactly.count) == ("All", 0)
    assert prioritized.exactly is None
    assert [(s.name, s.count) for s in prioritized.first_available] == [("big", 2), ("small", 1)]


def test_a_claim_with_an_allocation_knows_the_devices_it_holds() -> None:
    held = ResourceClaim.from_dict(
        claim_dict(
            "c",
            request_dict("r"),
            status={
                **allocated(("r", DRIVER, "n1", "g0")),
                "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}],
            },
        )
    )
    assert [str(d) for d in held.allocated_devices()] == [f"{DRIVER}/n1/g0"]
    assert held.is_reserved_for("u1") and not held.is_reserved_for("u2")
    assert (
        held.allocation is not None and held.allocation.to_dict() == allocated(("r", DRIVER, "n1", "g0"))["allocation"]
    )
    admin = ResourceClaim.from_dict(
        claim_dict("c", request_dict("r"), status=allocated(("r", DRIVER, "n1", "g0"), admin=True))
    )
    assert admin.allocated_devices() == ()  # admin access does not hold the device


def test_classes_and_templates() -> None:
    cls = DeviceClass.from_dict(device_class_dict("gpu", "true", config=[opaque()]))
    assert cls.selectors == ("true",) and cls.config[0].opaque["driver"] == DRIVER
    template = ResourceClaimTemplate.from_dict(template_dict("t", request_dict("r", count=2)))
    assert template.spec.requests[0].exactly is not None and template.spec.requests[0].exactly.count == 2


def test_pods_name_their_claims_directly_or_through_templates() -> None:
    pod = pod_dict(
        "p",
        spec={
            "resourceClaims": [
                {"name": "a", "resourceClaimName": "shared"},
                {"name": "b", "resourceClaimTemplateName": "t"},
            ]
        },
    )
    pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": "a"}, {"name": "b", "request": "r"}]
    a, b = pod_resource_claims(pod)
    assert claim_name(pod, a) == ("shared", False)
    with pytest.raises(ClaimNotCreated, match="ResourceClaim not created yet"):
        claim_name(pod, b)
    pod["status"] = {"resourceClaimStatuses": [{"name": "b", "resourceClaimName": "p-b-x"}]}
    assert claim_name(pod, b) == ("p-b-x", True)
    pod["status"] = {"resourceClaimStatuses": [{"name": "b"}]}
    assert claim_name(pod, b) == (None, True)  # no claim is needed for this entry
    with pytest.raises(ClaimNotCreated, match="none of the supported fields are set"):
        claim_name(pod, PodResourceClaim("c", None, None))
    assert [(c.name, c.request) for c in container_claims(pod)["c"]] == [("a", ""), ("b", "r")]


def test_a_view_names_the_field_it_cannot_read() -> None:
    raw = slice_dict("s", [device_dict("g0", {"model": "a100"})], node="n1")
    raw["spec"]["devices"][0]["attributes"]["model"] = {"int": "eight"}
    with pytest.raises(ObjectError) as err:
        ResourceSlice.from_dict(raw)
    assert err.value.path == "spec.devices[0].attributes.model.int"


# ---------------------------------------------------------------------------------------------------------
# Validation: one row per rule, with the API server's text


def _set(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    parent: Any = out
    steps = path.replace("[", ".[").split(".")
    for step in steps[:-1]:
        parent = parent[int(step[1:-1])] if step.startswith("[") else parent.setdefault(step, {})
    last = steps[-1]
    if last.startswith("["):
        parent[int(last[1:-1])] = value
    else:
        parent[last] = value
    return out


CLAIM = claim_dict("c", request_dict("r"))
SLICE = slice_dict("s", ["g0", "g1"], node="n1")
CLASS = device_class_dict("gpu", "true")
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

INVALID: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "request name",
        _set(CLAIM, "spec.devices.requests[0].name", "R_1"),
        "spec.devices.requests[0].name",
        f'Invalid value: "R_1": {LABEL_MSG}',
    ),
    (
        "no request type",
        _set(CLAIM, "spec.devices.requests[0]", {"name": "r"}),
        "spec.devices.requests[0]",
        "Required value: exactly one of `exactly` or `firstAvailable` is required",
    ),
    (
        "both request types",
        _set(CLAIM, "spec.devices.requests[0].firstAvailable", [{"name": "s", "deviceClassName": "gpu"}]),
        "spec.devices.requests[0]",
        "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
    ),
    (
        "class required",
        _set(CLAIM, "spec.devices.requests[0].exactly.deviceClassName", ""),
        "spec.devices.requests[0].exactly.deviceClassName",
        "Required value",
    ),
    (
        "negative count",
        _set(CLAIM, "spec.devices.requests[0].exactly.count", -1),
        "spec.devices.requests[0].exactly.count",
        "Invalid value: -1: must be greater than zero",
    ),
    (
        "count with All",
        _set(claim_dict("c", request_dict("r", mode="All")), "spec.devices.requests[0].exactly.count", 2),
        "spec.devices.requests[0].exactly.count",
        "Invalid value: 2: must not be specified when allocationMode is 'All'",
    ),
    (
        "unknown mode",
        _set(CLAIM, "spec.devices.requests[0].exactly.allocationMode", "Some"),
        "spec.devices.requests[0].exactly.allocationMode",
        'Unsupported value: "Some": supported values: "All", "ExactCount"',
    ),
    (
        "duplicate request",
        claim_dict("c", request_dict("r"), request_dict("r")),
        "spec.devices.requests[1].name",
        'Duplicate value: "r"',
    ),
    (
        "too many requests",
        claim_dict("c", *(request_dict(f"r{i}") for i in range(33))),
        "spec.devices.requests",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "constraint names no request",
        claim_dict(
            "c", request_dict("r"), constraints=[{"requests": ["x"], "matchAttribute": "gpu.example.com/model"}]
        ),
        "spec.devices.constraints[0].requests[0]",
        'Invalid value: "x": must be the name of a request in the claim or '
        "the name of a request and a subrequest separated by '/'",
    ),
    (
        "constraint without domain",
        claim_dict("c", request_dict("r"), constraints=[{"matchAttribute": "model"}]),
        "spec.devices.constraints[0].matchAttribute",
        'Invalid value: "model": must include a domain',
    ),
    (
        "empty constraint",
        claim_dict("c", request_dict("r"), constraints=[{"requests": ["r"]}]),
        "spec.devices.constraints[0].matchAttribute",
        "Required value",
    ),
    (
        "config without opaque",
        claim_dict("c", request_dict("r"), config=[{"requests": ["r"]}]),
        "spec.devices.config[0].opaque",
        "Required value",
    ),
    (
        "parameters not an object",
        claim_dict("c", request_dict("r"), config=[{"opaque": {"driver": DRIVER, "parameters": [1]}}]),
        "spec.devices.config[0].opaque.parameters",
        'Invalid value: "<value omitted>": must be a valid JSON object',
    ),
    (
        "selector not bool",
        _set(CLAIM, "spec.devices.requests[0].exactly.selectors", [{"cel": {"expression": "device.driver"}}]),
        "spec.devices.requests[0].exactly.selectors[0].cel.expression",
        'Invalid value: "device.driver": must evaluate to bool or the unknown type, not string',
    ),
    ("selector without cel", _set(CLASS, "spec.selectors", [{}]), "spec.selectors[0].cel", "Required value"),
    (
        "selector too long",
        _set(CLASS, "spec.selectors", [{"cel": {"expression": "true" + " " * 10240}}]),
        "spec.selectors[0].cel.expression",
        "Too long: may not be more than 10240 bytes",
    ),
    (
        "class extended resource",
        _set(CLASS, "spec.extendedResourceName", "cpu"),
        "spec.extendedResourceName",
        'Invalid value: "cpu": must be a valid extended resource name',
    ),
    (
        "slice duplicate device",
        slice_dict("s", ["g0", "g0"], node="n1"),
        "spec.devices[1].name",
        'Duplicate value: "g0"',
    ),
    (
        "slice without node selection",
        slice_dict("s", ["g0"]),
        "spec",
        "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
    ),
    (
        "slice with two node selections",
        _set(SLICE, "spec.allNodes", True),
        "spec",
        'Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
        "`perDeviceNodeSelection` is required, but multiple fields are set",
    ),
    (
        "allNodes false",
        _set(slice_dict("s", ["g0"], all_nodes=True), "spec.allNodes", False),
        "spec.allNodes",
        "Invalid value: false: must be either unset or set to true",
    ),
    (
        "slice count",
        _set(SLICE, "spec.pool.resourceSliceCount", 0),
        "spec.pool.resourceSliceCount",
        "Invalid value: 0: must be greater than zero",
    ),
    (
        "negative generation",
        _set(SLICE, "spec.pool.generation", -1),
        "spec.pool.generation",
        "Invalid value: -1: must be greater than or equal to zero",
    ),
    (
        "attribute with two values",
        _set(SLICE, "spec.devices[0].attributes", {"a": {"int": 1, "bool": True}}),
        "spec.devices[0].attributes[a]",
        'Invalid value: {"int":1,"bool":true}: exactly one value must be specified',
    ),
    (
        "bad version",
        _set(SLICE, "spec.devices[0].attributes", {"v": {"version": "1.02.3"}}),
        "spec.devices[0].attributes[v].version",
        'Invalid value: "1.02.3": must be a string compatible with semver.org spec 2.0.0',
    ),
    (
        "bad attribute name",
        _set(SLICE, "spec.devices[0].attributes", {"a-b": {"int": 1}}),
        "spec.devices[0].attributes[a-b]",
        'Invalid value: "a-b": a valid C identifier must start with alphabetic '
        "character or '_', followed by a string of alphanumeric characters or '_' "
        "(e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation "
        "is '[A-Za-z_][A-Za-z0-9_]*')",
    ),
    (
        "bad capacity",
        _set(SLICE, "spec.devices[0].capacity", {"memory": {"value": "lots"}}),
        "spec.devices[0].capacity[memory].value",
        "invalid quantity",
    ),
    (
        "too many devices",
        slice_dict("s", [f"g{i}" for i in range(129)], node="n1"),
        "spec.devices",
        "Too many: 129: must have at most 128 items",
    ),
    (
        "reserved without allocation",
        claim_dict("c", request_dict("r"), status={"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}),
        "status.reservedFor",
        "Forbidden: may not be specified when `allocated` is not set",
    ),
    (
        "reserved by too many",
        claim_dict(
            "c",
            request_dict("r"),
            status={
                **allocated(("r", DRIVER, "n1", "g0")),
                "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(257)],
            },
        ),
        "status.reservedFor",
        "Too many: 257: must have at most 256 items",
    ),
    (
        "allocation names no request",
        claim_dict("c", request_dict("r"), status=allocated(("x", DRIVER, "n1", "g0"))),
        "status.allocation.devices.results[0].request",
        'Invalid value: "x": must be the name of a request in the claim '
        "or the name of a request and a subrequest separated by '/'",
    ),
]


@pytest.mark.parametrize(("name", "obj", "path", "message"), INVALID, ids=[row[0] for row in INVALID])
def test_validation_refuses_with_the_api_servers_text(name: str, obj: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ObjectError) as err:
        validate_object(obj)
    assert err.value.path == path
    assert message in err.value.reason


@pytest.mark.parametrize(
    "obj",
    [
        CLAIM,
        SLICE,
        CLASS,
        template_dict("t", request_dict("r")),
        claim_dict(
            "c",
            first_available_dict("r", request_dict("a", count=2), request_dict("b")),
            request_dict("all", mode="All"),
            constraints=[{"requests": ["r/a", "all"], "matchAttribute": "gpu.example.com/model"}],
            config=[{"requests": ["r/b"], **opaque()}],
            status={
                **allocated(("r/b", DRIVER, "n1", "g0")),
                "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}],
            },
        ),
        slice_dict(
            "s",
            [device_dict("g0", {"model": "a100", "v": "v1.0.0-rc.1+b"}, {"memory": "1Gi"})],
            node_selector={
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
            },
        ),
    ],
    ids=["claim", "slice", "class", "template", "claim-with-everything", "slice-by-selector"],
)
def test_valid_objects_pass(obj: dict[str, Any]) -> None:
    validate_object(obj)


POD_INVALID = [
    (
        [{"name": "a"}],
        "spec.resourceClaims[0]",
        'Invalid value: {"name":"a"}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`',
    ),
    (
        [{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}],
        "spec.resourceClaims[0]",
        "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
    ),
    (
        [{"name": "a", "resourceClaimName": "x"}, {"name": "a", "resourceClaimName": "y"}],
        "spec.resourceClaims[1].name",
        'Duplicate value: "a"',
    ),
]


@pytest.mark.parametrize(("claims", "path", "message"), POD_INVALID)
def test_pod_resource_claims_are_validated(claims: list[dict], path: str, message: str) -> None:
    with pytest.raises(ObjectError) as err:
        validate_object(pod_dict("p", spec={"resourceClaims": claims}))
    assert err.value.path == path and message in err.value.reason


def test_a_container_may_only_use_claims_of_its_pod() -> None:
    pod = pod_dict("p", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "x"}]})
    pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": "tpu"}]
    with pytest.raises(ObjectError) as err:
        validate_object(pod)
    assert err.value.path == "spec.containers[0].resources.claims[0]"
    assert err.value.reason == 'Not found: "tpu": must be one of the names in pod.spec.resourceClaims: gpu'


# ---------------------------------------------------------------------------------------------------------
# CEL selectors


def _device(**attributes: object) -> Any:
    raw = slice_dict("s", [device_dict("g0", attributes, {"memory": "80Gi", "other.io/slots": "4"})], node="n1")
    return ResourceSlice.from_dict(raw).devices[0]


DEVICE_ATTRS = {"model": "a100", "cores": 8, "ok": True, "cuda": "v12.1.0", "other.io/x": "y"}

VERDICTS: list[tuple[str, bool]] = [
    ('device.driver == "gpu.example.com"', True),
    ('device.attributes["gpu.example.com"].model == "a100"', True),
    ('device.attributes["gpu.example.com"].cores >= 8 && device.attributes["gpu.example.com"].ok', True),
    ('device.attributes["other.io"].x == "y"', True),
    ('device.attributes["gpu.example.com"].cuda.isGreaterThan(semver("12.0.0"))', True),
    ('device.attributes["gpu.example.com"].cuda.compareTo(semver("12.1.0")) == 0', True),
    ('device.attributes["gpu.example.com"].cuda == semver("12.1.0")', True),
    ('device.attributes["gpu.example.com"].cuda.major() == 12', True),
    ('semver("v1.2", true).isLessThan(semver("1.10.0"))', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.0.0-alpha.2").isGreaterThan(semver("1.0.0-alpha.10"))', False),
    ('isSemver("1.2") || isSemver("01.2.3")', False),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0', True),
    ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("81Gi"))', False),
    ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
    ('device.capacity["other.io"].slots.asInteger() == 4', True),
    ('quantity("1.5").isInteger()', False),
    ('quantity("1").add(2).sub(quantity("500m")).asApproximateFloat() == 2.5', True),
    ('sign(quantity("-1")) == -1 && isQuantity("10Gi") && !isQuantity("ten")', True),
    ('has(device.attributes["other.example.com"].x)', False),
    ('cel.bind(a, device.attributes["gpu.example.com"], a.model.startsWith("a") && a.cores == 8)', True),
    ('device.attributes["gpu.example.com"].model.matches("^a[0-9]+$")', True),
    ('"a100-80g".find("[0-9]+") == "100"', True),
    ('device.attributes["gpu.example.com"].model.lowerAscii() == "a100"', True),
]


@pytest.mark.parametrize(("expression", "expected"), VERDICTS)
def test_selector_verdicts(expression: str, expected: bool) -> None:
    compiled = dra_cel.compile_selector(expression)
    assert compiled.error is None
    assert dra_cel.evaluate(compiled, _device(**DEVICE_ATTRS), DRIVER) is expected


COMPILE_ERRORS = [
    ("device.driver", "must evaluate to bool or the unknown type, not string"),
    ('device.capacity["x"]', "must evaluate to bool or the unknown type, not map(string, map(string, dyn))"),
    ("1 +", "compilation failed: ERROR: <input>:1:4: Syntax error"),
    ("device.foo == 1", "compilation failed: ERROR: <input>:1:7: undefined field 'foo'\n | device.foo == 1"),
    ("device.allowMultipleAllocations", "undefined field 'allowMultipleAllocations'"),
    ('device.driver == 1 + "a"', "found no matching overload for '_+_'"),
]


@pytest.mark.parametrize(("expression", "message"), COMPILE_ERRORS)
def test_selectors_that_do_not_compile(expression: str, message: str) -> None:
    compiled = dra_cel.compile_selector(expression)
    assert compiled.error is not None and message in compiled.error


RUNTIME_ERRORS = [
    # Worded as kube-scheduler's CEL reports them.
    ('device.attributes["gpu.example.com"].missing == 1', "no such key: missing"),
    ('device.attributes["gpu.example.com"]["missing"] == 1', "no such key: missing"),
    ('device.attributes["gpu.example.com"].model', "CEL result of type string could not be converted to bool"),
    ('device.attributes["gpu.example.com"].model > 3', "no such overload"),
    ('int(device.attributes["gpu.example.com"].model) == 1', "type conversion error from 'string' to 'int'"),
    ("[1, 2][5] == 1", "index '5' out of range in list size '2'"),
    ('1 / (device.attributes["gpu.example.com"].model == "x" ? 1 : 0) == 1', "division by zero"),
    ('device.attributes["gpu.example.com"].cuda.isGreaterThan(quantity("1"))', "no such overload: isGreaterThan"),
    ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
    (
        "[" + ",".join(map(str, range(120))) + "].all(a, [" + ",".join(map(str, range(120))) + "].all(b, true))",
        "Iteration budget exceeded",
    ),
]


@pytest.mark.parametrize(("expression", "message"), RUNTIME_ERRORS)
def test_a_selector_failing_on_a_device_is_that_devices_error(expression: str, message: str) -> None:
    compiled = dra_cel.compile_selector(expression)
    assert compiled.error is None
    with pytest.raises(dra_cel.SelectorRuntimeError) as err:
        dra_cel.evaluate(compiled, _device(**DEVICE_ATTRS), DRIVER)
    assert message in err.value.detail


def test_compiled_selectors_are_cached() -> None:
    assert dra_cel.compile_selector("true") is dra_cel.compile_selector("true")
    assert dra_cel.compile_selector("true") is not dra_cel.compile_selector("true", consumable_capacity=True)
    assert dra_cel.compile_selector("device.allowMultipleAllocations", consumable_capacity=True).error is None
