"""The structured allocator: which devices a pod's unallocated claims get on one node (v1.34's).

kube-scheduler's DynamicResources plugin builds one allocator per scheduling cycle (PreFilter) from the
devices already allocated (claims allocated or in flight), the DeviceClasses and the ResourceSlices, and
asks it in Filter, node by node, for an allocation of the pod's claims. This module is that allocator,
with the search upstream's "experimental" variant makes (the one v1.34 runs with its default features):

- claims one after the other, each claim's requests in order, each request's devices one by one;
- for a device: the pools the node reaches (:mod:`.pools`), their slices, their devices in order; a device
  is a candidate when it is not in use (admin access allocates without using, but not twice in one
  claim), matches the class's and the request's CEL selectors, and keeps every claim constraint;
- ``All`` takes every matching device of the reachable pools (none may be in use, no pool may be
  incomplete or invalid); ``firstAvailable`` tries the subrequests in order and keeps the first that
  completes the whole allocation;
- depth-first with backtracking; the first complete allocation wins, so the same inputs always give the
  same devices. A claim holds at most 32 devices.

The result per claim is the ``status.allocation`` the plugin writes: the devices (request, driver, pool,
device, adminAccess), the configuration from the classes and the claim, and the node selector saying
where the devices are reachable.

Errors: :class:`AllocationError` for what upstream returns as an error (a broken claim, class or slice,
a selector that fails to compile or to run on a device); the plugin reports it as an Error status for
the node. ``None`` from :meth:`Allocator.allocate` is "cannot be allocated here".

Cost: each (expression, device) pair is evaluated once for as long as the slice's view lives (the
verdict is kept on the device); each node's pools are gathered once per slice index; what one call
learns about (request, device) pairs is kept for that call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api import dra_cel
from kubesched.api.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    CONFIG_FROM_CLAIM,
    CONFIG_FROM_CLASS,
    EXACT_COUNT,
    AllocationResult,
    Device,
    DeviceClass,
    DeviceID,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.api.labels import NodeSelector
from kubesched.plugins.dynamicresources.constraints import Constraint, DistinctAttribute, MatchAttribute
from kubesched.plugins.dynamicresources.pools import Pool, SliceIndex, device_reaches


class AllocationError(Exception):
    """Allocation cannot proceed for a reason in the inputs (upstream's error return)."""


class _TooManyResults(Exception):
    """A partial allocation would exceed the 32 devices a claim may hold: backtrack harder."""


@dataclass(frozen=True, slots=True)
class Features:
    """The feature gates that change allocation (structured.Features); v1.34's defaults."""

    admin_access: bool = True
    prioritized_list: bool = True
    device_status: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding: bool = False
    consumable_capacity: bool = False

    @classmethod
    def from_gates(cls, enabled: Callable[[str], bool]) -> Features:
        """From a feature-gate lookup (``FeatureGates.enabled``)."""
        return cls(
            admin_access=enabled("DRAAdminAccess"),
            prioritized_list=enabled("DRAPrioritizedList"),
            device_status=enabled("DRAResourceClaimDeviceStatus"),
            partitionable_devices=enabled("DRAPartitionableDevices"),
            device_taints=enabled("DRADeviceTaints"),
            device_binding=enabled("DRADeviceBindingConditions"),
            consumable_capacity=enabled("DRAConsumableCapacity"),
        )


def allocated_devices(claims: Iterable[ResourceClaim]) -> frozenset[DeviceID]:
    """The devices ``claims`` hold (foreachAllocatedDevice): admin-access results hold none."""
    return frozenset(device for claim in claims for device in claim.allocated_devices())


def kobj(claim: ResourceClaim) -> str:
    return f"{claim.namespace}/{claim.name}"


@dataclass(slots=True)
class _Request:
    """One request, or one subrequest of a ``firstAvailable`` list, ready to allocate."""

    spec: DeviceSubRequest
    parent: str | None
    device_class: DeviceClass
    num_devices: int
    #: For ``All``: the devices, fixed up front.
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] | None = None
    #: On a parent's first subrequest: the one that was chosen.
    selected: int = 0

    @property
    def name(self) -> str:
        return f"{self.parent}/{self.spec.name}" if self.parent else self.spec.name

    @property
    def admin_access(self) -> bool:
        return bool(self.spec.admin_access)


@dataclass(frozen=True, slots=True)
class _Chosen:
    request: str
    parent: str
    device_id: DeviceID
    device: Device
    slice: ResourceSlice
    admin_access: bool | None

    @property
    def request_name(self) -> str:
        return f"{self.parent}/{self.request}" if self.parent else self.request


class Allocator:
    """One cycle's allocator: thread-compatible, reusable for every node of the cycle."""

    def __init__(
        self,
        features: Features,
        allocated: frozenset[DeviceID],
        classes: Callable[[str], DeviceClass | None],
        slices: SliceIndex,
    ) -> None:
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self.slices = slices

    def allocate(
        self, node_name: str, labels: Mapping[str, str], claims: Sequence[ResourceClaim]
    ) -> list[AllocationResult] | None:
        """An allocation of every claim in ``claims`` on this node, or None when there is none."""
        return _Attempt(self, node_name, labels, claims).run()


class _Attempt:
    """One Allocate call: the search state for one node."""

    def __init__(
        self, allocator: Allocator, node_name: str, labels: Mapping[str, str], claims: Sequence[ResourceClaim]
    ) -> None:
        self.features = allocator.features
        self.allocated = allocator.allocated
        self.classes = allocator.classes
        self.node_name = node_name
        self.labels = labels
        self.claims = claims
        self.pools: list[Pool] = allocator.slices.pools(node_name, labels)
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.constraints: list[list[Constraint]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[_Chosen]] = [[] for _ in claims]
        self.matches: dict[tuple[int, int, int, int], bool] = {}

    def run(self) -> list[AllocationResult] | None:
        for index, claim in enumerate(self.claims):
            self._prepare_claim(index, claim)
        try:
            done = self._one(0, 0, 0, 0, False)
        except _TooManyResults:
            raise AllocationError("allocation max size exceeded") from None
        if not done:
            return None
        return [self._result(index, claim) for index, claim in enumerate(self.claims)]

    # -- preparation -------------------------------------------------------------------------------------
    def _prepare_claim(self, index: int, claim: ResourceClaim) -> None:
        minimum = 0
        for q, request in enumerate(claim.spec.requests):
            if request.first_available and not self.features.prioritized_list:
                raise AllocationError(
                    f"claim {kobj(claim)}, request {request.name}: has subrequests, but the "
                    "DRAPrioritizedList feature is disabled"
                )
            if not self.features.consumable_capacity and (
                (request.exactly is not None and request.exactly.has_capacity)
                or any(sub.has_capacity for sub in request.first_available)
            ):
                raise AllocationError(
                    f"claim {kobj(claim)}, request {request.name}: has capacity requests, but "
                    "the DRAConsumableCapacity feature is disabled"
                )
            if request.first_available:
                least = min(
                    self._prepare_request(claim, (index, q, s), sub, request.name).num_devices
                    for s, sub in enumerate(request.first_available)
                )
                minimum += least
            elif request.exactly is not None:
                minimum += self._prepare_request(claim, (index, q, 0), request.exactly, None).num_devices
            else:
                raise AllocationError(
                    f"claim {kobj(claim)}, request {request.name}: missing device class name "
                    "(unsupported request type?)"
                )
        if minimum > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(
                f"claim {kobj(claim)}: number of requested devices {minimum} exceeds the claim "
                f"limit of {ALLOCATION_RESULTS_MAX_SIZE}"
            )
        self.constraints.append(self._constraints(claim))

    def _constraints(self, claim: ResourceClaim) -> list[Constraint]:
        out: list[Constraint] = []
        for i, constraint in enumerate(claim.spec.constraints):
            names = frozenset(constraint.requests)
            if constraint.match_attribute is not None:
                out.append(MatchAttribute(names, constraint.match_attribute))
            elif constraint.distinct_attribute is not None and self.features.consumable_capacity:
                out.append(DistinctAttribute(names, constraint.distinct_attribute))
            else:
                raise AllocationError(
                    f"claim {kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                )
        return out

    def _prepare_request(
        self, claim: ResourceClaim, key: tuple[int, int, int], spec: DeviceSubRequest, parent: str | None
    ) -> _Request:
        where = f"claim {kobj(claim)}, request {spec.name}"
        if not self.features.admin_access and spec.admin_access is not None:
            raise AllocationError(f"{where}: admin access is requested, but the feature is disabled")
        if not spec.device_class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        device_class = self.classes(spec.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"{where}: could not retrieve device class {spec.device_class_name}: "
                f'deviceclass.resource.k8s.io "{spec.device_class_name}" not found'
            )
        request = _Request(spec, parent, device_class, spec.count)
        self.requests[key] = request
        if spec.allocation_mode == ALL:
            request.all_devices = self._all_devices(key, request, where)
            request.num_devices = len(request.all_devices)
        elif spec.allocation_mode != EXACT_COUNT:
            raise AllocationError(f"{where}: unsupported count mode {spec.allocation_mode}")
        return request

    def _all_devices(
        self, key: tuple[int, int, int], request: _Request, where: str
    ) -> list[tuple[DeviceID, Device, ResourceSlice]]:
        found = []
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(
                    f"{where}: asks for all devices, but resource pool {pool.id} is currently being updated"
                )
            if pool.invalid:
                raise AllocationError(
                    f"{where}: asks for all devices, but resource pool {pool.id} is currently invalid"
                )
            for slice_ in pool.slices:
                for device in slice_.devices:
                    device_id = DeviceID(slice_.driver, slice_.pool, device.name)
                    if self._selectable(key, request, slice_, device, device_id):
                        found.append((device_id, device, slice_))
        return found

    # -- the search --------------------------------------------------------------------------------------
    def _one(self, c: int, q: int, s: int, d: int, in_sub: bool) -> bool:
        """allocateOne: allocate device ``d`` of request ``q`` (subrequest ``s``) of claim ``c`` and all after."""
        if c >= len(self.claims):
            return True
        if q >= len(self.claims[c].spec.requests):
            try:
                return self._one(c + 1, 0, 0, 0, False)
            except _TooManyResults:
                return False  # another choice for an earlier claim's subrequests may need fewer devices
        request = self.requests[(c, q, s)]
        if not in_sub and request.parent is not None:
            return self._first_available(c, q, d)
        if request.spec.allocation_mode == ALL and not request.all_devices:
            return False
        if d >= request.num_devices:
            return self._one(c, q + 1, 0, 0, False)
        if len(self.results[c]) + request.num_devices - d > ALLOCATION_RESULTS_MAX_SIZE:
            raise _TooManyResults
        if request.all_devices is not None:
            undo = self._take(c, q, s, request.all_devices[d], must=True)
            if undo is None:
                return False
            # Upstream goes on with subrequest 0's data here, whichever subrequest this is.
            return self._continue(undo, c, q, 0, d + 1, in_sub)
        for pool in self.pools:
            if pool.invalid:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            for slice_ in pool.slices:
                for device in slice_.devices:
                    device_id = DeviceID(pool.driver, pool.name, device.name)
                    if request.admin_access:
                        if c in self.allocating.get(device_id, ()):
                            continue
                    elif self._in_use(device_id):
                        continue
                    if not self._selectable((c, q, s), request, slice_, device, device_id):
                        continue
                    undo = self._take(c, q, s, (device_id, device, slice_), must=False)
                    if undo is not None and self._continue(undo, c, q, s, d + 1, in_sub):
                        return True
        return False

    def _continue(self, undo: Callable[[], None], c: int, q: int, s: int, d: int, in_sub: bool) -> bool:
        """The search after a device was taken; the device is given back unless a solution was found."""
        try:
            done = self._one(c, q, s, d, in_sub)
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    def _first_available(self, c: int, q: int, d: int) -> bool:
        """A prioritized list: the first subrequest with which everything after can be allocated."""
        all_too_many = True
        s = 0
        while (c, q, s) in self.requests:
            try:
                done = self._one(c, q, s, d, True)
            except _TooManyResults:
                s += 1
                continue
            all_too_many = False
            if done:
                self.requests[(c, q, 0)].selected = s
                return True
            s += 1
        if all_too_many:
            raise _TooManyResults
        return False

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.allocated or bool(self.allocating.get(device_id))

    def _selectable(
        self, key: tuple[int, int, int], request: _Request, slice_: ResourceSlice, device: Device, device_id: DeviceID
    ) -> bool:
        """isSelectable: the class's and the request's selectors, and per-device node selection."""
        if device.binding_conditions and not (self.features.device_binding and self.features.device_status):
            return False
        memo_key = (*key, id(device))
        found = self.matches.get(memo_key)
        if found is not None:
            return found
        claim = self.claims[key[0]]
        matches = (
            self._selectors_match(
                device, device_id, request.device_class.selectors, f"class {request.device_class.name}"
            )
            and self._selectors_match(device, device_id, request.spec.selectors, f"claim {kobj(claim)}")
            and (not slice_.per_device_node_selection or device_reaches(slice_, device, self.node_name, self.labels))
        )
        self.matches[memo_key] = matches
        return matches

    def _selectors_match(self, device: Device, device_id: DeviceID, selectors: Sequence[str], owner: str) -> bool:
        consumable = self.features.consumable_capacity
        for i, expression in enumerate(selectors):
            verdict = cached_verdict(expression, device, device_id.driver, consumable)
            if isinstance(verdict, str):
                raise AllocationError(f"{owner}: selector #{i}: {verdict}")
            if not verdict:
                return False
        return True

    def _take(
        self, c: int, q: int, s: int, candidate: tuple[DeviceID, Device, ResourceSlice], must: bool
    ) -> Callable[[], None] | None:
        """allocateDevice: tentatively allocate a selectable device; the undo, or None when it cannot be."""
        device_id, device, slice_ = candidate
        request = self.requests[(c, q, s)]
        multiple = self.features.consumable_capacity and bool(device.allow_multiple_allocations)
        if request.admin_access:
            if not multiple and c in self.allocating.get(device_id, ()):
                return None
        elif self._in_use(device_id):
            return None
        if device.consumes_counters:
            return None  # partitionable devices (an alpha feature) are not allocated
        parent = request.parent or ""
        base, sub = (parent, request.spec.name) if parent else (request.spec.name, "")
        if self.features.device_taints and not _tolerates_all(device, request.spec):
            return None
        constraints = self.constraints[c]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, device, device_id.driver):
                if must:
                    raise AllocationError(
                        f"claim {kobj(self.claims[c])}, request {request.spec.name}: cannot add "
                        f"device {device_id} because a claim constraint would not be satisfied"
                    )
                for earlier in constraints[:i]:
                    earlier.remove(base, sub, device, device_id.driver)
                return None
        holders = self.allocating.setdefault(device_id, set())
        if not multiple:
            holders.add(c)
        results = self.results[c]
        results.append(
            _Chosen(request.spec.name, parent, device_id, device, slice_, True if request.admin_access else None)
        )
        size = len(results) - 1

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base, sub, device, device_id.driver)
            holders.discard(c)
            del results[size:]

        return undo

    # -- the result --------------------------------------------------------------------------------------
    def _result(self, index: int, claim: ResourceClaim) -> AllocationResult:
        chosen = self.results[index]
        results = tuple(
            DeviceRequestAllocationResult(
                r.request_name, r.device_id.driver, r.device_id.pool, r.device_id.device, r.admin_access
            )
            for r in chosen
        )
        try:
            selector = node_selector(chosen, self.node_name, self.features.device_binding)
        except AllocationError as err:
            raise AllocationError(f"create NodeSelector for claim {claim.name}: {err}") from None
        local_raw, local = node_local_selector(self.node_name)
        parsed = None if selector is None else local if selector is local_raw else NodeSelector.from_dict(selector)
        return AllocationResult(
            results=results, config=tuple(self._config(index, claim)), node_selector=parsed, node_selector_raw=selector
        )

    def _config(self, index: int, claim: ResourceClaim) -> list[dict[str, Any]]:
        """The classes' configuration (once per class, naming every request it serves), then the claim's."""
        out: list[dict[str, Any]] = []
        by_class: dict[str, tuple[int, int]] = {}
        for q in range(len(claim.spec.requests)):
            data = self.requests[(index, q, 0)]
            if data.parent is not None:
                data = self.requests[(index, q, data.selected)]
            known = by_class.get(data.device_class.name)
            if known is not None:
                for entry in out[known[0] : known[1]]:
                    entry["requests"].append(data.name)
                continue
            start = len(out)
            out += [
                {"source": CONFIG_FROM_CLASS, "requests": [data.name], "opaque": dict(config.opaque)}
                for config in data.device_class.config
            ]
            by_class[data.device_class.name] = (start, len(out))
        for config in claim.spec.config:
            entry = {
                "source": CONFIG_FROM_CLAIM,
                **({"requests": list(config.requests)} if config.requests else {}),
                "opaque": dict(config.opaque),
            }
            if not config.requests:
                out.append(entry)
                continue
            for q, request in enumerate(claim.spec.requests):
                if request.name in config.requests:
                    out.append(dict(entry))
                    continue
                data = self.requests[(index, q, 0)]
                if data.parent is not None:
                    sub = request.first_available[data.selected].name
                    if f"{request.name}/{sub}" in config.requests:
                        out.append(dict(entry))
        return out


#: Verdicts by expression and by what a selector sees of a device (:func:`_cel_identity`): the devices
#: of a driver mostly repeat a few such identities, so each is evaluated once, whichever slice it is in.
_VERDICTS: dict[tuple[Any, ...], bool | str] = {}
_VERDICTS_MAX = 1 << 16


def cached_verdict(expression: str, device: Device, driver: str, consumable: bool) -> bool | str:
    """:func:`_verdict`, kept on the device for as long as its slice's view lives, and shared by devices
    that look alike to a selector."""
    verdict: bool | str | None = device.memo.get((expression, consumable))
    if verdict is not None:
        return verdict
    key = (expression, consumable, _cel_identity(device, driver))
    verdict = _VERDICTS.get(key)
    if verdict is None:
        verdict = _verdict(expression, device, driver, consumable)
        if len(_VERDICTS) >= _VERDICTS_MAX:
            _VERDICTS.clear()
        _VERDICTS[key] = verdict
    device.memo[(expression, consumable)] = verdict
    return verdict


def _cel_identity(device: Device, driver: str) -> tuple[Any, ...]:
    """Everything a selector reads of a device (its CEL input): driver, attributes, capacity and
    allowMultipleAllocations, in the slice's order (two devices equal in a different order just miss)."""
    key = ("cel-identity", driver)
    found: tuple[Any, ...] | None = device.memo.get(key)
    if found is None:
        found = device.memo[key] = (
            driver,
            tuple(device.attributes.items()),
            tuple(device.capacity.items()),
            bool(device.allow_multiple_allocations),
        )
    return found


def _verdict(expression: str, device: Device, driver: str, consumable: bool) -> bool | str:
    """A selector's verdict on one device: True, False, or the error text upstream reports."""
    compiled = dra_cel.compile_selector(expression, consumable_capacity=consumable)
    if compiled.error is not None:
        return f"CEL compile error: {compiled.error}"
    try:
        return dra_cel.evaluate(compiled, device, driver)
    except dra_cel.SelectorRuntimeError as err:
        return f"CEL runtime error: {err.detail}"


def _tolerates_all(device: Device, request: DeviceSubRequest) -> bool:
    """Every taint of the device is tolerated by the request (resourceclaim.ToleratesTaint)."""
    return all(any(_tolerates(t, taint) for t in request.tolerations) for taint in device.taints)


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


@functools.lru_cache(maxsize=8192)
def node_local_selector(node_name: str) -> tuple[Mapping[str, Any], NodeSelector]:
    """The node selector of devices local to one node, as written and parsed: the same for every pod
    that gets such devices there, so made once per node (shared: never to be changed)."""
    raw = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    return raw, NodeSelector.from_dict(raw)


def node_selector(chosen: Sequence[_Chosen], node_name: str, binding: bool) -> Mapping[str, Any] | None:
    """createNodeSelector: the node alone when a device is local to it; else the slices' selectors merged
    into one term; None when the devices are reachable everywhere."""
    expressions: list[dict[str, Any]] = []
    match_fields: list[dict[str, Any]] = []
    for r in chosen:
        if r.slice.per_device_node_selection:
            name, selector = r.device.node_name, r.device.node_selector_raw
        else:
            name, selector = r.slice.node_name, r.slice.node_selector_raw
        if name or (binding and r.device.binds_to_node):
            return node_local_selector(node_name)[0]
        if selector is None:
            continue
        terms = list(selector.get("nodeSelectorTerms") or [])
        if len(terms) > 1:
            raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if terms:
            _merge(terms[0].get("matchFields") or [], match_fields)
            _merge(terms[0].get("matchExpressions") or [], expressions)
    if not expressions and not match_fields:
        return None
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if match_fields:
        term["matchFields"] = match_fields
    return {"nodeSelectorTerms": [term]}


def _merge(requirements: Iterable[Mapping[str, Any]], into: list[dict[str, Any]]) -> None:
    """Add the requirements not yet present (same key, operator and set of values)."""
    for requirement in requirements:
        values = set(requirement.get("values") or ())
        if not any(
            r.get("key") == requirement.get("key")
            and r.get("operator") == requirement.get("operator")
            and set(r.get("values") or ()) == values
            for r in into
        ):
            into.append(dict(requirement))
