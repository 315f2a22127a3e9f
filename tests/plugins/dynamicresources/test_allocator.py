"""The structured allocator, one row per behaviour (upstream's allocator test table, in spirit), and a
property: whatever it allocates keeps every rule, and it finds an allocation whenever one exists."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.plugins.dynamicresources.allocator import (
    AllocationError,
    Allocator,
    Features,
    allocated_devices,
)
from kubesched.plugins.dynamicresources.pools import SliceIndex
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
)

GPU = device_class_dict("gpu", f'device.driver == "{DRIVER}"')
NODE = "n1"
LABELS = {"zone": "a", "kubernetes.io/hostname": NODE}


def allocate(
    claims: Sequence[dict],
    slices: Iterable[dict],
    *,
    classes: Iterable[dict] = (GPU,),
    in_use: Iterable[dict] = (),
    node: str = NODE,
    labels: Mapping[str, str] = LABELS,
    features: Features | None = None,
) -> list[dict] | None:
    """The allocation results (``status.allocation`` dicts) of ``claims`` on ``node``, or None."""
    by_name = {c["metadata"]["name"]: DeviceClass.from_dict(c) for c in classes}
    held = allocated_devices(ResourceClaim.from_dict(c) for c in in_use)
    allocator = Allocator(
        features or Features(), held, by_name.get, SliceIndex(ResourceSlice.from_dict(s) for s in slices)
    )
    results = allocator.allocate(node, labels, [ResourceClaim.from_dict(c) for c in claims])
    return None if results is None else [r.to_dict() for r in results]


def devices_of(result: list[dict] | None) -> list[list[tuple[str, str]]] | None:
    """(request, device) per claim, in allocation order."""
    if result is None:
        return None
    return [[(r["request"], r["device"]) for r in a["devices"]["results"]] for a in result]


LOCAL = slice_dict("local", ["g0", "g1", "g2"], node=NODE)
OTHER_NODE = slice_dict("other", ["g0"], node="n2")
MODELS = slice_dict(
    "models",
    [device_dict("g0", {"model": "a"}), device_dict("g1", {"model": "b"}), device_dict("g2", {"model": "b"})],
    node=NODE,
)

ROWS: list[tuple[str, list[dict], list[dict], dict[str, Any], list[list[tuple[str, str]]] | None]] = [
    ("one device", [claim_dict("c", request_dict("r"))], [LOCAL], {}, [[("r", "g0")]]),
    ("two devices", [claim_dict("c", request_dict("r", count=2))], [LOCAL], {}, [[("r", "g0"), ("r", "g1")]]),
    ("more than exist", [claim_dict("c", request_dict("r", count=4))], [LOCAL], {}, None),
    ("devices on another node only", [claim_dict("c", request_dict("r"))], [OTHER_NODE], {}, None),
    (
        "in use by an allocated claim",
        [claim_dict("c", request_dict("r"))],
        [LOCAL],
        {"in_use": [claim_dict("old", request_dict("r"), status=allocated(("r", DRIVER, NODE, "g0")))]},
        [[("r", "g1")]],
    ),
    (
        "admin access does not hold a device",
        [claim_dict("c", request_dict("r"))],
        [LOCAL],
        {"in_use": [claim_dict("old", request_dict("r"), status=allocated(("r", DRIVER, NODE, "g0"), admin=True))]},
        [[("r", "g0")]],
    ),
    (
        "request selector",
        [claim_dict("c", request_dict("r", selectors=['device.attributes["gpu.example.com"].model == "b"']))],
        [MODELS],
        {},
        [[("r", "g1")]],
    ),
    (
        "class selector",
        [claim_dict("c", request_dict("r", "b-only"))],
        [MODELS],
        {"classes": [device_class_dict("b-only", 'device.attributes["gpu.example.com"].model == "b"')]},
        [[("r", "g1")]],
    ),
    (
        "all devices",
        [claim_dict("c", request_dict("r", mode="All"))],
        [MODELS],
        {},
        [[("r", "g0"), ("r", "g1"), ("r", "g2")]],
    ),
    (
        "all matching devices",
        [claim_dict("c", request_dict("r", "b-only", mode="All"))],
        [MODELS],
        {"classes": [device_class_dict("b-only", 'device.attributes["gpu.example.com"].model == "b"')]},
        [[("r", "g1"), ("r", "g2")]],
    ),
    (
        "all, but one is in use",
        [claim_dict("c", request_dict("r", mode="All"))],
        [LOCAL],
        {"in_use": [claim_dict("old", request_dict("r"), status=allocated(("r", DRIVER, NODE, "g1")))]},
        None,
    ),
    (
        "all of none",
        [claim_dict("c", request_dict("r", "b-only", mode="All"))],
        [LOCAL],
        {"classes": [device_class_dict("b-only", "false")]},
        None,
    ),
    (
        "first available: the first that fits",
        [claim_dict("c", first_available_dict("r", request_dict("big", count=5), request_dict("small", count=2)))],
        [LOCAL],
        {},
        [[("r/small", "g0"), ("r/small", "g1")]],
    ),
    (
        "first available: the first when it fits",
        [claim_dict("c", first_available_dict("r", request_dict("big", count=3), request_dict("small")))],
        [LOCAL],
        {},
        [[("r/big", "g0"), ("r/big", "g1"), ("r/big", "g2")]],
    ),
    (
        "match attribute backtracks",
        [
            claim_dict(
                "c", request_dict("a"), request_dict("b"), constraints=[{"matchAttribute": "gpu.example.com/model"}]
            )
        ],
        [MODELS],
        {},
        [[("a", "g1"), ("b", "g2")]],
    ),
    (
        "match attribute of one request only",
        [
            claim_dict(
                "c",
                request_dict("a"),
                request_dict("b"),
                constraints=[{"requests": ["b"], "matchAttribute": "gpu.example.com/model"}],
            )
        ],
        [MODELS],
        {},
        [[("a", "g0"), ("b", "g1")]],
    ),
    (
        "match attribute no device has",
        [claim_dict("c", request_dict("a"), constraints=[{"matchAttribute": "gpu.example.com/missing"}])],
        [MODELS],
        {},
        None,
    ),
    (
        "two claims get different devices",
        [claim_dict("c1", request_dict("r")), claim_dict("c2", request_dict("r"))],
        [LOCAL],
        {},
        [[("r", "g0")], [("r", "g1")]],
    ),
    (
        "admin access takes a device in use",
        [claim_dict("c", request_dict("r", admin=True))],
        [LOCAL],
        {"in_use": [claim_dict("old", request_dict("r"), status=allocated(("r", DRIVER, NODE, "g0")))]},
        [[("r", "g0")]],
    ),
    (
        "admin access: not the same device twice in a claim",
        [claim_dict("c", request_dict("r", admin=True, count=2))],
        [slice_dict("one", ["g0"], node=NODE)],
        {},
        None,
    ),
    (
        "newest generation only",
        [claim_dict("c", request_dict("r"))],
        [
            slice_dict("old", ["g0"], node=NODE, pool="p", generation=1),
            slice_dict("new", ["g9"], node=NODE, pool="p", generation=2),
        ],
        {},
        [[("r", "g9")]],
    ),
    (
        "an incomplete pool still serves exact counts",
        [claim_dict("c", request_dict("r"))],
        [slice_dict("part", ["g0"], node=NODE, count=2)],
        {},
        [[("r", "g0")]],
    ),
    (
        "pools in driver and pool order",
        [claim_dict("c", request_dict("r"))],
        [slice_dict("z", ["g5"], node=NODE, pool="zz"), slice_dict("a", ["g7"], node=NODE, pool="aa")],
        {},
        [[("r", "g7")]],
    ),
    (
        "network-attached devices",
        [claim_dict("c", request_dict("r"))],
        [slice_dict("net", ["g0"], all_nodes=True, pool="net")],
        {},
        [[("r", "g0")]],
    ),
    (
        "devices by node selector: not this node",
        [claim_dict("c", request_dict("r"))],
        [
            slice_dict(
                "sel",
                ["g0"],
                pool="sel",
                node_selector={
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]
                },
            )
        ],
        {},
        None,
    ),
]


@pytest.mark.parametrize(("name", "claims", "slices", "options", "expected"), ROWS, ids=[r[0] for r in ROWS])
def test_allocation(
    name: str,
    claims: list[dict],
    slices: list[dict],
    options: dict[str, Any],
    expected: list[list[tuple[str, str]]] | None,
) -> None:
    assert devices_of(allocate(claims, slices, **options)) == expected


ERRORS: list[tuple[str, list[dict], list[dict], dict[str, Any], str]] = [
    (
        "missing class",
        [claim_dict("c", request_dict("r", "tpu"))],
        [LOCAL],
        {},
        'claim default/c, request r: could not retrieve device class tpu: deviceclass.resource.k8s.io "tpu" not found',
    ),
    (
        "selector failing at run time",
        [claim_dict("c", request_dict("r"))],
        [MODELS],
        {"classes": [device_class_dict("gpu", 'device.attributes["gpu.example.com"].cores > 2')]},
        "class gpu: selector #0: CEL runtime error: no such key: cores",
    ),
    (
        "claim selector failing at run time",
        [claim_dict("c", request_dict("r", selectors=['device.attributes["gpu.example.com"].model']))],
        [MODELS],
        {},
        "claim default/c: selector #0: CEL runtime error: CEL result of type string could not be converted to bool: "
        "type conversion error from 'string' to 'bool'",
    ),
    (
        "selector that does not compile",
        [claim_dict("c", request_dict("r"))],
        [LOCAL],
        {"classes": [device_class_dict("gpu", "device.driver")]},
        "class gpu: selector #0: CEL compile error: must evaluate to bool or the unknown type, not string",
    ),
    (
        "all devices of an incomplete pool",
        [claim_dict("c", request_dict("r", mode="All"))],
        [slice_dict("part", ["g0"], node=NODE, count=2)],
        {},
        "claim default/c, request r: asks for all devices, but resource pool gpu.example.com/n1 is currently being "
        "updated",
    ),
    (
        "duplicate devices in a pool",
        [claim_dict("c", request_dict("r"))],
        [slice_dict("a", ["g0"], node=NODE, pool="p", count=2), slice_dict("b", ["g0"], node=NODE, pool="p", count=2)],
        {},
        "pool p is invalid: duplicate device name g0",
    ),
    (
        "more than a claim may hold",
        [claim_dict("c", request_dict("a", count=20), request_dict("b", count=13))],
        [LOCAL],
        {},
        "claim default/c: number of requested devices 33 exceeds the claim limit of 32",
    ),
    (
        "a constraint that all devices cannot keep",
        [claim_dict("c", request_dict("r", mode="All"), constraints=[{"matchAttribute": "gpu.example.com/model"}])],
        [MODELS],
        {},
        "claim default/c, request r: cannot add device gpu.example.com/n1/g1 because a claim constraint would not be "
        "satisfied",
    ),
    (
        "prioritized list switched off",
        [claim_dict("c", first_available_dict("r", request_dict("a")))],
        [LOCAL],
        {"features": Features(prioritized_list=False)},
        "claim default/c, request r: has subrequests, but the DRAPrioritizedList feature is disabled",
    ),
    (
        "admin access switched off",
        [claim_dict("c", request_dict("r", admin=False))],
        [LOCAL],
        {"features": Features(admin_access=False)},
        "claim default/c, request r: admin access is requested, but the feature is disabled",
    ),
]


@pytest.mark.parametrize(("name", "claims", "slices", "options", "message"), ERRORS, ids=[r[0] for r in ERRORS])
def test_allocation_errors(
    name: str, claims: list[dict], slices: list[dict], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(AllocationError) as err:
        allocate(claims, slices, **options)
    assert str(err.value) == message


def test_the_result_carries_configuration_and_admin_access() -> None:
    cls = device_class_dict("gpu", "true", config=[opaque(mode="class")])
    claim = claim_dict(
        "c",
        request_dict("a", admin=True),
        first_available_dict("b", request_dict("x", count=9), request_dict("y")),
        config=[opaque(mode="all"), {"requests": ["b/y"], **opaque(mode="y")}],
    )
    result = allocate([claim], [LOCAL], classes=[cls])
    assert result is not None
    devices = result[0]["devices"]
    assert devices["results"] == [
        {"request": "a", "driver": DRIVER, "pool": NODE, "device": "g0", "adminAccess": True},
        {"request": "b/y", "driver": DRIVER, "pool": NODE, "device": "g1"},
    ]  # admin access still takes g0 here
    assert [(c["source"], c.get("requests"), c["opaque"]["parameters"]["mode"]) for c in devices["config"]] == [
        ("FromClass", ["a", "b/y"], "class"),
        ("FromClaim", None, "all"),
        ("FromClaim", ["b/y"], "y"),
    ]


def test_the_node_selector_says_where_the_devices_are() -> None:
    local = allocate([claim_dict("c", request_dict("r"))], [LOCAL])
    assert local is not None and local[0]["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}]
    }
    anywhere = allocate([claim_dict("c", request_dict("r"))], [slice_dict("net", ["g0"], all_nodes=True)])
    assert anywhere is not None and "nodeSelector" not in anywhere[0]
    zone = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
    zonal = allocate(
        [claim_dict("c", request_dict("r", count=2))],
        [
            slice_dict("z1", ["g0"], pool="z1", node_selector=zone),
            slice_dict("z2", ["g1"], pool="z2", node_selector=zone),
        ],
    )
    assert zonal is not None and zonal[0]["nodeSelector"] == zone


def test_selector_verdicts_are_kept_on_the_device() -> None:
    """A selector meets each device once, whichever node or cycle asks again."""
    slices = [ResourceSlice.from_dict(slice_dict("net", ["g0", "g1"], all_nodes=True))]
    classes = {"gpu": DeviceClass.from_dict(GPU)}
    allocator = Allocator(Features(), frozenset(), classes.get, SliceIndex(slices))
    claim = ResourceClaim.from_dict(claim_dict("c", request_dict("r")))
    assert allocator.allocate("n1", LABELS, [claim]) is not None
    device = slices[0].devices[0]
    assert device.memo[(GPU["spec"]["selectors"][0]["cel"]["expression"], False)] is True
    device.memo[(GPU["spec"]["selectors"][0]["cel"]["expression"], False)] = False  # as if it had not matched
    result = allocator.allocate("n2", {}, [claim])
    assert result is not None and result[0].results[0].device == "g1"


# ---------------------------------------------------------------------------------------------------------
# Property: every allocation keeps the rules; an allocation exists only if one is found


SELECTORS = {"any": None, "model-a": "a", "model-b": "b"}


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[dict], list[dict], list[dict]]:
    devices = draw(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.booleans()), min_size=0, max_size=5))
    slice_ = slice_dict(
        "s", [device_dict(f"g{i}", {"model": model}) for i, (model, _) in enumerate(devices)], node=NODE
    )
    in_use = [
        claim_dict(f"old{i}", request_dict("r"), status=allocated(("r", DRIVER, NODE, f"g{i}")))
        for i, (_, used) in enumerate(devices)
        if used
    ]
    claims = []
    for c in range(draw(st.integers(1, 2))):
        requests = [
            request_dict(f"r{q}", draw(st.sampled_from(sorted(SELECTORS))), count=draw(st.integers(1, 2)))
            for q in range(draw(st.integers(1, 2)))
        ]
        constraints = [{"matchAttribute": "gpu.example.com/model"}] if draw(st.booleans()) else []
        claims.append(claim_dict(f"c{c}", *requests, constraints=constraints))
    return claims, [slice_], in_use


PROPERTY_CLASSES = [
    device_class_dict(name, "true" if model is None else f'device.attributes["gpu.example.com"].model == "{model}"')
    for name, model in SELECTORS.items()
]


def _slots(claims: list[dict]) -> list[tuple[int, str, str | None]]:
    """(claim index, request name, wanted model) for each device to allocate."""
    return [
        (c, r["name"], SELECTORS[r["exactly"]["deviceClassName"]])
        for c, claim in enumerate(claims)
        for r in claim["spec"]["devices"]["requests"]
        for _ in range(r["exactly"]["count"])
    ]


def _keeps_rules(
    claims: list[dict], models: dict[str, str], busy: set[str], chosen: list[tuple[int, str, str]]
) -> bool:
    """Devices free and distinct, each matching its class, claims' matchAttribute kept."""
    names = [device for _, _, device in chosen]
    if len(set(names)) != len(names) or busy & set(names):
        return False
    slots = _slots(claims)
    if sorted((c, r) for c, r, _ in chosen) != sorted((c, r) for c, r, _ in slots):
        return False
    wanted = {(c, r): m for c, r, m in slots}
    if any(wanted[(c, r)] not in (None, models[d]) for c, r, d in chosen):
        return False
    for c, claim in enumerate(claims):
        if claim["spec"]["devices"].get("constraints") and len({models[d] for cc, _, d in chosen if cc == c}) > 1:
            return False
    return True


def _exists(claims: list[dict], models: dict[str, str], busy: set[str]) -> bool:
    slots = _slots(claims)
    free = [d for d in models if d not in busy]
    return any(
        _keeps_rules(claims, models, busy, [(c, r, d) for (c, r, _), d in zip(slots, pick, strict=True)])
        for pick in itertools.permutations(free, len(slots))
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_allocations_keep_every_rule_and_are_found_when_they_exist(
    scenario: tuple[list[dict], list[dict], list[dict]],
) -> None:
    claims, slices, in_use = scenario
    models = {d["name"]: d["attributes"]["model"]["string"] for d in slices[0]["spec"]["devices"]}
    busy = {c["status"]["allocation"]["devices"]["results"][0]["device"] for c in in_use}
    try:
        result = allocate(claims, slices, classes=PROPERTY_CLASSES, in_use=in_use)
    except AllocationError as err:  # only the claim limit could refuse, and these claims stay below it
        pytest.fail(str(err))
    if result is None:
        assert not _exists(claims, models, busy)
        return
    chosen = [(c, r["request"], r["device"]) for c, a in enumerate(result) for r in a["devices"]["results"]]
    assert _keeps_rules(claims, models, busy, chosen)
