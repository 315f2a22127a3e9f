"""The embedded API server on DRA objects: defaults, validation with the API server's errors, and the
ResourceClaim status subresource (allocation immutable once set, at most 256 reservations)."""

from __future__ import annotations

import re

import pytest

from kubesched.cluster.protocol import Conflict, Invalid
from kubesched.embedded.apiserver import EmbeddedCluster
from tests.dra import DRIVER, allocated, claim_dict, device_class_dict, request_dict, slice_dict, template_dict
from tests.embedded.conftest import pod


def test_requests_are_defaulted_on_create() -> None:
    cluster = EmbeddedCluster()
    stored = cluster.create(claim_dict("c", request_dict("r"), request_dict("all", mode="All")))
    exact, every = (r["exactly"] for r in stored["spec"]["devices"]["requests"])
    assert (exact["allocationMode"], exact["count"]) == ("ExactCount", 1)
    assert every == {"deviceClassName": "gpu", "allocationMode": "All"}
    template = cluster.create(template_dict("t", request_dict("r")))
    assert template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            device_class_dict("gpu", "device.driver"),
            'DeviceClass.resource.k8s.io "gpu" is invalid: spec.selectors[0].cel.expression: Invalid value: '
            '"device.driver": must evaluate to bool or the unknown type, not string',
        ),
        (
            slice_dict("s", ["g0", "g0"], node="n1"),
            'ResourceSlice.resource.k8s.io "s" is invalid: spec.devices[1].name: Duplicate value: "g0"',
        ),
        (
            claim_dict("c", request_dict("r", count=-2)),
            'ResourceClaim.resource.k8s.io "c" is invalid: spec.devices.requests[0].exactly.count: Invalid value: -2: '
            "must be greater than zero",
        ),
    ],
)
def test_invalid_objects_are_refused(obj: dict, message: str) -> None:
    with pytest.raises(Invalid) as err:
        EmbeddedCluster().create(obj)
    assert str(err.value) == message


def test_admin_access_needs_the_namespace_label() -> None:
    cluster = EmbeddedCluster()
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops"}})
    with pytest.raises(
        Invalid,
        match=re.escape(
            "spec.devices.requests[0].adminAccess: Forbidden: admin access to "
            "devices requires the `resource.kubernetes.io/admin-access: true` "
            "label"
        ),
    ):
        cluster.create(claim_dict("c", request_dict("r", admin=True), namespace="ops"))
    cluster.create(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "admin", "labels": {"resource.kubernetes.io/admin-access": "true"}},
        }
    )
    cluster.create(claim_dict("c", request_dict("r", admin=True), namespace="admin"))


def test_the_claim_spec_is_immutable_and_its_status_is_a_subresource() -> None:
    cluster = EmbeddedCluster()
    claim = cluster.create(claim_dict("c", request_dict("r")))
    changed = {**claim, "spec": claim_dict("c", request_dict("other"))["spec"]}
    with pytest.raises(
        Invalid,
        match=r'ResourceClaim.resource.k8s.io "c" is invalid: spec: Invalid value: .*: '
        "field is immutable",
    ):
        cluster.update(changed)
    # An update of the claim keeps the stored status ...
    kept = cluster.update(
        {
            **claim,
            "metadata": {**claim["metadata"], "labels": {"a": "b"}},
            "status": allocated(("r", DRIVER, "n1", "g0")),
        }
    )
    assert kept["status"] == {} and kept["metadata"]["labels"] == {"a": "b"}
    # ... the status subresource writes it, and nothing else.
    status = {**allocated(("r", DRIVER, "n1", "g0")), "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    written = cluster.update_status({**kept, "spec": {}, "status": status})
    assert written["status"] == status and written["spec"] == kept["spec"]
    assert written["metadata"]["generation"] == kept["metadata"]["generation"]
    with pytest.raises(Conflict):
        cluster.update_status({**kept, "status": status})  # stale resourceVersion
    other = allocated(("r", DRIVER, "n1", "g1"))
    with pytest.raises(Invalid, match=r"status\.allocation: Invalid value: .*: field is immutable"):
        cluster.update_status({**written, "status": other})


def test_a_claim_is_reserved_for_at_most_256_consumers() -> None:
    cluster = EmbeddedCluster()
    claim = cluster.create(claim_dict("c", request_dict("r"), status=allocated(("r", DRIVER, "n1", "g0"))))
    many = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(257)]
    with pytest.raises(Invalid) as err:
        cluster.update_status({**claim, "status": {**claim["status"], "reservedFor": many}})
    assert str(err.value) == (
        'ResourceClaim.resource.k8s.io "c" is invalid: status.reservedFor: Too many: 257: must have at most 256 items'
    )
    assert cluster.update_status({**claim, "status": {**claim["status"], "reservedFor": many[:256]}})


def test_only_claims_have_a_status_subresource_here() -> None:
    cluster = EmbeddedCluster()
    created = cluster.create(pod("p"))
    with pytest.raises(Invalid, match="Pod has no status subresource here"):
        cluster.update_status(created)


def test_slice_identity_fields_are_immutable() -> None:
    cluster = EmbeddedCluster()
    created = cluster.create(slice_dict("s", ["g0"], node="n1"))
    moved = {**created, "spec": {**created["spec"], "nodeName": "n2"}}
    with pytest.raises(Invalid, match=re.escape('spec.nodeName: Invalid value: "n2": field is immutable')):
        cluster.update(moved)
    grown = {**created, "spec": {**created["spec"], "devices": [{"name": "g0"}, {"name": "g1"}]}}
    assert len(cluster.update(grown)["spec"]["devices"]) == 2
