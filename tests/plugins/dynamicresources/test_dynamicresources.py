"""DynamicResources extension point by extension point, table-style after kube-scheduler's
dynamicresources_test.go, with upstream's status texts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.dynamicresources import STATE_KEY
from kubesched.plugins.dynamicresources.claims import StateData
from kubesched.queue import events as qevents
from tests.dra import (
    DRIVER,
    allocated,
    by_name,
    by_template,
    claim_dict,
    claim_pod,
    device_dict,
    first_available_dict,
    node_selector,
    on_node,
    owned_by,
    request_dict,
    slice_dict,
)
from tests.factories import make_snapshot, node_dict
from tests.plugins.dynamicresources.env import GPU_CLASS, Env

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NODES = [
    node_dict("n1", labels={"zone": "a"}),
    node_dict("n2", labels={"zone": "a"}),
    node_dict("n3", labels={"zone": "b"}),
]
ONE_GPU = slice_dict("n1-gpus", ["g0"], node="n1")


def unresolvable(message: str) -> Status:
    return Status(UNRESOLVABLE, (message,))


def allocated_on(node: str, device: str = "g0", **status: Any) -> dict[str, Any]:
    out = allocated(("r", DRIVER, node, device))
    out["allocation"]["nodeSelector"] = on_node(node)
    out.update(status)
    return out


# -- PreEnqueue -----------------------------------------------------------------------------------
def test_pre_enqueue_lets_pods_without_claims_and_with_existing_claims_through() -> None:
    env = Env(claim_dict("c", request_dict("r")))
    assert env.plugin.pre_enqueue(env.pod(claim_pod("plain"))) is None
    assert env.plugin.pre_enqueue(env.pod(claim_pod("p", by_name("gpu", "c")))) is None


PRE_ENQUEUE_WAITS = [
    ("missing claim", claim_pod("p", by_name("gpu", "c")), [], 'could not find ResourceClaim "default/c"'),
    (
        "template claim not made yet",
        claim_pod("p", by_template("gpu", "t")),
        [],
        'pod "default/p": ResourceClaim not created yet',
    ),
    (
        "template claim recorded but missing",
        claim_pod("p", by_template("gpu", "t"), statuses={"gpu": "p-gpu-x"}),
        [],
        'could not find ResourceClaim "default/p-gpu-x"',
    ),
    (
        "template claim not the pod's",
        claim_pod("p", by_template("gpu", "t"), statuses={"gpu": "c"}),
        [claim_dict("c", request_dict("r"))],
        "ResourceClaim default/c was not created for pod default/p (pod is not owner)",
    ),
    (
        "neither name nor template",
        claim_pod("p", {"name": "gpu"}),
        [],
        'pod "default/p", spec.resourceClaim "gpu": none of the supported fields are set',
    ),
]


@pytest.mark.parametrize(("name", "pod", "objs", "message"), PRE_ENQUEUE_WAITS, ids=[c[0] for c in PRE_ENQUEUE_WAITS])
def test_pre_enqueue_waits_for_missing_claims(
    name: str, pod: dict[str, Any], objs: list[dict[str, Any]], message: str
) -> None:
    env = Env(*objs)
    assert env.plugin.pre_enqueue(env.pod(pod)) == unresolvable(message)


def test_pre_enqueue_accepts_the_pods_own_claim_and_a_claim_it_does_not_need() -> None:
    env = Env()
    pod = env.pod(
        claim_pod("p", by_template("gpu", "t"), by_template("extra", "t"), statuses={"gpu": "p-gpu-x", "extra": None})
    )
    env.create(owned_by(claim_dict("p-gpu-x", request_dict("r")), pod.raw))
    assert env.plugin.pre_enqueue(pod) is None


def test_pre_enqueue_waits_while_a_claim_is_being_deleted() -> None:
    env = Env()
    claim = claim_dict("c", request_dict("r"))
    claim["metadata"].update(uid="u", resourceVersion="5", deletionTimestamp="2025-01-01T00:00:00Z")
    env.inform(claim)
    assert env.plugin.pre_enqueue(env.pod(claim_pod("p", by_name("gpu", "c")))) == unresolvable(
        'resourceclaim "c" is being deleted'
    )


def test_a_disabled_plugin_does_nothing() -> None:
    env = Env(version="1.30")
    pod = env.pod(claim_pod("p", by_name("gpu", "missing")))
    state = CycleState()
    assert env.plugin.pre_enqueue(pod) is None
    assert env.plugin.pre_filter(state, pod) == (None, Status(Code.SKIP))
    assert env.plugin.post_filter(state, pod, {}) == (None, Status(Code.UNSCHEDULABLE, ("plugin disabled",)))
    assert env.plugin.events_to_register() == ()


# -- PreFilter ------------------------------------------------------------------------------------
PRE_FILTER_REJECTS = [
    (
        "missing class",
        [claim_dict("c", request_dict("r", "nope"))],
        {},
        unresolvable("request r: device class nope does not exist"),
    ),
    (
        "missing class of a subrequest",
        [claim_dict("c", first_available_dict("r", request_dict("a"), request_dict("b", "nope")))],
        {},
        unresolvable("request r/b: device class nope does not exist"),
    ),
    (
        "prioritized list off",
        [claim_dict("c", first_available_dict("r", request_dict("a")))],
        {"DRAPrioritizedList": False},
        unresolvable(
            "resource claim default/c, request r: has subrequests, but the DRAPrioritizedList feature is disabled"
        ),
    ),
]


@pytest.mark.parametrize(("name", "objs", "gates", "want"), PRE_FILTER_REJECTS, ids=[c[0] for c in PRE_FILTER_REJECTS])
def test_pre_filter_rejects(name: str, objs: list[dict[str, Any]], gates: dict[str, bool], want: Status) -> None:
    env = Env(GPU_CLASS, *objs, gates=gates)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, status = env.cycle(pod)
    assert status == want
    # What PostFilter says for a pod whose PreFilter stopped early.
    assert env.plugin.post_filter(state, pod, {}) == (
        None,
        Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",)),
    )


def test_pre_filter_skips_pods_without_claims_but_leaves_its_state() -> None:
    env = Env()
    state, status = env.cycle(env.pod(claim_pod("plain")))
    assert status == Status(Code.SKIP)
    assert isinstance(state.read(STATE_KEY), StateData) and state.read(STATE_KEY).claims == []


def test_pods_without_claims_share_a_state_no_extension_point_writes_into() -> None:
    env = Env()
    first, second = env.pod(claim_pod("plain")), env.pod(claim_pod("other"))
    state, _ = env.cycle(first)
    assert env.cycle(second)[0].read(STATE_KEY) is state.read(STATE_KEY)
    assert env.filter_all(state, first) == {"n1": None}
    batch = env.plugin.filter_nodes(state, first, make_snapshot([env.nodes["n1"]]), np.arange(1))
    assert batch is not None and batch.status_index.tolist() == [-1]
    assert env.plugin.post_filter(state, first, {})[1] == Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",))
    assert env.plugin.reserve(state, first, "n1") is None
    assert env.plugin.pre_bind(state, first, "n1") is None
    env.plugin.unreserve(state, first, "n1")
    s = state.read(STATE_KEY)
    assert (s.claims, s.infos, s.allocator, s.counts, s.unavailable) == ([], [], None, None, set())
    assert not s.node_allocations and not s.node_allocations.counted


def test_pre_filter_builds_the_allocator_only_for_claims_to_allocate() -> None:
    env = Env(
        GPU_CLASS,
        ONE_GPU,
        claim_dict("done", request_dict("r"), status=allocated_on("n1")),
        claim_dict("todo", request_dict("r")),
        nodes=NODES,
    )
    state, status = env.cycle(env.pod(claim_pod("p", by_name("gpu", "done"))))
    assert status is None and state.read(STATE_KEY).allocator is None
    state, status = env.cycle(env.pod(claim_pod("q", by_name("gpu", "done"), by_name("more", "todo"))))
    assert status is None and state.read(STATE_KEY).allocator is not None


def test_pre_filter_waits_for_an_allocation_in_flight() -> None:
    env = Env(GPU_CLASS, ONE_GPU, claim_dict("c", request_dict("r")))
    first = env.pod(claim_pod("first", by_name("gpu", "c")))
    state, _ = env.cycle(first)
    assert env.plugin.filter(state, first, env.node_info("n1")) is None
    assert env.plugin.reserve(state, first, "n1") is None
    _, status = env.cycle(env.pod(claim_pod("second", by_name("gpu", "c"))))
    assert status == unresolvable("resource claim default/c is in the process of being allocated")


# -- Filter ---------------------------------------------------------------------------------------
CANNOT = unresolvable("cannot allocate all claims")
NOT_HERE = unresolvable("resourceclaim not available on the node")
FILTER_CASES = [
    ("node-local devices", [ONE_GPU], claim_dict("c", request_dict("r")), {"n1": None, "n2": CANNOT, "n3": CANNOT}),
    (
        "network-attached devices by node selector",
        [slice_dict("net", ["g0"], pool="net", node_selector=node_selector(zone="a"))],
        claim_dict("c", request_dict("r")),
        {"n1": None, "n2": None, "n3": CANNOT},
    ),
    (
        "devices on every node",
        [slice_dict("net", ["g0"], pool="net", all_nodes=True)],
        claim_dict("c", request_dict("r")),
        {"n1": None, "n2": None, "n3": None},
    ),
    (
        "more devices than exist",
        [ONE_GPU],
        claim_dict("c", request_dict("r", count=2)),
        {"n1": CANNOT, "n2": CANNOT, "n3": CANNOT},
    ),
    (
        "allocated claim: its node selector",
        [ONE_GPU],
        claim_dict("c", request_dict("r"), status=allocated_on("n1")),
        {"n1": None, "n2": NOT_HERE, "n3": NOT_HERE},
    ),
    (
        "an outdated pool generation is ignored",
        [
            slice_dict("old", [device_dict("g0", {"x": 1})], node="n1", pool="p", generation=1),
            slice_dict("new", [device_dict("g1", {"x": 2})], node="n1", pool="p", generation=2),
        ],
        claim_dict("c", request_dict("r", selectors=['device.attributes["gpu.example.com"].x == 1'])),
        {"n1": CANNOT, "n2": CANNOT, "n3": CANNOT},
    ),
]


@pytest.mark.parametrize(("name", "slices", "claim", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(name: str, slices: list[dict[str, Any]], claim: dict[str, Any], want: dict[str, Status | None]) -> None:
    env = Env(GPU_CLASS, *slices, claim, nodes=NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, status = env.cycle(pod)
    assert status is None
    assert env.filter_all(state, pod) == want


def test_filter_counts_devices_of_allocated_claims_and_in_flight_allocations_as_taken() -> None:
    gpus = slice_dict("n1-gpus", ["g0", "g1", "g2"], node="n1")
    env = Env(
        GPU_CLASS,
        gpus,
        claim_dict("held", request_dict("r"), status=allocated_on("n1", "g0")),
        claim_dict("a", request_dict("r")),
        claim_dict("b", request_dict("r", count=2)),
    )
    first = env.pod(claim_pod("first", by_name("gpu", "a")))
    state, _ = env.cycle(first)
    assert env.plugin.filter(state, first, env.node_info("n1")) is None
    assert [r.device for r in state.read(STATE_KEY).node_allocations["n1"][0].results] == ["g1"]
    env.plugin.reserve(state, first, "n1")
    second = env.pod(claim_pod("second", by_name("gpu", "b")))
    state2, _ = env.cycle(second)
    assert env.plugin.filter(state2, second, env.node_info("n1")) == CANNOT  # only g2 is left
    env.plugin.unreserve(state, first, "n1")
    state2, _ = env.cycle(second)
    assert env.plugin.filter(state2, second, env.node_info("n1")) is None


def test_a_selector_failing_on_a_device_is_an_error_naming_claim_and_selector() -> None:
    env = Env(
        GPU_CLASS,
        ONE_GPU,
        claim_dict("c", request_dict("r", selectors=[f'device.attributes["{DRIVER}"].healthy']), status=None),
    )
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    status = env.plugin.filter(state, pod, env.node_info("n1"))
    assert status is not None and status.code is Code.ERROR
    assert status.message == "claim default/c: selector #0: CEL runtime error: no such key: healthy"


def test_a_pool_with_a_device_twice_is_an_error() -> None:
    env = Env(
        GPU_CLASS,
        slice_dict("a", ["g0"], node="n1", pool="p", count=2),
        slice_dict("b", [device_dict("g0")], node="n1", pool="p", count=2),
        claim_dict("c", request_dict("r")),
    )
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    assert env.plugin.filter(state, pod, env.node_info("n1")) == Status(
        Code.ERROR, ("pool p is invalid: duplicate device name g0",)
    )


def test_more_devices_than_a_claim_may_hold_is_an_error() -> None:
    env = Env(GPU_CLASS, ONE_GPU, claim_dict("c", request_dict("r", count=33)))
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    assert env.plugin.filter(state, pod, env.node_info("n1")) == Status(
        Code.ERROR, ("claim default/c: number of requested devices 33 exceeds the claim limit of 32",)
    )


# -- PostFilter -----------------------------------------------------------------------------------
def test_post_filter_without_a_pre_filter_state_is_not_found() -> None:
    env = Env()
    assert env.plugin.post_filter(CycleState(), env.pod(claim_pod("p")), {}) == (
        None,
        Status(Code.ERROR, ("not found",)),
    )


def test_post_filter_deallocates_a_claim_nobody_uses_that_kept_the_pod_off_a_node() -> None:
    env = Env(GPU_CLASS, ONE_GPU, claim_dict("c", request_dict("r"), status=allocated_on("n1")), nodes=NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    env.filter_all(state, pod)
    assert env.plugin.post_filter(state, pod, {}) == (
        None,
        Status(Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",)),
    )
    assert "allocation" not in env.claim("c")["status"]


def test_post_filter_keeps_a_claim_another_pod_uses() -> None:
    status = allocated_on("n1", reservedFor=[{"resource": "pods", "name": "other", "uid": "other-uid"}])
    env = Env(GPU_CLASS, ONE_GPU, claim_dict("c", request_dict("r"), status=status), nodes=NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    env.filter_all(state, pod)
    assert env.plugin.post_filter(state, pod, {}) == (None, Status(Code.UNSCHEDULABLE, ("still not schedulable",)))
    assert env.claim("c")["status"]["allocation"]


# -- Reserve, PreBind, Unreserve ------------------------------------------------------------------
def test_pre_bind_writes_the_allocation_and_the_reservation() -> None:
    env = Env(GPU_CLASS, ONE_GPU, claim_dict("c", request_dict("r")))
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    env.plugin.filter(state, pod, env.node_info("n1"))
    assert env.plugin.reserve(state, pod, "n1") is None
    assert env.plugin.pre_bind(state, pod, "n1") is None
    claim = env.claim("c")
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim["status"] == {
        "allocation": {
            "devices": {"results": [{"request": "r", "driver": DRIVER, "pool": "n1", "device": "g0"}]},
            "nodeSelector": on_node("n1"),
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": pod.uid}],
    }
    assert not env.plugin.tracker.has_pending_allocation(claim["metadata"]["uid"])
    assert env.plugin.tracker.get("default", "c").allocation is not None
    # Unreserve after a failed binding takes the reservation out again (the allocation stays).
    env.plugin.unreserve(state, pod, "n1")
    assert "reservedFor" not in env.claim("c")["status"] and env.claim("c")["status"]["allocation"]


def test_pre_bind_reserves_an_allocated_claim_for_one_more_pod() -> None:
    status = allocated_on("n1", reservedFor=[{"resource": "pods", "name": "a", "uid": "a-uid"}])
    env = Env(GPU_CLASS, ONE_GPU, claim_dict("c", request_dict("r"), status=status))
    pod = env.pod(claim_pod("b", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    assert env.plugin.filter(state, pod, env.node_info("n1")) is None
    assert env.plugin.reserve(state, pod, "n1") is None
    assert env.plugin.pre_bind(state, pod, "n1") is None
    assert [r["name"] for r in env.claim("c")["status"]["reservedFor"]] == ["a", "b"]


def test_the_257th_reservation_is_refused_by_the_api_server() -> None:
    full = allocated_on("n1", reservedFor=[{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)])
    env = Env(GPU_CLASS, ONE_GPU, claim_dict("c", request_dict("r"), status=full))
    pod = env.pod(claim_pod("late", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    assert env.plugin.filter(state, pod, env.node_info("n1")) is None
    assert env.plugin.pre_bind(state, pod, "n1") == Status(
        Code.ERROR,
        (
            'add reservation to claim default/c: ResourceClaim.resource.k8s.io "c" is invalid: status.reservedFor: '
            "Too many: 257: must have at most 256 items",
        ),
    )


def test_reserve_without_filtering_that_node_is_an_error() -> None:
    env = Env(GPU_CLASS, ONE_GPU, claim_dict("c", request_dict("r")), nodes=NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, _ = env.cycle(pod)
    assert env.plugin.reserve(state, pod, "n1") == Status(Code.ERROR, ("claim allocation not found for node",))


# -- registrations --------------------------------------------------------------------------------
def test_events_to_register() -> None:
    from kubesched.framework.interfaces import ActionType, ClusterEvent, ClusterEventWithHint

    add_update = ActionType.ADD | ActionType.UPDATE
    env = Env()
    registered = env.plugin.events_to_register()
    assert [getattr(r, "event", r) for r in registered] == [
        ClusterEvent(qevents.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE),
        ClusterEvent(qevents.RESOURCE_CLAIM, add_update),
        ClusterEvent(qevents.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
        ClusterEvent(qevents.DEVICE_CLASS, add_update),
        ClusterEvent(qevents.RESOURCE_SLICE, add_update),
    ]
    # The claim and the pod events go through the plugin's hints.
    hinted = [r for r in registered if isinstance(r, ClusterEventWithHint)]
    assert [h.queueing_hint_fn for h in hinted] == [
        env.plugin.is_schedulable_after_claim_change,
        env.plugin.is_schedulable_after_pod_change,
    ]
    # Without queueing hints (a v1.30 scheduler with DRA turned on), taint updates too.
    node = Env(version="1.30", gates={"DynamicResourceAllocation": True}).plugin.events_to_register()[0]
    assert isinstance(node, ClusterEvent) and node.action & ActionType.UPDATE_NODE_TAINT


def test_no_score() -> None:
    plugin = Env().plugin
    assert not hasattr(plugin, "score") and not hasattr(plugin, "pre_score")
