"""Typed, read-only views of Dynamic Resource Allocation objects (``resource.k8s.io/v1``).

DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate, parsed once from the plain dicts the
cluster stores, and the parts of a pod that name claims (``spec.resourceClaims``, containers'
``resources.claims``, ``status.resourceClaimStatuses``). The structured allocator reads these views on
every node of every cycle of a pod with claims, so what it asks for is precomputed here: attribute values
with their type, capacities as exact quantities, node selectors parsed, request defaults applied
(``allocationMode: ExactCount`` and ``count: 1``, as the API server defaults them).

The API server's own checks live in :mod:`kubesched.api.dra_validation`; these views assume a valid
object and only refuse what they cannot read (a wrong type), with the field path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.api import fields as f
from kubesched.api.errors import ObjectError
from kubesched.api.labels import NodeSelector
from kubesched.api.objects import ObjectMeta
from kubesched.api.quantity import parse_quantity

GROUP = "resource.k8s.io"
API_VERSION = "resource.k8s.io/v1"
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")

EXACT_COUNT = "ExactCount"
ALL = "All"
ALLOCATION_MODES = (ALL, EXACT_COUNT)
CONFIG_FROM_CLASS = "FromClass"
CONFIG_FROM_CLAIM = "FromClaim"

#: resourceapi limits (types.go) the allocator and validation share.
ALLOCATION_RESULTS_MAX_SIZE = 32
RESERVED_FOR_MAX_SIZE = 256
#: A namespace must carry this label (value "true") for its claims to ask for admin access.
ADMIN_ACCESS_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"

ATTRIBUTE_KINDS = ("int", "bool", "string", "version")


def _path(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _strings(value: object, path: str) -> tuple[str, ...]:
    return tuple(f.string(item, f"{path}[{i}]") for i, item in enumerate(f.sequence(value, path)))


def _maps(value: object, path: str) -> tuple[Mapping[str, Any], ...]:
    return tuple(f.mapping(item, f"{path}[{i}]") for i, item in enumerate(f.sequence(value, path)))


def _node_selector(value: object, path: str) -> NodeSelector | None:
    if value is None:
        return None
    try:
        return NodeSelector.from_dict(f.mapping(value, path))
    except ObjectError as err:
        raise err.under(path) from None


def _optional_bool(value: object, path: str) -> bool | None:
    return None if value is None else f.boolean(value, path)


def _quantity(value: object, path: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ObjectError(path, f"expected a quantity, got {f.describe(value)}")
    try:
        return parse_quantity(value)
    except ObjectError as err:
        raise ObjectError(path, err.reason) from None


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """``domain/id`` -> (domain, id); a name without a domain belongs to ``default_domain`` (the driver)."""
    domain, slash, ident = name.partition("/")
    return (domain, ident) if slash else (default_domain, name)


# ---------------------------------------------------------------------------------------------------------
# ResourceSlice


@dataclass(frozen=True, slots=True)
class DeviceAttribute:
    """One typed attribute value: ``kind`` is int, bool, string or version (a semver string)."""

    kind: str
    value: int | bool | str

    @classmethod
    def from_dict(cls, raw: object, path: str) -> DeviceAttribute:
        body = f.mapping(raw, path)
        present = [kind for kind in ATTRIBUTE_KINDS if body.get(kind) is not None]
        if len(present) != 1:
            raise ObjectError(path, "exactly one value must be specified")
        kind = present[0]
        where = _path(path, kind)
        value: int | bool | str
        if kind == "int":
            value = f.integer(body[kind], where)
        elif kind == "bool":
            value = f.boolean(body[kind], where)
        else:
            value = f.string(body[kind], where)
        return cls(kind, value)


@dataclass(frozen=True, slots=True, eq=False)
class Device:
    """One device of a slice. ``memo`` keeps selector results by expression for as long as this view
    lives (a slice update parses new views), so each expression meets each device once."""

    name: str
    attributes: Mapping[str, DeviceAttribute]
    capacity: Mapping[str, Fraction]
    consumes_counters: tuple[Mapping[str, Any], ...] = ()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    #: ``nodeSelector`` as written (an allocation's node selector copies it).
    node_selector_raw: Mapping[str, Any] | None = None
    all_nodes: bool = False
    binding_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    allow_multiple_allocations: bool | None = None
    taints: tuple[Mapping[str, Any], ...] = ()
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    def attribute(self, fully_qualified: str, driver: str) -> DeviceAttribute | None:
        """The attribute a constraint names (``domain/id``); the driver's own domain may be left out in
        the slice, as the allocator's lookup allows."""
        found = self.attributes.get(fully_qualified)
        if found is not None:
            return found
        domain, slash, ident = fully_qualified.partition("/")
        if not slash or domain != driver:
            return None
        return self.attributes.get(ident)

    @classmethod
    def from_dict(cls, raw: object, path: str) -> Device:
        body = f.mapping(raw, path)
        attrs_path, cap_path = _path(path, "attributes"), _path(path, "capacity")
        attributes = {
            str(k): DeviceAttribute.from_dict(v, f"{attrs_path}.{k}")
            for k, v in f.mapping(body.get("attributes"), attrs_path).items()
        }
        capacity = {
            str(k): _quantity(f.mapping(v, f"{cap_path}.{k}").get("value"), f"{cap_path}.{k}.value")
            for k, v in f.mapping(body.get("capacity"), cap_path).items()
        }
        return cls(
            name=f.string(body.get("name"), _path(path, "name")),
            attributes=attributes,
            capacity=capacity,
            consumes_counters=_maps(body.get("consumesCounters"), _path(path, "consumesCounters")),
            node_name=None if body.get("nodeName") is None else f.string(body["nodeName"], _path(path, "nodeName")),
            node_selector=_node_selector(body.get("nodeSelector"), _path(path, "nodeSelector")),
            node_selector_raw=body.get("nodeSelector"),
            all_nodes=f.boolean(body.get("allNodes"), _path(path, "allNodes")),
            binding_conditions=_strings(body.get("bindingConditions"), _path(path, "bindingConditions")),
            binds_to_node=f.boolean(body.get("bindsToNode"), _path(path, "bindsToNode")),
            allow_multiple_allocations=_optional_bool(
                body.get("allowMultipleAllocations"), _path(path, "allowMultipleAllocations")
            ),
            taints=_maps(body.get("taints"), _path(path, "taints")),
        )


@dataclass(frozen=True, slots=True, eq=False)
class ResourceSlice:
    raw: Mapping[str, Any] = field(repr=False)
    name: str
    driver: str
    pool: str
    generation: int
    resource_slice_count: int
    #: Exactly one of these four says which nodes reach the devices (validation makes sure).
    node_name: str | None
    node_selector: NodeSelector | None
    all_nodes: bool
    per_device_node_selection: bool
    devices: tuple[Device, ...]
    #: ``spec.nodeSelector`` as written (an allocation's node selector copies it).
    node_selector_raw: Mapping[str, Any] | None = None

    @property
    def has_binding_conditions(self) -> bool:
        return any(d.binding_conditions for d in self.devices)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ResourceSlice:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        spec = f.mapping(raw.get("spec"), "spec")
        pool = f.mapping(spec.get("pool"), "spec.pool")
        node_name = spec.get("nodeName")
        return cls(
            raw=raw,
            name=meta.name,
            driver=f.string(spec.get("driver"), "spec.driver"),
            pool=f.string(pool.get("name"), "spec.pool.name"),
            generation=f.integer(pool.get("generation"), "spec.pool.generation"),
            resource_slice_count=f.integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount"),
            node_name=None if node_name is None else f.string(node_name, "spec.nodeName"),
            node_selector=_node_selector(spec.get("nodeSelector"), "spec.nodeSelector"),
            all_nodes=f.boolean(spec.get("allNodes"), "spec.allNodes"),
            per_device_node_selection=f.boolean(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection"),
            devices=tuple(
                Device.from_dict(d, f"spec.devices[{i}]")
                for i, d in enumerate(f.sequence(spec.get("devices"), "spec.devices"))
            ),
            node_selector_raw=spec.get("nodeSelector"),
        )


# ---------------------------------------------------------------------------------------------------------
# DeviceClass and configuration


def _selectors(value: object, path: str) -> tuple[str, ...]:
    """The CEL expressions of a selector list (``[{cel: {expression}}]``)."""
    out = []
    for i, item in enumerate(f.sequence(value, path)):
        cel = f.mapping(f.mapping(item, f"{path}[{i}]").get("cel"), f"{path}[{i}].cel")
        out.append(f.string(cel.get("expression"), f"{path}[{i}].cel.expression"))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DeviceConfiguration:
    """Opaque driver configuration (``opaque: {driver, parameters}``), for the requests it names (all when
    empty); kept as written, since only the driver reads it."""

    requests: tuple[str, ...]
    opaque: Mapping[str, Any]

    @classmethod
    def from_dict(cls, raw: object, path: str) -> DeviceConfiguration:
        body = f.mapping(raw, path)
        return cls(
            _strings(body.get("requests"), _path(path, "requests")),
            f.mapping(body.get("opaque"), _path(path, "opaque")),
        )


def _configs(value: object, path: str) -> tuple[DeviceConfiguration, ...]:
    return tuple(DeviceConfiguration.from_dict(c, f"{path}[{i}]") for i, c in enumerate(f.sequence(value, path)))


@dataclass(frozen=True, slots=True, eq=False)
class DeviceClass:
    raw: Mapping[str, Any] = field(repr=False)
    name: str
    selectors: tuple[str, ...]
    config: tuple[DeviceConfiguration, ...]
    extended_resource_name: str | None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> DeviceClass:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        spec = f.mapping(raw.get("spec"), "spec")
        ext = spec.get("extendedResourceName")
        return cls(
            raw=raw,
            name=meta.name,
            selectors=_selectors(spec.get("selectors"), "spec.selectors"),
            config=_configs(spec.get("config"), "spec.config"),
            extended_resource_name=None if ext is None else f.string(ext, "spec.extendedResourceName"),
        )


# ---------------------------------------------------------------------------------------------------------
# Claims: requests, constraints, allocation


@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """What one device request (``exactly``) or one alternative of ``firstAvailable`` asks for."""

    name: str
    device_class_name: str
    selectors: tuple[str, ...]
    allocation_mode: str
    count: int
    #: None when unset (subrequests have no such field).
    admin_access: bool | None = None
    tolerations: tuple[Mapping[str, Any], ...] = ()
    #: ``capacity.requests`` is set (consumable capacity, a feature the allocator may refuse).
    has_capacity: bool = False

    @classmethod
    def from_dict(cls, raw: object, path: str, *, name: str = "", exact: bool = False) -> DeviceSubRequest:
        body = f.mapping(raw, path)
        mode = f.string(body.get("allocationMode"), _path(path, "allocationMode")) or EXACT_COUNT
        count = f.integer(body.get("count"), _path(path, "count"))
        if mode == EXACT_COUNT and count == 0:
            count = 1  # the API server's default
        return cls(
            name=name or f.string(body.get("name"), _path(path, "name")),
            device_class_name=f.string(body.get("deviceClassName"), _path(path, "deviceClassName")),
            selectors=_selectors(body.get("selectors"), _path(path, "selectors")),
            allocation_mode=mode,
            count=count,
            admin_access=_optional_bool(body.get("adminAccess"), _path(path, "adminAccess")) if exact else None,
            tolerations=_maps(body.get("tolerations"), _path(path, "tolerations")),
            has_capacity=body.get("capacity") is not None,
        )


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """A named request: exactly one of ``exactly`` or ``first_available`` (a prioritized list) is set."""

    name: str
    exactly: DeviceSubRequest | None
    first_available: tuple[DeviceSubRequest, ...]

    @classmethod
    def from_dict(cls, raw: object, path: str) -> DeviceRequest:
        body = f.mapping(raw, path)
        name = f.string(body.get("name"), _path(path, "name"))
        exact = body.get("exactly")
        subs = tuple(
            DeviceSubRequest.from_dict(s, f"{path}.firstAvailable[{i}]")
            for i, s in enumerate(f.sequence(body.get("firstAvailable"), _path(path, "firstAvailable")))
        )
        return cls(
            name=name,
            first_available=subs,
            exactly=None
            if exact is None
            else DeviceSubRequest.from_dict(exact, _path(path, "exactly"), name=name, exact=True),
        )


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None

    @classmethod
    def from_dict(cls, raw: object, path: str) -> DeviceConstraint:
        body = f.mapping(raw, path)
        match, distinct = body.get("matchAttribute"), body.get("distinctAttribute")
        return cls(
            _strings(body.get("requests"), _path(path, "requests")),
            None if match is None else f.string(match, _path(path, "matchAttribute")),
            None if distinct is None else f.string(distinct, _path(path, "distinctAttribute")),
        )


@dataclass(frozen=True, slots=True)
class DeviceClaim:
    """A claim's ``spec.devices`` (also a template's ``spec.spec.devices``)."""

    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...]
    config: tuple[DeviceConfiguration, ...]

    @classmethod
    def from_spec(cls, raw: object, path: str) -> DeviceClaim:
        devices = f.mapping(f.mapping(raw, path).get("devices"), _path(path, "devices"))
        base = _path(path, "devices")
        return cls(
            requests=tuple(
                DeviceRequest.from_dict(r, f"{base}.requests[{i}]")
                for i, r in enumerate(f.sequence(devices.get("requests"), f"{base}.requests"))
            ),
            constraints=tuple(
                DeviceConstraint.from_dict(c, f"{base}.constraints[{i}]")
                for i, c in enumerate(f.sequence(devices.get("constraints"), f"{base}.constraints"))
            ),
            config=_configs(devices.get("config"), f"{base}.config"),
        )


@dataclass(frozen=True, slots=True)
class DeviceRequestAllocationResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None

    @property
    def device_id(self) -> DeviceID:
        return DeviceID(self.driver, self.pool, self.device)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"request": self.request, "driver": self.driver, "pool": self.pool, "device": self.device}
        if self.admin_access is not None:
            out["adminAccess"] = self.admin_access
        return out

    @classmethod
    def from_dict(cls, raw: object, path: str) -> DeviceRequestAllocationResult:
        body = f.mapping(raw, path)
        request, driver, pool, device = (
            f.string(body.get(k), _path(path, k)) for k in ("request", "driver", "pool", "device")
        )
        return cls(
            request,
            driver,
            pool,
            device,
            admin_access=_optional_bool(body.get("adminAccess"), _path(path, "adminAccess")),
        )


@dataclass(frozen=True, slots=True)
class DeviceID:
    """A device cluster-wide: driver, pool and device name."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """A claim's ``status.allocation``: the devices, their configuration and where they are reachable."""

    results: tuple[DeviceRequestAllocationResult, ...]
    config: tuple[Mapping[str, Any], ...] = ()
    node_selector: NodeSelector | None = None
    #: The node selector as written (what the API object carries).
    node_selector_raw: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``status.allocation`` object, as the scheduler writes it."""
        devices: dict[str, Any] = {"results": [r.to_dict() for r in self.results]}
        if self.config:
            devices["config"] = [dict(c) for c in self.config]
        out: dict[str, Any] = {"devices": devices}
        if self.node_selector_raw is not None:
            out["nodeSelector"] = self.node_selector_raw
        return out

    @classmethod
    def from_dict(cls, raw: object, path: str) -> AllocationResult:
        body = f.mapping(raw, path)
        devices = f.mapping(body.get("devices"), _path(path, "devices"))
        results = tuple(
            DeviceRequestAllocationResult.from_dict(r, f"{path}.devices.results[{i}]")
            for i, r in enumerate(f.sequence(devices.get("results"), f"{path}.devices.results"))
        )
        selector_raw = body.get("nodeSelector")
        return cls(
            results=results,
            config=_maps(devices.get("config"), f"{path}.devices.config"),
            node_selector=_node_selector(selector_raw, _path(path, "nodeSelector")),
            node_selector_raw=None if selector_raw is None else f.mapping(selector_raw, ""),
        )


@dataclass(frozen=True, slots=True)
class ConsumerReference:
    """One entry of ``status.reservedFor`` (a pod, usually)."""

    api_group: str
    resource: str
    name: str
    uid: str

    def to_dict(self) -> dict[str, str]:
        out = {"resource": self.resource, "name": self.name, "uid": self.uid}
        if self.api_group:
            out["apiGroup"] = self.api_group
        return out

    @classmethod
    def from_dict(cls, raw: object, path: str) -> ConsumerReference:
        body = f.mapping(raw, path)
        return cls(*(f.string(body.get(k), _path(path, k)) for k in ("apiGroup", "resource", "name", "uid")))


@dataclass(frozen=True, slots=True, eq=False)
class ResourceClaim:
    raw: Mapping[str, Any] = field(repr=False)
    meta: ObjectMeta
    spec: DeviceClaim
    allocation: AllocationResult | None
    reserved_for: tuple[ConsumerReference, ...]

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def key(self) -> str:
        return self.meta.key

    @property
    def uid(self) -> str:
        return self.meta.uid

    def is_reserved_for(self, pod_uid: str) -> bool:
        """IsReservedForPod."""
        return any(ref.uid == pod_uid for ref in self.reserved_for)

    def allocated_devices(self) -> tuple[DeviceID, ...]:
        """The devices this claim holds: admin access allocates a device without holding it."""
        if self.allocation is None:
            return ()
        return tuple(r.device_id for r in self.allocation.results if not r.admin_access)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ResourceClaim:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=True)
        status = f.mapping(raw.get("status"), "status")
        allocation = status.get("allocation")
        return cls(
            raw=raw,
            meta=meta,
            spec=DeviceClaim.from_spec(raw.get("spec"), "spec"),
            allocation=None if allocation is None else AllocationResult.from_dict(allocation, "status.allocation"),
            reserved_for=tuple(
                ConsumerReference.from_dict(r, f"status.reservedFor[{i}]")
                for i, r in enumerate(f.sequence(status.get("reservedFor"), "status.reservedFor"))
            ),
        )


@dataclass(frozen=True, slots=True, eq=False)
class ResourceClaimTemplate:
    raw: Mapping[str, Any] = field(repr=False)
    meta: ObjectMeta
    #: The template's ``spec.metadata`` (labels and annotations the generated claim gets).
    claim_metadata: Mapping[str, Any]
    spec: DeviceClaim

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ResourceClaimTemplate:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=True)
        spec = f.mapping(raw.get("spec"), "spec")
        return cls(
            raw=raw,
            meta=meta,
            claim_metadata=f.mapping(spec.get("metadata"), "spec.metadata"),
            spec=DeviceClaim.from_spec(spec.get("spec"), "spec.spec"),
        )


# ---------------------------------------------------------------------------------------------------------
# Pods


@dataclass(frozen=True, slots=True)
class PodResourceClaim:
    """One ``spec.resourceClaims`` entry: a claim by name, or one made from a template for the pod."""

    name: str
    resource_claim_name: str | None
    resource_claim_template_name: str | None


@dataclass(frozen=True, slots=True)
class ContainerClaim:
    """One ``resources.claims`` entry of a container: a pod claim (and optionally one of its requests)."""

    name: str
    request: str


def pod_resource_claims(pod: Mapping[str, Any]) -> tuple[PodResourceClaim, ...]:
    """The pod's ``spec.resourceClaims``, in order."""
    spec = f.mapping(pod.get("spec"), "spec")
    out = []
    for i, item in enumerate(f.sequence(spec.get("resourceClaims"), "spec.resourceClaims")):
        path = f"spec.resourceClaims[{i}]"
        body = f.mapping(item, path)
        by_name, by_template = body.get("resourceClaimName"), body.get("resourceClaimTemplateName")
        out.append(
            PodResourceClaim(
                f.string(body.get("name"), f"{path}.name"),
                None if by_name is None else f.string(by_name, f"{path}.resourceClaimName"),
                None if by_template is None else f.string(by_template, f"{path}.resourceClaimTemplateName"),
            )
        )
    return tuple(out)


def container_claims(pod: Mapping[str, Any]) -> dict[str, tuple[ContainerClaim, ...]]:
    """Container name -> the claims it uses (``resources.claims``), init containers included."""
    spec = f.mapping(pod.get("spec"), "spec")
    out: dict[str, tuple[ContainerClaim, ...]] = {}
    for group in ("initContainers", "containers"):
        for i, c in enumerate(f.sequence(spec.get(group), f"spec.{group}")):
            path = f"spec.{group}[{i}]"
            body = f.mapping(c, path)
            resources = f.mapping(body.get("resources"), f"{path}.resources")
            claims = []
            for j, claim in enumerate(f.sequence(resources.get("claims"), f"{path}.resources.claims")):
                entry = f.mapping(claim, f"{path}.resources.claims[{j}]")
                claims.append(
                    ContainerClaim(
                        f.string(entry.get("name"), f"{path}.resources.claims[{j}].name"),
                        f.string(entry.get("request"), f"{path}.resources.claims[{j}].request"),
                    )
                )
            if claims:
                out[f.string(body.get("name"), f"{path}.name")] = tuple(claims)
    return out


class ClaimNotCreated(LookupError):
    """A pod's claim from a template has no ResourceClaim yet (resourceclaim.ErrClaimNotFound)."""


def claim_name(pod: Mapping[str, Any], claim: PodResourceClaim) -> tuple[str | None, bool]:
    """resourceclaim.Name: the ResourceClaim behind a pod claim (None: the pod needs none for it) and
    whether the pod must own it (a claim made from a template for this pod); ClaimNotCreated while the
    claim controller has not made it."""
    meta = f.mapping(pod.get("metadata"), "metadata")
    where = f'pod "{meta.get("namespace") or "default"}/{meta.get("name") or ""}"'
    if claim.resource_claim_name is not None:
        return claim.resource_claim_name, False
    if claim.resource_claim_template_name is not None:
        status = f.mapping(pod.get("status"), "status")
        for i, entry in enumerate(f.sequence(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")):
            body = f.mapping(entry, f"status.resourceClaimStatuses[{i}]")
            if body.get("name") == claim.name:
                name = body.get("resourceClaimName")
                if name is None:
                    return None, True
                return f.string(name, f"status.resourceClaimStatuses[{i}].resourceClaimName"), True
        raise ClaimNotCreated(f"{where}: ResourceClaim not created yet")
    raise ClaimNotCreated(f'{where}, spec.resourceClaim "{claim.name}": none of the supported fields are set')
