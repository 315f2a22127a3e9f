"""DynamicResources through the scheduler: pods with claims scheduled, refused, retried, with upstream's
messages in the trace and the FailedScheduling events."""

from __future__ import annotations

from typing import Any

from tests.dra import DRIVER, allocated, by_name, claim_dict, claim_pod, on_node, request_dict, slice_dict
from tests.factories import node_dict
from tests.fakeplugins import Harness
from tests.plugins.dynamicresources.env import GPU_CLASS

NODES = [node_dict("n1", labels={"zone": "a"}), node_dict("n2", labels={"zone": "b"})]
SLICES = [slice_dict("n1-gpus", ["g0"], node="n1"), slice_dict("n2-gpus", ["g0"], node="n2")]


def harness(*objs: dict[str, Any]) -> Harness:
    return Harness(objects=[*NODES, GPU_CLASS, *SLICES, *objs])


def failed(h: Harness, pod: str) -> list[str]:
    return [e["message"] for e in h.events(pod) if e["reason"] == "FailedScheduling"]


def test_claims_get_devices_until_none_are_left() -> None:
    h = harness(*(claim_dict(c, request_dict("r")) for c in ("a", "b", "c")))
    h.create(*(claim_pod(f"p-{c}", by_name("gpu", c)) for c in ("a", "b", "c")))
    h.run()
    assert {p: h.node_of(p) for p in ("p-a", "p-b", "p-c")} == {"p-a": "n1", "p-b": "n2", "p-c": None}
    claim = h.cluster.get("ResourceClaim", "default", "a")
    assert claim["status"]["allocation"]["nodeSelector"] == on_node("n1")
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["p-a"]
    assert failed(h, "p-c") == [
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    ]


def test_pods_sharing_a_claim_share_its_node() -> None:
    h = harness(claim_dict("shared", request_dict("r")))
    h.create(*(claim_pod(p, by_name("gpu", "shared")) for p in ("a", "b", "c")))
    h.run()
    nodes = {h.node_of(p) for p in ("a", "b", "c")}
    assert len(nodes) == 1 and None not in nodes
    reserved = h.cluster.get("ResourceClaim", "default", "shared")["status"]["reservedFor"]
    assert sorted(r["name"] for r in reserved) == ["a", "b", "c"]


def test_a_pod_waits_for_its_claim_then_schedules() -> None:
    h = harness()
    h.create(claim_pod("p", by_name("gpu", "later")))
    h.run()
    assert h.where("p") == "gated" and failed(h, "p") == []  # PreEnqueue: no attempt, no event
    h.create(claim_dict("later", request_dict("r")))
    h.run()
    assert h.node_of("p") is not None


def test_a_missing_class_is_named() -> None:
    h = harness(claim_dict("c", request_dict("r", "tpu")))
    h.create(claim_pod("p", by_name("gpu", "c")))
    h.run()
    assert failed(h, "p") == [
        "0/2 nodes are available: request r: device class tpu does not exist. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    ]


def test_an_unused_allocation_in_the_way_is_deallocated_and_the_pod_placed_elsewhere() -> None:
    status = allocated(("r", DRIVER, "n1", "g0"))
    status["allocation"]["nodeSelector"] = on_node("n1")
    h = harness(claim_dict("c", request_dict("r"), status=status))
    pod = claim_pod("p", by_name("gpu", "c"))
    pod["spec"]["nodeSelector"] = {"zone": "b"}
    h.create(pod)
    h.step()
    assert failed(h, "p") == [
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 resourceclaim not available "
        "on the node. deallocation of ResourceClaim completed, preemption: 0/2 nodes are available: 2 Preemption is "
        "not helpful for scheduling."
    ]
    # The deallocation came while the pod was in flight and its hint says Queue: backoff, not unschedulable.
    assert h.where("p") == "backoff"
    # Nothing else is active: v1.34 pops the pod from backoff at once (SchedulerPopFromBackoffQ).
    h.step()
    assert h.node_of("p") == "n2"
    assert h.cluster.get("ResourceClaim", "default", "c")["status"]["allocation"]["nodeSelector"] == on_node("n2")


def test_a_claim_reserved_by_too_many_pods_fails_in_pre_bind_and_nothing_is_left_behind() -> None:
    status = allocated(("r", DRIVER, "n1", "g0"))
    status["allocation"]["nodeSelector"] = on_node("n1")
    status["reservedFor"] = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)]
    h = harness(claim_dict("c", request_dict("r"), status=status))
    h.create(claim_pod("late", by_name("gpu", "c")))
    h.step()
    assert h.node_of("late") is None
    assert failed(h, "late") == [
        'running PreBind plugin "DynamicResources": add reservation to claim default/c: '
        'ResourceClaim.resource.k8s.io "c" is invalid: status.reservedFor: Too many: 257: must have at most 256 '
        "items"
    ]
    assert len(h.cluster.get("ResourceClaim", "default", "c")["status"]["reservedFor"]) == 256
