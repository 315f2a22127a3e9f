"""DRA objects for tests: device classes, slices, devices, claims, requests, as plain dicts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

API = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"


def device_class_dict(name: str, *selectors: str, config: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if config:
        spec["config"] = [dict(c) for c in config]
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def attr(value: object) -> dict[str, Any]:
    """A typed attribute value: int, bool or string; ``v1.2.3`` (a string starting with v) is a version."""
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    text = str(value)
    return {"version": text[1:]} if text.startswith("v") and text[1:2].isdigit() else {"string": text}


def device_dict(
    name: str, attributes: Mapping[str, object] | None = None, capacity: Mapping[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if attributes:
        out["attributes"] = {k: attr(v) for k, v in attributes.items()}
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    out.update(extra)
    return out


def slice_dict(
    name: str,
    devices: Iterable[Mapping[str, Any] | str],
    *,
    node: str | None = None,
    driver: str = DRIVER,
    pool: str | None = None,
    generation: int = 0,
    count: int = 1,
    all_nodes: bool = False,
    node_selector: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or node or name, "generation": generation, "resourceSliceCount": count},
        "devices": [device_dict(d) if isinstance(d, str) else dict(d) for d in devices],
    }
    if node is not None:
        spec["nodeName"] = node
    if all_nodes:
        spec["allNodes"] = True
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def request_dict(
    name: str,
    device_class: str = "gpu",
    *,
    count: int | None = None,
    mode: str | None = None,
    selectors: Iterable[str] = (),
    admin: bool | None = None,
) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if mode is not None:
        exactly["allocationMode"] = mode
    if count is not None:
        exactly["count"] = count
    if admin is not None:
        exactly["adminAccess"] = admin
    return {"name": name, "exactly": exactly}


def first_available_dict(name: str, *subs: Mapping[str, Any]) -> dict[str, Any]:
    """A prioritized list; each sub is a request_dict whose ``exactly`` becomes the subrequest."""
    return {"name": name, "firstAvailable": [{"name": s["name"], **s["exactly"]} for s in subs]}


def claim_dict(
    name: str,
    *requests: Mapping[str, Any],
    namespace: str = "default",
    constraints: Iterable[Mapping[str, Any]] = (),
    config: Iterable[Mapping[str, Any]] = (),
    status: Mapping[str, Any] | None = None,
    uid: str = "",
) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": [dict(r) for r in requests]}
    if constraints:
        devices["constraints"] = [dict(c) for c in constraints]
    if config:
        devices["config"] = [dict(c) for c in config]
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid:
        meta["uid"] = uid
    out: dict[str, Any] = {"apiVersion": API, "kind": "ResourceClaim", "metadata": meta, "spec": {"devices": devices}}
    if status is not None:
        out["status"] = dict(status)
    return out


def template_dict(name: str, *requests: Mapping[str, Any], namespace: str = "default") -> dict[str, Any]:
    claim = claim_dict(name, *requests)
    return {
        "apiVersion": API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": claim["spec"]},
    }


def opaque(driver: str = DRIVER, **parameters: Any) -> dict[str, Any]:
    return {"opaque": {"driver": driver, "parameters": parameters or {"a": 1}}}


def allocated(*devices: tuple[str, str, str, str], admin: bool = False) -> dict[str, Any]:
    """A status with an allocation of (request, driver, pool, device) results."""
    results = []
    for request, driver, pool, device in devices:
        result: dict[str, Any] = {"request": request, "driver": driver, "pool": pool, "device": device}
        if admin:
            result["adminAccess"] = True
        results.append(result)
    return {"allocation": {"devices": {"results": results}}}


def by_name(pod_claim: str, claim: str) -> dict[str, Any]:
    """A pod's ``spec.resourceClaims`` entry naming a claim."""
    return {"name": pod_claim, "resourceClaimName": claim}


def by_template(pod_claim: str, template: str) -> dict[str, Any]:
    """A pod's ``spec.resourceClaims`` entry naming a template."""
    return {"name": pod_claim, "resourceClaimTemplateName": template}


def claim_pod(
    name: str,
    *entries: Mapping[str, Any],
    namespace: str = "default",
    statuses: Mapping[str, str | None] | None = None,
    node_name: str = "",
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A pod using claims (``entries`` from :func:`by_name` / :func:`by_template`); ``statuses`` maps a pod
    claim to its generated claim (``status.resourceClaimStatuses``)."""
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "cuda", "resources": {"claims": [{"name": e["name"]} for e in entries]}}],
        "resourceClaims": [dict(e) for e in entries],
    }
    if node_name:
        spec["nodeName"] = node_name
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = dict(annotations)
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if statuses is not None:
        out["status"] = {
            "resourceClaimStatuses": [
                {"name": k, **({"resourceClaimName": v} if v is not None else {})} for k, v in statuses.items()
            ]
        }
    return out


def owned_by(claim: dict[str, Any], pod: Mapping[str, Any], pod_claim: str = "gpu") -> dict[str, Any]:
    """``claim`` as the resourceclaim controller makes it for ``pod`` (controller reference, annotation)."""
    meta = claim["metadata"]
    meta["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod["metadata"]["name"],
            "uid": pod["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    meta.setdefault("annotations", {})["resource.kubernetes.io/pod-claim-name"] = pod_claim
    return claim


def node_selector(**labels: str) -> dict[str, Any]:
    """A node selector of one term requiring each label's value."""
    return {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in labels.items()]}
        ]
    }


def on_node(node: str) -> dict[str, Any]:
    """The node selector an allocation of node-local devices carries."""
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
