"""``kubesched run`` against kube-apiserver v1.34 with devices: a pod's claim allocated and reserved through
the real API (status subresource, finalizer), and a pod that finds no device refused with upstream's text."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dra import by_name, claim_dict, claim_pod, device_class_dict, request_dict, slice_dict
from tests.live.conftest import Live, node

pytestmark = pytest.mark.controlplane

DRIVER = "gpu.example.com"
OBJECTS = [
    device_class_dict("dra-live-gpu", f'device.driver == "{DRIVER}"'),
    slice_dict("dra-live-n1", ["g0"], node="dra-n1"),
    claim_dict("dra-live-a", request_dict("r", "dra-live-gpu")),
    claim_dict("dra-live-b", request_dict("r", "dra-live-gpu")),
]


def _cleanup(live: Live) -> None:
    for kind in ("resourceclaims", "resourceslices", "deviceclasses"):
        live.kubectl(
            "delete",
            kind,
            "--all",
            *(["-n", "default"] if kind == "resourceclaims" else []),
            "--wait=false",
            check=False,
        )
    # A claim the scheduler allocated carries its finalizer; nothing here runs the resourceclaim controller.
    for name in ("dra-live-a", "dra-live-b"):
        live.kubectl(
            "patch",
            "resourceclaim",
            name,
            "-n",
            "default",
            "--type=merge",
            "-p",
            '{"metadata":{"finalizers":null}}',
            check=False,
        )


@pytest.fixture
def dra(live: Live) -> Any:
    _cleanup(live)
    yield live
    _cleanup(live)


def test_a_claim_is_allocated_and_reserved_through_the_api_and_the_next_pod_is_refused(dra: Live) -> None:
    dra.apply(node("dra-n1"), *OBJECTS)
    dra.start_scheduler()
    dra.apply(claim_pod("dra-a", by_name("gpu", "dra-live-a")))
    assert dra.wait_bound("dra-a") == {"dra-a": "dra-n1"}
    claim = dra.get("resourceclaim", "dra-live-a")
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "r", "driver": DRIVER, "pool": "dra-n1", "device": "g0"}
    ]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["dra-a"]
    dra.apply(claim_pod("dra-b", by_name("gpu", "dra-live-b")))
    messages = dra.wait(
        lambda: [e.get("note") for e in dra.events("dra-b") if e.get("reason") == "FailedScheduling"],
        what="a FailedScheduling event",
    )
    assert messages[0] == (
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
