"""DRA objects refused by the reference kube-apiserver v1.34 and by the embedded one, with the same text."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.cluster.protocol import ApiError
from kubesched.embedded.apiserver import EmbeddedCluster
from tests.dra import (
    DRIVER,
    allocated,
    claim_dict,
    device_class_dict,
    device_dict,
    first_available_dict,
    request_dict,
    slice_dict,
)

pytestmark = pytest.mark.controlplane

BAD: list[tuple[str, dict[str, Any]]] = [
    ("selector not bool", device_class_dict("dra-v-wrong", "device.driver")),
    ("selector syntax", device_class_dict("dra-v-syntax", "1 +")),
    ("duplicate device", slice_dict("dra-v-dup", ["g0", "g0"], node="n1")),
    ("no node selection", slice_dict("dra-v-nowhere", ["g0"])),
    ("negative count", claim_dict("dra-v-count", request_dict("r", count=-1))),
    (
        "count with All",
        claim_dict(
            "dra-v-all", {"name": "r", "exactly": {"deviceClassName": "gpu", "allocationMode": "All", "count": 2}}
        ),
    ),
    ("unknown mode", claim_dict("dra-v-mode", request_dict("r", mode="Some"))),
    ("duplicate request", claim_dict("dra-v-duprequest", request_dict("r"), request_dict("r"))),
    (
        "constraint without domain",
        claim_dict("dra-v-constraint", request_dict("r"), constraints=[{"matchAttribute": "model"}]),
    ),
    (
        "constraint names no request",
        claim_dict(
            "dra-v-ref",
            first_available_dict("r", request_dict("a")),
            constraints=[{"requests": ["r/b"], "matchAttribute": "x.io/m"}],
        ),
    ),
    ("bad version", slice_dict("dra-v-version", [device_dict("g0", {"v": "v1.02.3"})], node="n1")),
    ("bad attribute name", slice_dict("dra-v-attr", [device_dict("g0", {"a-b": 1})], node="n1")),
    (
        "parameters not an object",
        claim_dict("dra-v-params", request_dict("r"), config=[{"opaque": {"driver": DRIVER, "parameters": [1]}}]),
    ),
    ("admin access in an unlabelled namespace", claim_dict("dra-v-admin", request_dict("r", admin=True))),
    ("too many devices", slice_dict("dra-v-many", [f"g{i}" for i in range(129)], node="n1")),
    ("undefined field", device_class_dict("dra-v-field", "device.foo == 1")),
]


@pytest.fixture
def kube(control_plane: Any) -> Iterator[Any]:
    from kubesched.live.cluster import KubeCluster
    from kubesched.live.connection import ConnectionOptions, RestClient

    rest = RestClient(ConnectionOptions(kubeconfig=str(control_plane.admin_kubeconfig), qps=-1))
    yield KubeCluster(rest)
    rest.close()


def _refusal(create: Any, obj: dict[str, Any]) -> str:
    try:
        create(obj)
    except ApiError as err:
        return err.message
    raise AssertionError(f"{obj['kind']} {obj['metadata']['name']} was accepted")


@pytest.mark.parametrize(("name", "obj"), BAD, ids=[row[0] for row in BAD])
def test_the_same_objects_are_refused_with_the_same_text(kube: Any, name: str, obj: dict[str, Any]) -> None:
    assert _refusal(EmbeddedCluster().create, obj) == _refusal(kube.create, obj)


def test_a_claim_reserved_for_too_many_is_refused_alike(kube: Any) -> None:
    name = f"dra-v-{uuid.uuid4().hex[:8]}"
    claim = claim_dict(name, request_dict("r"))
    status = {
        **allocated(("r", DRIVER, "n1", "g0")),
        "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": str(uuid.uuid4())} for i in range(257)],
    }
    embedded = EmbeddedCluster()
    stored = [embedded.create(claim), kube.create(claim)]
    try:
        texts = [
            _refusal(cluster.update_status, {**obj, "status": status})
            for cluster, obj in zip((embedded, kube), stored, strict=True)
        ]
        assert texts[0] == texts[1]
    finally:
        kube.delete("ResourceClaim", "default", name)
