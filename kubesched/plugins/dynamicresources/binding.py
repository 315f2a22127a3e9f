"""What DynamicResources writes through the cluster client: allocations, reservations, deallocations.

PreBind records Reserve's allocation and the pod's reservation in the claim's status (adding the
finalizer that stops a claim with allocated devices from going away first); Unreserve takes the pod's
reservation out again; PostFilter deallocates a claim no pod uses that keeps the pod from a node.

Writes that lose a race (409 Conflict) are retried on the claim fetched anew, at most five times
(client-go's retry.DefaultRetry; without its 10 ms pauses: the embedded cluster answers at once and a
live one's conflict is resolved by the fresh read). Errors carry kube-scheduler's texts
(``add allocation and reservation to claim default/gpu: ...``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.dra import AllocationResult, ResourceClaim
from kubesched.api.objects import Pod
from kubesched.cluster.protocol import ApiError, Cluster, Conflict

log = logging.getLogger(__name__)

#: resourceapi.Finalizer: the claim's devices must be deallocated before it can go.
FINALIZER = "resource.kubernetes.io/delete-protection"
#: retry.DefaultRetry's steps.
RETRY_STEPS = 5


class BindError(Exception):
    """A claim could not be written; the message is the status text."""


class _Conflicting(Exception):
    """One attempt lost a race; the message is what the caller reports if no attempt succeeds."""


def kobj(claim: ResourceClaim | dict[str, Any]) -> str:
    if isinstance(claim, ResourceClaim):
        return f"{claim.namespace}/{claim.name}"
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _call(write: Callable[[], dict[str, Any]], what: str) -> dict[str, Any]:
    """One API call; a conflict becomes _Conflicting, any other API error a BindError, both worded."""
    try:
        return write()
    except Conflict as err:
        raise _Conflicting(f"{what}: {err.message}") from err
    except ApiError as err:
        raise BindError(f"{what}: {err.message}") from err


def _writable(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a claim whose metadata and status (the parts written here) are its own: the rest is
    shared with the scheduler's copy, which is never changed (a deep copy of a claim with hundreds of
    reservations would cost more than the write)."""
    obj = dict(raw)
    obj["metadata"] = dict(raw.get("metadata") or {})
    obj["status"] = dict(raw.get("status") or {})
    return obj


def _retry_on_conflict(
    cluster: Cluster, claim: ResourceClaim, attempt: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """retry.RetryOnConflict: the first attempt on the claim the scheduler has, later ones on a fresh GET."""
    obj = _writable(claim.raw)
    last: _Conflicting | None = None
    for step in range(RETRY_STEPS):
        if step:
            try:
                obj = _writable(cluster.get("ResourceClaim", claim.namespace, claim.name))
            except ApiError as err:
                raise BindError(f"get updated claim {kobj(claim)} after conflict: {err.message}") from err
        try:
            return attempt(obj)
        except _Conflicting as err:
            last = err
    assert last is not None
    raise BindError(str(last))


def bind_claim(cluster: Cluster, claim: ResourceClaim, allocation: AllocationResult | None, pod: Pod) -> ResourceClaim:
    """PreBind's bindClaim: store Reserve's allocation (if any) and reserve the claim for the pod; the
    claim as the API server returned it."""

    def attempt(obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.setdefault("metadata", {})
        if meta.get("deletionTimestamp"):
            raise BindError(f"claim {kobj(obj)} got deleted in the meantime")
        if allocation is not None:
            if (obj.get("status") or {}).get("allocation") is not None:
                raise BindError(f"claim {kobj(obj)} got allocated elsewhere in the meantime")
            finalizers = list(meta.get("finalizers") or [])
            if FINALIZER not in finalizers:
                meta["finalizers"] = [*finalizers, FINALIZER]
                obj = _call(lambda: cluster.update(obj), f"add finalizer to claim {kobj(obj)}")
            obj.setdefault("status", {})["allocation"] = allocation.to_dict()
        status = obj.setdefault("status", {})
        status["reservedFor"] = [
            *(status.get("reservedFor") or []),
            {"resource": "pods", "name": pod.name, "uid": pod.uid},
        ]
        what = "add allocation and reservation to claim" if allocation is not None else "add reservation to claim"
        return _call(lambda: cluster.update_status(obj), f"{what} {kobj(obj)}")

    return ResourceClaim.from_dict(_retry_on_conflict(cluster, claim, attempt))


def unreserve(cluster: Cluster, claim: ResourceClaim, pod: Pod) -> None:
    """Take the pod out of the claim's ``status.reservedFor`` (kube-scheduler patches the entry away;
    here the status is written back without it). Failures are logged: the next attempt tries again."""

    def attempt(obj: dict[str, Any]) -> dict[str, Any]:
        status = obj.setdefault("status", {})
        status["reservedFor"] = [
            r for r in status.get("reservedFor") or [] if not (isinstance(r, dict) and r.get("uid") == pod.uid)
        ] or None
        if status["reservedFor"] is None:
            del status["reservedFor"]
        return _call(lambda: cluster.update_status(obj), f"unreserve claim {kobj(obj)}")

    try:
        _retry_on_conflict(cluster, claim, attempt)
    except BindError as err:
        log.error("unreserve resourceclaim %s for pod %s/%s: %s", kobj(claim), pod.namespace, pod.name, err)


def deallocate(cluster: Cluster, claim: ResourceClaim) -> None:
    """PostFilter: clear the claim's allocation, reservations and device status (one write, no retry);
    BindError with the API server's message when it fails."""
    obj = _writable(claim.raw)
    status = obj["status"]
    for key in ("reservedFor", "allocation", "devices"):
        status.pop(key, None)
    try:
        cluster.update_status(obj)
    except ApiError as err:
        raise BindError(err.message) from err
