"""Per-node counts of free matching devices: Filter's verdict without a search, where that is exact.

For the common claim - one request for ``count`` devices of one class, no constraints, no admin access,
no prioritized list - on node-local devices, the structured allocator's depth-first search always takes
the first ``count`` free matching devices of the node's pools, so it succeeds exactly when the node has
that many. :class:`MatchCounts` knows, for one pair of (class selectors, request selectors) over one
version of the slices, which devices of each node match, and keeps, for the set of devices in use it
last saw, how many of each node's matching devices are taken; updating it costs the difference between
two in-use sets (a few devices per scheduling cycle). A pod's PreFilter copies the free counts, one
array over the nodes; its Filter reads one entry per node.

A node on which the search could behave otherwise is a *hazard*, and Filter runs the allocator there:
a pool that is invalid (the search reports an error when it reaches one), a selector that fails on one
of its devices (an error, or not, depending on where the search stops), a tainted device when device
taints are on (the verdict depends on the request's tolerations). Slices that are not node-local, and
the features that change what a device may hold (partitionable devices, consumable capacity), turn the
shortcut off altogether (:func:`simple_request`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kubesched.api.dra import (
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    Device,
    DeviceClass,
    DeviceID,
    DeviceSubRequest,
    ResourceClaim,
)
from kubesched.api.labels import IN, NOT_IN, NodeSelector
from kubesched.plugins.dynamicresources.allocator import Features, cached_verdict
from kubesched.plugins.dynamicresources.pools import SliceIndex, gather_pools

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

#: Distinct (class, request) selector pairs remembered per version of the slices.
MAX_ENTRIES = 64


@dataclass(frozen=True, slots=True)
class SimpleRequest:
    """The one request of a claim whose allocation is "the first ``count`` free matching devices"."""

    device_class: DeviceClass
    spec: DeviceSubRequest

    @property
    def key(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return self.device_class.selectors, self.spec.selectors


def simple_request(
    features: Features, claims: Sequence[ResourceClaim], classes: Callable[[str], DeviceClass | None]
) -> SimpleRequest | None:
    """The request when ``claims`` (the claims to allocate) are one claim the counts decide; else None."""
    if len(claims) != 1 or features.partitionable_devices or features.consumable_capacity:
        return None
    spec = claims[0].spec
    if len(spec.requests) != 1 or spec.constraints:
        return None
    request = spec.requests[0]
    sub = request.exactly
    if (
        sub is None
        or request.first_available
        or sub.allocation_mode != EXACT_COUNT
        or sub.admin_access is not None
        or sub.has_capacity
        or not sub.device_class_name
        or not 0 <= sub.count <= ALLOCATION_RESULTS_MAX_SIZE
    ):
        return None
    device_class = classes(sub.device_class_name)
    return None if device_class is None else SimpleRequest(device_class, sub)


def _matches(features: Features, device: Device, driver: str, request: SimpleRequest) -> bool | None:
    """The class's selectors, then the request's, as the allocator runs them (stopping at the first
    false one); None when one that runs fails."""
    for expression in (*request.device_class.selectors, *request.spec.selectors):
        verdict = cached_verdict(expression, device, driver, features.consumable_capacity)
        if isinstance(verdict, str):
            return None
        if not verdict:
            return False
    return True


class MatchCounts:
    """For one selector pair over one :class:`SliceIndex` (node-local slices only): per node, its matching
    devices, whether it is a hazard, and how many of those devices the last seen in-use set holds."""

    def __init__(self, features: Features, slices: SliceIndex, request: SimpleRequest) -> None:
        nodes = sorted(slices.local)
        self.rows: dict[str, int] = {name: row for row, name in enumerate(nodes)}
        self.total = np.zeros(len(nodes), dtype=np.int64)
        self.used = np.zeros(len(nodes), dtype=np.int64)
        self.hazard = np.zeros(len(nodes), dtype=bool)
        #: Each matching device's row.
        self.owner: dict[DeviceID, int] = {}
        self.in_use: frozenset[DeviceID] = frozenset()
        self._lock = threading.Lock()
        #: Per row of a snapshot layout, this object's row for that node (-1: no slice of its own).
        self._layout: tuple[int, np.ndarray] = (-1, np.zeros(0, dtype=np.int64))
        for row, name in enumerate(nodes):
            self._add_node(features, row, name, slices, request)

    def _add_node(self, features: Features, row: int, name: str, slices: SliceIndex, request: SimpleRequest) -> None:
        usable = features.device_binding and features.device_status
        for pool in gather_pools(slices.local[name], name, {}, partitionable=False):
            if pool.invalid:
                self.hazard[row] = True
                return
            for slice_ in pool.slices:
                for device in slice_.devices:
                    if device.binding_conditions and not usable:
                        continue
                    if features.device_taints and device.taints:
                        self.hazard[row] = True
                        return
                    verdict = _matches(features, device, pool.driver, request)
                    if verdict is None:
                        self.hazard[row] = True
                        return
                    if verdict and not device.consumes_counters:
                        self.owner[DeviceID(pool.driver, pool.name, device.name)] = row
                        self.total[row] += 1

    def free(self, in_use: frozenset[DeviceID]) -> np.ndarray:
        """Per row, the matching devices ``in_use`` leaves free (a copy the caller may keep)."""
        with self._lock:
            if in_use is not self.in_use:
                self._count(self.in_use - in_use, -1)
                self._count(in_use - self.in_use, 1)
                self.in_use = in_use
            return self.total - self.used

    def snapshot_rows(self, snapshot: Snapshot) -> np.ndarray:
        """This object's row of each snapshot row's node, -1 for a node without slices; built once per
        layout of the snapshot's rows."""
        version, rows = self._layout
        if version != snapshot.layout_version:
            own = self.rows
            rows = np.fromiter(
                (own.get(name, -1) for name in snapshot.names), dtype=np.int64, count=len(snapshot.names)
            )
            self._layout = (snapshot.layout_version, rows)
        return rows

    def _count(self, devices: frozenset[DeviceID], step: int) -> None:
        owner = self.owner
        rows = [row for device in devices if (row := owner.get(device)) is not None]
        if rows:
            np.add.at(self.used, rows, step)


@dataclass(slots=True)
class NodeCounts:
    """One cycle's view: Filter's verdict on a node by its free count, or None where the allocator decides."""

    source: MatchCounts
    free: np.ndarray
    count: int

    def fits_rows(self, snapshot: Snapshot, indices: np.ndarray) -> np.ndarray | None:
        """:meth:`fits` on the snapshot rows ``indices`` at once; None when one of them is a hazard."""
        rows = self.source.snapshot_rows(snapshot)[indices]
        known = rows >= 0
        at = np.where(known, rows, 0)
        if len(self.free) and self.source.hazard[at][known].any():
            return None
        if not len(self.free):
            return np.full(len(indices), self.count == 0)
        return np.where(known, self.free[at] >= self.count, self.count == 0)

    def fits(self, node_name: str) -> bool | None:
        row = self.source.rows.get(node_name)
        if row is None:
            return self.count == 0  # no local slice: no pools, no devices
        if self.source.hazard[row]:
            return None
        return bool(self.free[row] >= self.count)


class CountsCache:
    """The :class:`MatchCounts` of one version of the slices, by selector pair (the DRA manager's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slices: SliceIndex | None = None
        self._entries: dict[tuple[tuple[str, ...], tuple[str, ...]], MatchCounts] = {}

    def node_counts(
        self, features: Features, slices: SliceIndex, request: SimpleRequest, in_use: frozenset[DeviceID]
    ) -> NodeCounts | None:
        """The cycle's counts for ``request``; None when some slice is not node-local."""
        if slices.shared:
            return None
        with self._lock:
            if self._slices is not slices or len(self._entries) >= MAX_ENTRIES:
                self._slices, self._entries = slices, {}
            counts = self._entries.get(request.key)
            if counts is None:
                counts = self._entries[request.key] = MatchCounts(features, slices, request)
        return NodeCounts(counts, counts.free(in_use), request.spec.count)


def selector_mask(selector: NodeSelector, snapshot: Snapshot, indices: np.ndarray) -> np.ndarray:
    """Whether each snapshot row of ``indices`` is a node ``selector`` picks (an allocated claim's
    ``nodeSelector``): by name in arrays when the terms select node names only (what the allocator
    writes for node-local devices), else node by node."""
    if not all(term.match_fields and not term.match_expressions for term in selector.terms):
        nodes = [snapshot.node_infos[row].node for row in indices.tolist()]  # a snapshot's rows have nodes
        return np.fromiter(
            (node is not None and selector.matches(node.labels, node.name) for node in nodes),
            dtype=bool,
            count=len(indices),
        )
    names = snapshot.names[indices]
    out = np.zeros(len(indices), dtype=bool)
    for term in selector.terms:
        picked = np.ones(len(indices), dtype=bool)
        for requirement in term.match_fields:
            listed = np.isin(names, list(requirement.values))
            picked &= listed if requirement.operator == IN else ~listed if requirement.operator == NOT_IN else False
        out |= picked
    return out
