"""Allocations of bound pods' claims, compared up to equivalent devices."""

from __future__ import annotations

from typing import Any

from testing.differential.allocations import device_signatures, equivalent, pod_allocations
from testing.differential.compare import AGREE, DISAGREE, compare
from testing.differential.verdict import BOUND, Verdict

SLICE = {
    "kind": "ResourceSlice",
    "spec": {
        "driver": "gpu.example.com",
        "pool": {"name": "n1"},
        "devices": [
            {"name": "gpu-0", "attributes": {"model": {"string": "a100"}}},
            {"name": "gpu-1", "attributes": {"model": {"string": "a100"}}},
            {"name": "gpu-2", "attributes": {"model": {"string": "t4"}}},
        ],
    },
}
SELECTOR = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}


def _claim(name: str, *devices: str) -> dict[str, Any]:
    results = [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": d} for d in devices]
    status = {"allocation": {"devices": {"results": results}, "nodeSelector": SELECTOR}} if devices else {}
    return {"metadata": {"name": name}, "status": status}


def _alloc(*devices: str, selector: Any = SELECTOR) -> dict[str, Any]:
    return {
        "gpu": {
            "devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": d} for d in devices],
            "nodeSelector": selector,
        }
    }


def test_pod_allocations_follow_claim_names_and_template_statuses() -> None:
    pod = {
        "spec": {
            "resourceClaims": [
                {"name": "gpu", "resourceClaimName": "shared"},
                {"name": "made", "resourceClaimTemplateName": "t"},
                {"name": "none", "resourceClaimName": "missing"},
            ]
        },
        "status": {"resourceClaimStatuses": [{"name": "made", "resourceClaimName": "p-made-x7k2p"}]},
    }
    claims = {"shared": _claim("shared", "gpu-0"), "p-made-x7k2p": _claim("p-made-x7k2p")}
    assert pod_allocations(pod, claims) == {"gpu": _alloc("gpu-0")["gpu"], "made": {}, "none": {}}


def test_equivalent_devices_agree_and_others_do_not() -> None:
    signatures = device_signatures([SLICE, {"kind": "Node"}])
    assert equivalent(_alloc("gpu-0"), _alloc("gpu-1"), signatures, same_node=True)
    assert not equivalent(_alloc("gpu-0"), _alloc("gpu-2"), signatures, same_node=True)
    assert not equivalent(_alloc("gpu-0"), _alloc("gpu-0", "gpu-1"), signatures, same_node=True)
    assert not equivalent(_alloc("gpu-0"), {"gpu": {}}, signatures, same_node=True)
    assert not equivalent(_alloc("gpu-0"), {"other": _alloc("gpu-0")["gpu"]}, signatures, same_node=True)
    # The written node selector counts where both went to one node only.
    assert not equivalent(_alloc("gpu-0"), _alloc("gpu-0", selector=None), signatures, same_node=True)
    assert equivalent(_alloc("gpu-0"), _alloc("gpu-0", selector=None), signatures, same_node=False)


def test_on_different_nodes_of_a_tie_only_the_requests_served_count() -> None:
    """Each node holds its own devices (an a100 on one, a t4 on the other): both allocated, same requests."""
    signatures = device_signatures([SLICE])
    assert not equivalent(_alloc("gpu-0"), _alloc("gpu-2"), signatures, same_node=True)
    assert equivalent(_alloc("gpu-0"), _alloc("gpu-2"), signatures, same_node=False)
    assert not equivalent(_alloc("gpu-0"), {"gpu": {}}, signatures, same_node=False)
    served_elsewhere = {
        "gpu": {
            **_alloc("gpu-0")["gpu"],
            "devices": [{"request": "other", "driver": "gpu.example.com", "pool": "n2", "device": "gpu-0"}],
        }
    }
    assert not equivalent(_alloc("gpu-0"), served_elsewhere, signatures, same_node=False)


def test_compare_judges_the_devices_of_pods_both_bound() -> None:
    pod = {"metadata": {"name": "p"}}

    def judge(upstream: Verdict, kubesched: Verdict) -> Any:
        return compare(1, 0, upstream, kubesched, [SLICE], pod, explain=False)

    upstream = Verdict(BOUND, "n1", devices=_alloc("gpu-0"))
    same = judge(upstream, Verdict(BOUND, "n1", ties=("n1",), devices=_alloc("gpu-1")))
    assert same.devices == AGREE and same.agrees
    other = judge(upstream, Verdict(BOUND, "n1", ties=("n1",), devices=_alloc("gpu-2")))
    assert other.devices == DISAGREE and not other.agrees and "devices disagree" in other.summary()
    plain = judge(Verdict(BOUND, "n1"), Verdict(BOUND, "n1", ties=("n1",)))
    assert plain.devices is None and plain.agrees
