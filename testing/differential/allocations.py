"""The devices a bound pod got (its claims' ``status.allocation``), and whether two such are the same.

Two allocations agree when, claim entry by claim entry, they hold the same requests on equivalent
devices: devices of one driver whose attributes and capacities are equal (the seeds' devices carry no
attribute that tells two of a node's devices apart, so a scheduler may pick either), and, when both pods
went to one node, the same node selector. When the schedulers chose different nodes of a tie, those
nodes may hold different devices (a prioritized list then falls to another subrequest): the entries must
then both be allocated, for the same requests.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

#: Claim entry name -> {"devices": [{request, driver, pool, device}], "nodeSelector": ...} ({} when the
#: claim is missing or not allocated).
Allocations = dict[str, dict[str, Any]]


def claim_name(pod: Mapping[str, Any], entry: Mapping[str, Any]) -> str | None:
    """The claim a pod's ``spec.resourceClaims`` entry uses (a template's once it is made)."""
    if entry.get("resourceClaimName"):
        return str(entry["resourceClaimName"])
    for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
        if status.get("name") == entry.get("name"):
            return status.get("resourceClaimName")
    return None


def pod_allocations(pod: Mapping[str, Any], claims: Mapping[str, Mapping[str, Any]]) -> Allocations:
    """Each of the pod's claim entries with its claim's allocation; ``claims`` by name, in its namespace."""
    out: Allocations = {}
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        name = claim_name(pod, entry)
        claim = claims.get(name) if name else None
        allocation = ((claim or {}).get("status") or {}).get("allocation") or {}
        if not allocation:
            out[entry["name"]] = {}
            continue
        results = (allocation.get("devices") or {}).get("results") or []
        devices = [{k: r.get(k) for k in ("request", "driver", "pool", "device")} for r in results]
        out[entry["name"]] = {"devices": devices, "nodeSelector": allocation.get("nodeSelector")}
    return out


def device_signatures(state: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], str]:
    """(driver, pool, device) -> what makes a device what it is: its attributes and capacities."""
    out: dict[tuple[str, str, str], str] = {}
    for obj in state:
        if obj.get("kind") != "ResourceSlice":
            continue
        spec = obj["spec"]
        for device in spec.get("devices") or []:
            out[(spec["driver"], spec["pool"]["name"], device["name"])] = json.dumps(
                {"attributes": device.get("attributes") or {}, "capacity": device.get("capacity") or {}}, sort_keys=True
            )
    return out


def equivalent(
    a: Allocations, b: Allocations, signatures: Mapping[tuple[str, str, str], str], *, same_node: bool
) -> bool:
    """Whether ``a`` and ``b`` allocate the same requests on equivalent devices (see the module)."""
    if a.keys() != b.keys():
        return False
    for entry, left in a.items():
        right = b[entry]
        if bool(left) != bool(right):
            return False
        if not left:
            continue
        if not same_node:
            if _requests(left) != _requests(right):
                return False
            continue
        if _kinds(left, signatures) != _kinds(right, signatures):
            return False
        if same_node and left.get("nodeSelector") != right.get("nodeSelector"):
            return False
    return True


def _requests(allocation: Mapping[str, Any]) -> set[str]:
    """The claim's requests an allocation served (a prioritized list's subrequest counts as its request)."""
    return {str(d["request"]).split("/")[0] for d in allocation.get("devices") or []}


def _kinds(allocation: Mapping[str, Any], signatures: Mapping[tuple[str, str, str], str]) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for d in allocation.get("devices") or []:
        key = (str(d["driver"]), str(d["pool"]), str(d["device"]))
        out[(str(d["request"]), key[0], signatures.get(key, "/".join(key)))] += 1
    return out
