"""REST paths of the kinds the scheduler reads and writes (``/api/v1/namespaces/ns/pods/name``)."""

from __future__ import annotations

from kubesched.cluster.kinds import KindInfo, kind_info


def group_version_path(api_version: str) -> str:
    """``v1`` -> ``/api/v1``; ``policy/v1`` -> ``/apis/policy/v1``."""
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"


def collection_path(kind: str, namespace: str | None = None, *, api_version: str | None = None) -> str:
    """The collection URL of ``kind`` (across namespaces when a namespaced kind gets no namespace)."""
    info = kind_info(kind)
    base = group_version_path(api_version or info.preferred_api_version)
    if info.namespaced and namespace:
        return f"{base}/namespaces/{namespace}/{info.resource}"
    return f"{base}/{info.resource}"


def object_path(
    kind: str, namespace: str | None, name: str, subresource: str = "", *, api_version: str | None = None
) -> str:
    info: KindInfo = kind_info(kind)
    path = f"{collection_path(kind, namespace if info.namespaced else None, api_version=api_version)}/{name}"
    return f"{path}/{subresource}" if subresource else path
