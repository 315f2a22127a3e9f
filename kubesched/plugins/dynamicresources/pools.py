"""Resource pools as the structured allocator sees them from one node (GatherPools).

A driver publishes the devices of a pool in one or more ResourceSlices. Only the newest generation of a
pool counts; a pool with fewer slices of that generation than ``resourceSliceCount`` says is incomplete
(being updated), and one naming a device twice is invalid. Which slices a node reaches depends on the
slice: ``nodeName`` (local devices), ``nodeSelector``, ``allNodes``, or per device
(``perDeviceNodeSelection``, a feature off by default).

:class:`SliceIndex` is built once per change of the slices: node-local slices by node name, the others
apart, so gathering the pools of a node costs a dictionary look-up plus the shared slices, and each node's
pools are remembered until the node or the slices change.

Order: upstream collects pools in a Go map and visits them in map order, which varies from run to run;
here pools are visited by (driver, pool name) and a pool's slices by name, so the same devices are
chosen every time. Pools whose devices have binding conditions come last, as upstream puts them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.api.dra import Device, ResourceSlice
from kubesched.api.labels import NodeSelector


@dataclass(slots=True)
class Pool:
    """One pool's slices of its newest generation, as one node sees them."""

    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False
    invalid_reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def invalid(self) -> bool:
        return bool(self.invalid_reason)


def node_matches(
    node_name: str, labels: Mapping[str, str], want_name: str | None, all_nodes: bool, selector: NodeSelector | None
) -> bool:
    """nodeMatches: a named node, every node, or the nodes a selector picks."""
    if want_name:
        return want_name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.matches(labels, node_name)
    return False


def _reaches(slice_: ResourceSlice, node_name: str, labels: Mapping[str, str], partitionable: bool) -> bool:
    if slice_.node_name or slice_.all_nodes or slice_.node_selector is not None:
        return node_matches(node_name, labels, slice_.node_name, slice_.all_nodes, slice_.node_selector)
    if slice_.per_device_node_selection and partitionable:
        return any(node_matches(node_name, labels, d.node_name, d.all_nodes, d.node_selector) for d in slice_.devices)
    return False  # nothing known says where: some future field this version cannot read


def gather_pools(
    slices: Iterable[ResourceSlice], node_name: str, labels: Mapping[str, str], *, partitionable: bool = False
) -> list[Pool]:
    """The pools ``node_name`` reaches, in allocation order (see the module docstring)."""
    pools: dict[tuple[str, str], Pool] = {}
    for slice_ in sorted(slices, key=lambda s: s.name):
        if slice_.per_device_node_selection and not partitionable:
            continue
        if not _reaches(slice_, node_name, labels, partitionable):
            continue
        key = (slice_.driver, slice_.pool)
        pool = pools.get(key)
        if pool is None:
            pools[key] = Pool(slice_.driver, slice_.pool, [slice_])
            continue
        newest = pool.slices[0].generation
        if slice_.generation < newest:
            continue  # outdated
        if slice_.generation > newest:
            pool.slices = []
        pool.slices.append(slice_)
    ordered = [pools[key] for key in sorted(pools)]
    for pool in ordered:
        pool.incomplete = len(pool.slices) != pool.slices[0].resource_slice_count
        pool.invalid_reason = _invalid_reason(pool)
    plain = [p for p in ordered if not any(s.has_binding_conditions for s in p.slices)]
    return plain + [p for p in ordered if any(s.has_binding_conditions for s in p.slices)]


def _invalid_reason(pool: Pool) -> str:
    seen: set[str] = set()
    for slice_ in pool.slices:
        for device in slice_.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


class SliceIndex:
    """The slices of the cluster indexed for per-node pool gathering; immutable once built."""

    def __init__(self, slices: Iterable[ResourceSlice], *, partitionable: bool = False) -> None:
        self.partitionable = partitionable
        self.local: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        for slice_ in slices:
            if slice_.node_name:
                self.local.setdefault(slice_.node_name, []).append(slice_)
            else:
                self.shared.append(slice_)
        self._pools: dict[str, tuple[object, list[Pool]]] = {}
        self._lock = threading.Lock()

    def pools(self, node_name: str, labels: Mapping[str, str]) -> list[Pool]:
        """The pools a node reaches; remembered per node for as long as it keeps these labels (the node view
        object: a node update brings a new one)."""
        found = self._pools.get(node_name)
        if found is not None and found[0] is labels:
            return found[1]
        pools = gather_pools(
            [*self.local.get(node_name, ()), *self.shared], node_name, labels, partitionable=self.partitionable
        )
        with self._lock:
            self._pools[node_name] = (labels, pools)
        return pools


def device_reaches(slice_: ResourceSlice, device: Device, node_name: str, labels: Mapping[str, str]) -> bool:
    """Per-device node selection: whether this device of a ``perDeviceNodeSelection`` slice reaches the node."""
    return node_matches(node_name, labels, device.node_name, device.all_nodes, device.node_selector)
