"""The writes DynamicResources makes: conflicts retried on a fresh read (five attempts), upstream's texts."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra import AllocationResult, DeviceRequestAllocationResult, ResourceClaim
from kubesched.api.objects import Pod
from kubesched.cluster.protocol import Conflict
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.plugins.dynamicresources.binding import FINALIZER, BindError, bind_claim, deallocate, unreserve
from tests.dra import DRIVER, allocated, claim_dict, claim_pod, request_dict

ALLOCATION = AllocationResult(results=(DeviceRequestAllocationResult("r", DRIVER, "p", "g0"),))


class Racing(EmbeddedCluster):
    """A cluster where someone else writes the claim just before each of our first ``races`` status writes."""

    def __init__(self, races: int) -> None:
        super().__init__(synchronous=True)
        self.races = races
        self.gets = 0

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        if self.races:
            self.races -= 1
            current = super().get("ResourceClaim", "default", "c")
            current["metadata"].setdefault("labels", {})["touched"] = str(self.races)
            self.update(current)  # a newer resourceVersion: ours is stale now
        return super().update_status(obj)

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        self.gets += 1
        return super().get(kind, namespace, name)


def setup(races: int = 0, status: dict[str, Any] | None = None) -> tuple[Racing, ResourceClaim, Pod]:
    cluster = Racing(races)
    stored = cluster.create(claim_dict("c", request_dict("r"), status=status))
    pod = Pod.from_dict(cluster.create(claim_pod("p")))
    cluster.gets = 0
    return cluster, ResourceClaim.from_dict(stored), pod


@pytest.mark.parametrize("races", [0, 1, 4])
def test_bind_claim_retries_conflicts_on_the_claim_read_anew(races: int) -> None:
    cluster, claim, pod = setup(races)
    updated = bind_claim(cluster, claim, ALLOCATION, pod)
    assert updated.allocation is not None and updated.is_reserved_for(pod.uid)
    assert FINALIZER in (updated.raw["metadata"].get("finalizers") or [])
    assert cluster.gets == races  # the first attempt uses the claim the scheduler has


def test_bind_claim_gives_up_after_five_conflicts_with_upstreams_words() -> None:
    cluster, claim, pod = setup(5)
    with pytest.raises(BindError) as err:
        bind_claim(cluster, claim, ALLOCATION, pod)
    assert str(err.value) == (
        "add allocation and reservation to claim default/c: "
        + Conflict.modified("resourceclaims.resource.k8s.io", "c").message
    )


def test_a_claim_allocated_meanwhile_is_not_allocated_again() -> None:
    cluster, claim, pod = setup()
    cluster.update_status({**claim.raw, "status": allocated(("r", DRIVER, "p", "g1"))})
    with pytest.raises(BindError, match=r"^claim default/c got allocated elsewhere in the meantime$"):
        bind_claim(cluster, claim, ALLOCATION, pod)  # the stale claim conflicts, the fresh one is allocated


def test_unreserve_and_deallocate() -> None:
    cluster, claim, pod = setup()
    bound = bind_claim(cluster, claim, ALLOCATION, pod)
    unreserve(cluster, bound, pod)
    stored = cluster.get("ResourceClaim", "default", "c")
    assert "reservedFor" not in stored["status"] and stored["status"]["allocation"]
    deallocate(cluster, ResourceClaim.from_dict(stored))
    assert cluster.get("ResourceClaim", "default", "c")["status"] == {}
    with pytest.raises(BindError, match="the object has been modified"):
        deallocate(cluster, ResourceClaim.from_dict(stored))  # stale: PostFilter does not retry
