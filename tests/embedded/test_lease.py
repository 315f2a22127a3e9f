"""Leases in the embedded cluster: stored, versioned, watched and validated as the API server does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubesched.cluster.protocol import AlreadyExists, Conflict, Invalid, NotFound, WatchEvent
from kubesched.embedded.apiserver import EmbeddedCluster


def lease(name: str = "kube-scheduler", namespace: str = "kube-system", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "holderIdentity": "a",
            "leaseDurationSeconds": 15,
            "leaseTransitions": 0,
            "acquireTime": "2024-01-01T00:00:00.000000Z",
            "renewTime": "2024-01-01T00:00:00.000000Z",
            **spec,
        },
    }


@pytest.fixture
def cluster(make_cluster: Callable[..., EmbeddedCluster]) -> EmbeddedCluster:
    return make_cluster(synchronous=True)


def test_create_get_update_with_resource_version_conflicts(cluster: EmbeddedCluster) -> None:
    seen: list[WatchEvent] = []
    cluster.watch(["Lease"], seen.append)
    created = cluster.create(lease())
    assert cluster.get("Namespace", None, "kube-system")["metadata"]["name"] == "kube-system"
    assert created["spec"]["holderIdentity"] == "a"
    with pytest.raises(AlreadyExists, match=r'leases\.coordination\.k8s\.io "kube-scheduler" already exists'):
        cluster.create(lease())
    renewed = cluster.update({**created, "spec": {**created["spec"], "renewTime": "2024-01-01T00:00:02.000000Z"}})
    assert int(renewed["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    with pytest.raises(Conflict, match="the object has been modified"):
        cluster.update({**created, "spec": {**created["spec"], "holderIdentity": "b"}})
    assert cluster.get("Lease", "kube-system", "kube-scheduler")["spec"]["holderIdentity"] == "a"
    assert [(e.type, e.obj["spec"]["renewTime"]) for e in seen] == [
        ("ADDED", "2024-01-01T00:00:00.000000Z"),
        ("MODIFIED", "2024-01-01T00:00:02.000000Z"),
    ]
    with pytest.raises(NotFound, match=r'leases\.coordination\.k8s\.io "other" not found'):
        cluster.get("Lease", "kube-system", "other")
    with pytest.raises(Invalid, match="namespaced"):
        cluster.get("Lease", None, "kube-scheduler")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"leaseDurationSeconds": 0}, "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"),
        ({"leaseTransitions": -1}, "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"),
        ({"leaseDurationSeconds": "15"}, "spec.leaseDurationSeconds: Invalid value: '15': must be an integer"),
        ({"renewTime": "soon"}, "spec.renewTime: Invalid value: 'soon': must be an RFC 3339 time"),
        ({"holderIdentity": 7}, "spec.holderIdentity: Invalid value: 7: must be a string"),
        ({"preferredHolder": "b"}, "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"),
    ],
)
def test_invalid_leases_are_refused_on_create_and_update(
    cluster: EmbeddedCluster, spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(Invalid) as err:
        cluster.create(lease(**spec))
    assert str(err.value) == f'Lease.coordination.k8s.io "kube-scheduler" is invalid: {message}'
    stored = cluster.create(lease())
    with pytest.raises(Invalid) as err:
        cluster.update({**stored, "spec": {**stored["spec"], **spec}})
    assert message in str(err.value)


def test_a_released_lease_is_valid(cluster: EmbeddedCluster) -> None:
    released = cluster.create(lease(holderIdentity="", leaseDurationSeconds=1))
    assert released["spec"]["holderIdentity"] == ""
