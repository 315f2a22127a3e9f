"""The claim tracker (kube-scheduler's assume cache of claims, in-flight allocations, allocated devices)
and the shared DRA manager."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra import DeviceID, ResourceClaim
from kubesched.cluster.listers import Listers
from kubesched.plugins.dynamicresources.dra_manager import ClaimNotFound, ClaimTracker, OutOfSync, manager_for
from tests.dra import DRIVER, allocated, claim_dict, request_dict, slice_dict


def claim(name: str, rv: int, *devices: str, admin: bool = False) -> dict[str, Any]:
    obj = claim_dict(
        name,
        request_dict("r"),
        uid=f"uid-{name}",
        status=allocated(*[("r", DRIVER, "p", d) for d in devices], admin=admin) if devices else None,
    )
    obj["metadata"]["resourceVersion"] = str(rv)
    return obj


def held(tracker: ClaimTracker) -> set[str]:
    return {d.device for d in tracker.allocated_devices()}


def test_informer_claims_are_read_and_their_devices_held() -> None:
    listers = Listers()
    listers.apply("ADDED", "ResourceClaim", claim("a", 1, "g0"))
    tracker = ClaimTracker(listers)  # what existed is read at once
    listers.apply("ADDED", "ResourceClaim", claim("b", 2, "g1", "g2"))
    listers.apply("ADDED", "ResourceClaim", claim("admin", 3, "g3", admin=True))  # admin access holds nothing
    assert held(tracker) == {"g0", "g1", "g2"}
    listers.apply("DELETED", "ResourceClaim", claim("b", 4))
    assert held(tracker) == {"g0"}
    assert tracker.get("default", "a").name == "a"
    with pytest.raises(ClaimNotFound, match='could not find ResourceClaim "default/b"'):
        tracker.get("default", "b")


def test_an_assumed_claim_stays_until_the_informer_has_a_newer_one() -> None:
    listers = Listers()
    tracker = ClaimTracker(listers)
    listers.apply("ADDED", "ResourceClaim", claim("a", 1))
    tracker.assume(ResourceClaim.from_dict(claim("a", 2, "g0")))  # the API server's answer to PreBind
    assert held(tracker) == {"g0"}
    listers.apply("MODIFIED", "ResourceClaim", claim("a", 2, "g0"))  # the watch event of that write
    assert tracker.get("default", "a").allocation is not None
    listers.apply("MODIFIED", "ResourceClaim", claim("a", 3))  # deallocated later
    assert held(tracker) == set()
    with pytest.raises(OutOfSync, match="out of sync"):
        tracker.assume(ResourceClaim.from_dict(claim("a", 2, "g0")))


def test_restore_goes_back_to_the_informer_version() -> None:
    listers = Listers()
    tracker = ClaimTracker(listers)
    listers.apply("ADDED", "ResourceClaim", claim("a", 1))
    tracker.assume(ResourceClaim.from_dict(claim("a", 1, "g0")))
    tracker.restore("default", "a")
    assert tracker.get("default", "a").allocation is None and held(tracker) == set()


def test_allocations_in_flight_count_as_taken_until_removed() -> None:
    listers = Listers()
    tracker = ClaimTracker(listers)
    listers.apply("ADDED", "ResourceClaim", claim("a", 1, "g0"))
    tracker.signal_pending_allocation("uid-b", ResourceClaim.from_dict(claim("b", 1, "g1")))
    assert tracker.has_pending_allocation("uid-b")
    assert tracker.allocated_devices() == {DeviceID(DRIVER, "p", "g0"), DeviceID(DRIVER, "p", "g1")}
    assert tracker.remove_pending_allocation("uid-b") and not tracker.remove_pending_allocation("uid-b")
    assert held(tracker) == {"g0"}


def test_one_manager_per_listers_and_the_slice_index_lives_until_a_slice_changes() -> None:
    listers = Listers()
    manager = manager_for(listers)
    assert manager_for(listers) is manager  # every profile's plugin shares it
    listers.apply("ADDED", "ResourceSlice", slice_dict("s", ["g0"], node="n1"))
    index = manager.slices()
    listers.apply("ADDED", "ResourceClaim", claim("a", 1))
    assert manager.slices() is index  # claims do not touch the slices
    listers.apply("MODIFIED", "ResourceSlice", slice_dict("s", ["g0", "g1"], node="n1"))
    assert manager.slices() is not index
    assert [d.name for p in manager.slices().pools("n1", {}) for s in p.slices for d in s.devices] == ["g0", "g1"]
