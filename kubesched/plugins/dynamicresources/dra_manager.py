"""What DynamicResources reads of the cluster's DRA objects, shared by every profile (SharedDRAManager).

kube-scheduler keeps ResourceClaims in an *assume cache*: the informer's claims, overlaid with the
version the scheduler itself just wrote (PreBind's status update), so that the next pod sees a claim
allocated before the watch event comes back. Beside it, the claims whose allocation is *in flight*
(chosen in Reserve, not yet written by PreBind) and the set of devices every claim holds, kept up to
date from the cache's changes. :class:`ClaimTracker` is all three; :class:`DRAManager` adds the
ResourceSlices (indexed for per-node pool gathering, rebuilt when a slice changes) and the
DeviceClasses.

An informer version replaces an assumed one only when it is newer (a higher resourceVersion): the
watch event of the scheduler's own write changes nothing. Unreserve restores the informer version.
"""

from __future__ import annotations

import threading
from collections import Counter

from kubesched.api.dra import DeviceClass, DeviceID, ResourceClaim, ResourceSlice
from kubesched.cluster.listers import Listers
from kubesched.plugins.dynamicresources.device_counts import CountsCache
from kubesched.plugins.dynamicresources.pools import SliceIndex

#: Where the shared manager lives on the listers (see :meth:`Listers.derived`).
DERIVED_NAME = "DynamicResources"


class ClaimNotFound(LookupError):
    """The assume cache has no such claim (assumecache.NotFoundError); the text is upstream's."""

    def __init__(self, key: str) -> None:
        super().__init__(f'could not find ResourceClaim "{key}"')


class OutOfSync(ValueError):
    """An assumed claim older than the one the cache holds."""


def _rv(claim: ResourceClaim) -> int:
    try:
        return int(claim.meta.resource_version or 0)
    except ValueError:
        return 0


class ClaimTracker:
    """The claims as the scheduler sees them (ResourceClaimTracker): informer versions, assumed versions,
    in-flight allocations, and the devices they hold."""

    def __init__(self, listers: Listers) -> None:
        self._lock = threading.RLock()
        self._api: dict[str, ResourceClaim] = {}
        self._latest: dict[str, ResourceClaim] = {}
        self._in_flight: dict[str, ResourceClaim] = {}
        self._devices: Counter[DeviceID] = Counter()
        #: The devices some claim holds (a count above zero), kept with the counts.
        self._held: set[DeviceID] = set()
        self._revision = 0
        self._allocated: tuple[int, frozenset[DeviceID]] = (0, frozenset())
        listers.add_view_handler("ResourceClaim", self.on_informer_change)
        for claim in listers.resource_claims():
            self.on_informer_change(None, claim)

    # -- fed by the informer ----------------------------------------------------------------------------
    def on_informer_change(self, old: ResourceClaim | None, new: ResourceClaim | None) -> None:
        """A watch event: a newer version replaces what is held (assumed or not); a deletion drops both."""
        with self._lock:
            if new is None:
                if old is not None:
                    self._api.pop(old.key, None)
                    self._set_latest(old.key, None)
                return
            stored = self._latest.get(new.key)
            if stored is not None and _rv(new) <= _rv(stored):
                return  # not newer: keep what is held (the scheduler's own write, typically)
            self._api[new.key] = new
            self._set_latest(new.key, new)

    def _set_latest(self, key: str, claim: ResourceClaim | None) -> None:
        before = self._latest.pop(key, None)
        if claim is not None:
            self._latest[key] = claim
        devices, held = self._devices, self._held
        if before is not None:
            for device in before.allocated_devices():
                devices[device] -= 1
                if devices[device] <= 0:
                    del devices[device]
                    held.discard(device)
        if claim is not None:
            for device in claim.allocated_devices():
                devices[device] += 1
                held.add(device)
        self._revision += 1

    # -- reads ------------------------------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> ResourceClaim:
        """The latest claim (assumed or informer's); ClaimNotFound when there is none."""
        key = f"{namespace}/{name}"
        found = self._latest.get(key)
        if found is None:
            raise ClaimNotFound(key)
        return found

    def list(self) -> list[ResourceClaim]:
        with self._lock:
            return list(self._latest.values())

    def allocated_devices(self) -> frozenset[DeviceID]:
        """ListAllAllocatedDevices: the devices every claim holds, allocations in flight included."""
        with self._lock:
            revision, devices = self._allocated
            if revision != self._revision:
                devices = frozenset(self._held)
                self._allocated = (self._revision, devices)
            if not self._in_flight:
                return devices
            return devices | {d for claim in self._in_flight.values() for d in claim.allocated_devices()}

    # -- the scheduler's own writes ---------------------------------------------------------------------
    def assume(self, claim: ResourceClaim) -> None:
        """AssumeClaimAfterAPICall: hold ``claim`` (as the API server returned it) until the informer
        has something newer."""
        with self._lock:
            stored = self._latest.get(claim.key)
            if stored is None:
                raise ClaimNotFound(claim.key)
            if _rv(claim) < _rv(stored):
                raise OutOfSync(
                    f'ResourceClaim "{claim.key}" is out of sync (stored: {_rv(stored)}, assume: {_rv(claim)})'
                )
            self._set_latest(claim.key, claim)

    def restore(self, namespace: str, name: str) -> None:
        """AssumedClaimRestore: back to the informer's version."""
        key = f"{namespace}/{name}"
        with self._lock:
            api = self._api.get(key)
            if api is not None and self._latest.get(key) is not api:
                self._set_latest(key, api)

    def signal_pending_allocation(self, uid: str, allocated: ResourceClaim) -> None:
        """SignalClaimPendingAllocation: Reserve chose devices for the claim; they count as taken."""
        with self._lock:
            self._in_flight[uid] = allocated

    def remove_pending_allocation(self, uid: str) -> bool:
        """RemoveClaimPendingAllocation; whether there was one."""
        with self._lock:
            return self._in_flight.pop(uid, None) is not None

    def has_pending_allocation(self, uid: str) -> bool:
        return uid in self._in_flight


class DRAManager:
    """Claims, slices and classes for DynamicResources; one per scheduler (see :func:`manager_for`)."""

    def __init__(self, listers: Listers, *, partitionable: bool = False) -> None:
        self.listers = listers
        self.partitionable = partitionable
        self.claims = ClaimTracker(listers)
        self._lock = threading.Lock()
        self._slice_revision = 0
        self._index: tuple[int, SliceIndex] | None = None
        #: Per-node free-device counts of simple requests, for the current slices.
        self.counts = CountsCache()
        listers.add_view_handler("ResourceSlice", self._slice_changed)

    def _slice_changed(self, old: ResourceSlice | None, new: ResourceSlice | None) -> None:
        with self._lock:
            self._slice_revision += 1

    def slices(self) -> SliceIndex:
        """The slices, indexed; the same index (and its per-node pools) until a slice changes."""
        with self._lock:
            revision = self._slice_revision
            if self._index is not None and self._index[0] == revision:
                return self._index[1]
        index = SliceIndex(self.listers.resource_slices(), partitionable=self.partitionable)
        with self._lock:
            if self._slice_revision == revision:
                self._index = (revision, index)
        return index

    def device_class(self, name: str) -> DeviceClass | None:
        return self.listers.device_class(name)


def manager_for(listers: Listers, *, partitionable: bool = False) -> DRAManager:
    """The scheduler's one DRA manager (made on first use), shared by every profile's plugin."""
    return listers.derived(DERIVED_NAME, lambda: DRAManager(listers, partitionable=partitionable))
