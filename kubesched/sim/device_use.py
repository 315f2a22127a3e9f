"""Devices (DRA) as the tools report them: which devices each node reaches, which DeviceClass each
matches, which are allocated, and for a pod's claims how many devices could serve each request.

Built from the cluster's ResourceSlices, DeviceClasses and ResourceClaims after a run, when a report is
written or a pod explained, never in a scheduling cycle. Pools are gathered per node as the allocator
gathers them (:mod:`kubesched.plugins.dynamicresources.pools`: the newest generation, node-local slices,
selectors, ``allNodes``); a selector that fails on a device counts as no match, its error kept for the
explanation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api import dra_cel
from kubesched.api.dra import (
    ALL,
    ClaimNotCreated,
    Device,
    DeviceClass,
    DeviceID,
    DeviceSubRequest,
    ResourceClaim,
    ResourceSlice,
    claim_name,
    pod_resource_claims,
)
from kubesched.api.errors import ObjectError
from kubesched.plugins.dynamicresources.allocator import allocated_devices
from kubesched.plugins.dynamicresources.pools import SliceIndex

#: A device as counted here: its id, the device, and the slice's driver.
Entry = tuple[DeviceID, Device, str]


@dataclass(frozen=True, slots=True)
class RequestCount:
    """One request of one claim, on one node: devices reached, matching the class and selectors, and of
    those, allocated to some claim already."""

    claim: str
    request: str
    device_class: str
    wanted: str
    devices: int
    matching: int
    allocated: int
    error: str = ""

    @property
    def free(self) -> int:
        return self.matching - self.allocated

    def describe(self) -> str:
        """``claim ml/c, request gpus (2 of class gpu-a100): 5 of 8 devices match, 4 already allocated``."""
        head = f"claim {self.claim}, request {self.request} ({self.wanted} of class {self.device_class})"
        if self.error:
            return f"{head}: {self.error}"
        if not self.devices:
            return f"{head}: the node reaches no devices"
        if not self.matching:
            return f"{head}: none of {self.devices} device{'' if self.devices == 1 else 's'} match"
        return (
            f"{head}: {self.matching} of {self.devices} device{'' if self.devices == 1 else 's'} "
            f"match{'es' if self.devices == 1 else ''}, {self.allocated} already allocated"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "request": self.request,
            "deviceClass": self.device_class,
            "wanted": self.wanted,
            "devices": self.devices,
            "matching": self.matching,
            "allocated": self.allocated,
            **({"error": self.error} if self.error else {}),
        }


class DeviceInventory:
    """The cluster's devices after a run; each selector is evaluated once per kind of device."""

    def __init__(
        self,
        slices: Iterable[Mapping[str, Any]],
        classes: Iterable[Mapping[str, Any]],
        claims: Iterable[Mapping[str, Any]],
    ) -> None:
        self.slices = [s for s in (_parsed(ResourceSlice.from_dict, raw) for raw in slices) if s is not None]
        self.classes = {c.name: c for c in (_parsed(DeviceClass.from_dict, raw) for raw in classes) if c is not None}
        self.claims = {c.key: c for c in (_parsed(ResourceClaim.from_dict, raw) for raw in claims) if c is not None}
        self.allocated: frozenset[DeviceID] = allocated_devices(self.claims.values())
        self._index = SliceIndex(self.slices)
        self._verdicts: dict[tuple[str, str, tuple[Any, ...], tuple[Any, ...]], bool | str] = {}

    @classmethod
    def of_cluster(cls, cluster: Any) -> DeviceInventory:
        """From an embedded cluster (``objects(kind)``: the stored objects, read in place)."""
        return cls(cluster.objects("ResourceSlice"), cluster.objects("DeviceClass"), cluster.objects("ResourceClaim"))

    def __bool__(self) -> bool:
        return bool(self.slices)

    def node_devices(self, node_name: str, labels: Mapping[str, str]) -> list[Entry]:
        """The devices of the pools the node reaches, in allocation order (invalid pools included)."""
        return [
            (DeviceID(pool.driver, pool.name, device.name), device, pool.driver)
            for pool in self._index.pools(node_name, labels)
            for slice_ in pool.slices
            for device in slice_.devices
        ]

    def matches(self, selectors: Sequence[str], entry: Entry) -> bool | str:
        """Whether the device passes every selector: True, False, or the first error's text.

        A selector sees the driver, attributes and capacities only, so devices alike (a thousand nodes'
        identical GPUs) share one evaluation."""
        _, device, driver = entry
        attributes, capacity = tuple(sorted(device.attributes.items())), tuple(sorted(device.capacity.items()))
        for expression in selectors:
            key = (expression, driver, attributes, capacity)
            verdict = self._verdicts.get(key)
            if verdict is None:
                verdict = _verdict(expression, device, driver)
                self._verdicts[key] = verdict
            if verdict is not True:
                return verdict
        return True

    def class_use(self, nodes: Iterable[tuple[str, Mapping[str, str]]]) -> dict[str, tuple[int, int]]:
        """Per DeviceClass: (allocated, total) devices matching it among the devices the nodes reach (a device
        shared by several nodes counted once)."""
        seen: dict[DeviceID, Entry] = {}
        for name, labels in nodes:
            for entry in self.node_devices(name, labels):
                seen.setdefault(entry[0], entry)
        out: dict[str, tuple[int, int]] = {}
        for class_name, device_class in sorted(self.classes.items()):
            members = [e for e in seen.values() if self.matches(device_class.selectors, e) is True]
            if members:
                out[class_name] = (sum(1 for e in members if e[0] in self.allocated), len(members))
        return out

    def request_counts(self, pod: Mapping[str, Any], node_name: str, labels: Mapping[str, str]) -> list[RequestCount]:
        """For each request of the pod's unallocated claims: the devices of this node that could serve it."""
        devices = self.node_devices(node_name, labels)
        out = []
        for key, claim in self.pod_claims(pod):
            if claim is None:
                out.append(RequestCount(key, "-", "-", "-", len(devices), 0, 0, "the claim does not exist (yet)"))
                continue
            if claim.allocation is not None:
                continue  # allocated: its devices are fixed; the node either reaches them or not
            for request in claim.spec.requests:
                subs = [request.exactly] if request.exactly is not None else list(request.first_available)
                for sub in subs:
                    name = request.name if request.exactly is not None else f"{request.name}/{sub.name}"
                    out.append(self._count(key, name, sub, devices))
        return out

    def _count(self, claim: str, request: str, sub: DeviceSubRequest, devices: Sequence[Entry]) -> RequestCount:
        wanted = "all" if sub.allocation_mode == ALL else str(sub.count)
        device_class = self.classes.get(sub.device_class_name)
        if device_class is None:
            return RequestCount(
                claim,
                request,
                sub.device_class_name,
                wanted,
                len(devices),
                0,
                0,
                f"DeviceClass {sub.device_class_name} does not exist",
            )
        selectors = (*device_class.selectors, *sub.selectors)
        matching, allocated, error = 0, 0, ""
        for entry in devices:
            verdict = self.matches(selectors, entry)
            if isinstance(verdict, str):
                error = error or verdict
            elif verdict:
                matching += 1
                allocated += entry[0] in self.allocated
        return RequestCount(claim, request, sub.device_class_name, wanted, len(devices), matching, allocated, error)

    def pod_claims(self, pod: Mapping[str, Any]) -> list[tuple[str, ResourceClaim | None]]:
        """The pod's claims by ``namespace/name`` (None: not created yet, or not found)."""
        namespace = str((pod.get("metadata") or {}).get("namespace") or "default")
        out: list[tuple[str, ResourceClaim | None]] = []
        try:
            entries = pod_resource_claims(pod)
        except ObjectError:
            return out
        for entry in entries:
            try:
                name, _ = claim_name(pod, entry)
            except (ClaimNotCreated, ObjectError):
                out.append((f"{namespace}/<{entry.name}>", None))
                continue
            if name is not None:
                out.append((f"{namespace}/{name}", self.claims.get(f"{namespace}/{name}")))
        return out


def _parsed(parse: Any, raw: Mapping[str, Any]) -> Any:
    """The parsed object, or None for one the API server would not have stored (never here: it checks)."""
    try:
        return parse(raw)
    except (ObjectError, ValueError, TypeError, KeyError):
        return None


def _verdict(expression: str, device: Device, driver: str) -> bool | str:
    compiled = dra_cel.compile_selector(expression)
    if compiled.error is not None:
        return f"selector {expression!r}: {compiled.error}"
    try:
        return dra_cel.evaluate(compiled, device, driver)
    except dra_cel.SelectorRuntimeError as err:
        return f"selector {expression!r}: {err.detail}"


@dataclass(frozen=True, slots=True)
class NodesCounts:
    """Nodes on which a pod's requests found the same device counts."""

    nodes: tuple[str, ...]
    counts: tuple[RequestCount, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": list(self.nodes), "requests": [c.to_dict() for c in self.counts]}


def pod_device_counts(
    inventory: DeviceInventory, pod: Mapping[str, Any], nodes: Mapping[str, Mapping[str, str]]
) -> list[NodesCounts]:
    """:meth:`DeviceInventory.request_counts` on each of ``nodes`` (name -> labels), nodes with the same
    counts together (a thousand identical GPU nodes make one entry), in the order first met."""
    groups: dict[tuple[RequestCount, ...], list[str]] = {}
    for name, labels in nodes.items():
        counts = tuple(inventory.request_counts(pod, name, labels))
        if counts:
            groups.setdefault(counts, []).append(name)
    return [NodesCounts(tuple(names), counts) for counts, names in groups.items()]


DRA_PLUGIN = "DynamicResources"


def rejected_by_devices(record: Mapping[str, Any]) -> list[str]:
    """The nodes an attempt's record says DynamicResources rejected."""
    return [
        node
        for node, entry in (record.get("filter") or {}).items()
        if isinstance(entry, Mapping) and entry.get("plugin") == DRA_PLUGIN
    ]


def explain_pod_devices(cluster: Any, records: Mapping[str, Mapping[str, Any]]) -> dict[str, list[NodesCounts]]:
    """For each pod (``namespace/name`` -> its last attempt's record) that DynamicResources rejected on some
    node: the device counts on those nodes, from the cluster as it is (after the run)."""
    wanted = {pod: rejected_by_devices(record) for pod, record in records.items()}
    wanted = {pod: nodes for pod, nodes in wanted.items() if nodes}
    if not wanted or cluster is None:
        return {}
    inventory = DeviceInventory.of_cluster(cluster)
    labels = {str(n["metadata"]["name"]): dict(n["metadata"].get("labels") or {}) for n in cluster.objects("Node")}
    pods = {f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}": p for p in cluster.objects("Pod")}
    out = {}
    for pod, nodes in wanted.items():
        if pod in pods:
            out[pod] = pod_device_counts(inventory, pods[pod], {n: labels.get(n, {}) for n in nodes})
    return out


def class_columns(
    inventory: DeviceInventory, nodes: Sequence[tuple[str, Mapping[str, str]]]
) -> tuple[list[str], list[list[int]], list[list[int]]]:
    """Per node (rows, as given) and DeviceClass (columns, ``devices: <class>``): devices allocated, and
    devices the node reaches that match the class. A device reachable from several nodes counts on each."""
    classes = sorted(inventory.classes.values(), key=lambda c: c.name)
    allocated = [[0] * len(classes) for _ in nodes]
    total = [[0] * len(classes) for _ in nodes]
    for row, (name, labels) in enumerate(nodes):
        for entry in inventory.node_devices(name, labels):
            held = entry[0] in inventory.allocated
            for column, device_class in enumerate(classes):
                if inventory.matches(device_class.selectors, entry) is True:
                    total[row][column] += 1
                    allocated[row][column] += held
    used = [c for c in range(len(classes)) if any(t[c] for t in total)]
    return (
        [f"devices: {classes[c].name}" for c in used],
        [[r[c] for c in used] for r in allocated],
        [[t[c] for c in used] for t in total],
    )
