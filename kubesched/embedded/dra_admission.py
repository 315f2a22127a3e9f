"""What kube-apiserver does to DRA objects on write: defaults, validation, the claim status subresource.

Requests default to ``allocationMode: ExactCount`` with ``count: 1``; every DRA object is validated as
``pkg/apis/resource/validation`` validates it (CEL selectors compiled), and refused with 422 Invalid naming
the kind, object and field (``ResourceClaim.resource.k8s.io "gpu" is invalid: spec...: ...``).

A ResourceClaim's status belongs to its status subresource: an update of the claim keeps the stored
status (and may not change the spec, which is immutable), an update of the status keeps the stored spec.
Admin access to devices needs the namespace label ``resource.kubernetes.io/admin-access: "true"``.

One difference on purpose: a claim created with a status keeps it (kube-apiserver would drop it). That
is how a simulation loads claims allocated before it starts, from a snapshot of a live cluster; the
status is validated as a status update would be.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kubesched.api import dra_validation
from kubesched.api.dra import ADMIN_ACCESS_NAMESPACE_LABEL, DRA_KINDS, EXACT_COUNT
from kubesched.api.errors import ObjectError
from kubesched.api.validation import validate_metadata
from kubesched.cluster.kinds import kind_info
from kubesched.cluster.protocol import Invalid


class NamespaceLookup(Protocol):
    def lookup(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None: ...


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _invalid(obj: Mapping[str, Any], err: ObjectError) -> Invalid:
    return Invalid.of(kind_info(str(obj.get("kind"))).qualified_kind, _name(obj), err.path, err.reason)


def _checked(obj: Mapping[str, Any], check: Callable[[], None]) -> None:
    try:
        check()
    except ObjectError as err:
        raise _invalid(obj, err) from None


# ---------------------------------------------------------------------------------------------------------
# Defaults


def _default_request(body: object) -> None:
    if not isinstance(body, dict):
        return
    if not body.get("allocationMode"):
        body["allocationMode"] = EXACT_COUNT
    if body.get("allocationMode") == EXACT_COUNT and not body.get("count"):
        body["count"] = 1


def _default_claim_spec(spec: object) -> None:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            continue
        _default_request(request.get("exactly"))
        subs = request.get("firstAvailable")
        for sub in subs if isinstance(subs, list) else []:
            _default_request(sub)


def apply_defaults(obj: dict[str, Any]) -> None:
    """SetDefaults for the requests of a claim or a template."""
    spec = obj.get("spec")
    if obj.get("kind") == "ResourceClaim":
        _default_claim_spec(spec)
    elif obj.get("kind") == "ResourceClaimTemplate" and isinstance(spec, dict):
        _default_claim_spec(spec.get("spec"))


# ---------------------------------------------------------------------------------------------------------
# Create and update


def _admin_access(obj: Mapping[str, Any], path: str | None, store: NamespaceLookup) -> None:
    """AuthorizedForAdmin: admin access only in a namespace labelled for it."""
    if path is None:
        return
    namespace = str((obj.get("metadata") or {}).get("namespace") or "default")
    ns = store.lookup("Namespace", None, namespace) or {}
    labels = (ns.get("metadata") or {}).get("labels") or {}
    if labels.get(ADMIN_ACCESS_NAMESPACE_LABEL) != "true":
        raise _invalid(
            obj,
            ObjectError(
                path,
                f"Forbidden: admin access to devices requires the "
                f"`{ADMIN_ACCESS_NAMESPACE_LABEL}: true` label on the containing "
                "namespace",
            ),
        )


def _allocation_admin_path(obj: Mapping[str, Any]) -> str | None:
    allocation = (obj.get("status") or {}).get("allocation") or {}
    for i, result in enumerate(((allocation.get("devices") or {}).get("results")) or []):
        if isinstance(result, dict) and result.get("adminAccess") is True:
            return f"status.allocation.devices.results[{i}].adminAccess"
    return None


def admit_create(obj: dict[str, Any], store: NamespaceLookup) -> None:
    """Default and validate a new DRA object; a claim's status is checked as a status update."""
    kind = str(obj.get("kind"))
    if kind not in DRA_KINDS:
        return
    apply_defaults(obj)
    _checked(obj, lambda: validate_metadata(obj.get("metadata"), kind))
    _checked(obj, lambda: dra_validation.BY_KIND[kind](obj))
    if kind == "ResourceClaim":
        _admin_access(obj, dra_validation.admin_access_requested(obj), store)
        _admin_access(obj, _allocation_admin_path(obj), store)


def _immutable(obj: Mapping[str, Any], old: Mapping[str, Any], path: str, new: object, before: object) -> None:
    if new != before:
        raise _invalid(obj, dra_validation.immutable(path, new))


def admit_update(obj: dict[str, Any], old: Mapping[str, Any]) -> None:
    """Default and validate an update of the object itself (not a subresource)."""
    kind = str(obj.get("kind"))
    if kind not in DRA_KINDS:
        return
    apply_defaults(obj)
    if kind == "ResourceClaim":
        obj["status"] = old.get("status") or {}
    _checked(obj, lambda: validate_metadata(obj.get("metadata"), kind))
    if kind in ("ResourceClaim", "ResourceClaimTemplate"):
        _immutable(obj, old, "spec", obj.get("spec"), old.get("spec"))
    if kind == "ResourceSlice":
        _checked(obj, lambda: dra_validation.resource_slice_update(obj, old))
    _checked(obj, lambda: dra_validation.BY_KIND[kind](obj))


def status_update(current: Mapping[str, Any], incoming: Mapping[str, Any], store: NamespaceLookup) -> dict[str, Any]:
    """The object a status update of a ResourceClaim stores: the stored claim with the incoming status."""
    kind = str(current.get("kind"))
    if kind != "ResourceClaim":
        raise Invalid(f"{kind} has no status subresource here (only ResourceClaim's is served)")
    status = incoming.get("status") or {}
    if not isinstance(status, dict):
        raise _invalid(current, ObjectError("status", "expected a mapping"))
    new = dict(current)
    new["metadata"] = dict(current["metadata"])
    new["status"] = json.loads(json.dumps(status))
    _checked(new, lambda: dra_validation.claim_status(new, current))
    had_admin = _allocation_admin_path(current) is not None
    if not had_admin:
        _admin_access(new, _allocation_admin_path(new), store)
    return new
