"""Filter by free-device counts: the same verdicts as the structured allocator, on every node, or the
allocator itself where the counts cannot say; and the gate the queue may skip hints for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.dra import ResourceSlice
from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins.dynamicresources import STATE_KEY
from kubesched.plugins.dynamicresources.allocator import Features, cached_verdict
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
    on_node,
    request_dict,
    slice_dict,
)
from tests.factories import make_snapshot, node_dict
from tests.plugins.dynamicresources.env import GPU_CLASS, Env
from tests.plugins.dynamicresources.test_dynamicresources import FILTER_CASES
from tests.plugins.dynamicresources.test_dynamicresources import NODES as FILTER_NODES

NODES = [node_dict(f"n{i}") for i in range(1, 5)]
X = f'device.attributes["{DRIVER}"].x'
#: n1: three devices, g0 held; n2: one device the request's selector refuses; n3: two devices; n4: none.
SLICES = [
    slice_dict("n1-gpus", [device_dict(f"g{i}", {"x": 1}) for i in range(3)], node="n1"),
    slice_dict("n2-gpus", [device_dict("g0", {"x": 2})], node="n2"),
    slice_dict("n3-gpus", [device_dict("g0", {"x": 1}), device_dict("g1", {"x": 1})], node="n3"),
]
HELD = claim_dict(
    "held",
    request_dict("r"),
    status={"allocation": {**allocated(("r", DRIVER, "n1", "g0"))["allocation"], "nodeSelector": on_node("n1")}},
)


def state_of(env: Env, pod: Pod) -> tuple[CycleState, StateData]:
    state, status = env.cycle(pod)
    assert status is None
    return state, state.read(STATE_KEY)


def batch(env: Env, state: CycleState, pod: Pod) -> dict[str, Status | None] | None:
    """The batch form's verdict per node (None: it left the cycle to the per-node form)."""
    nodes = [env.nodes[n] for n in env.nodes]
    snapshot = make_snapshot(nodes)
    result = env.plugin.filter_nodes(state, pod, snapshot, np.arange(len(nodes)))
    if result is None:
        return None
    return {str(snapshot.names[k]): None if i < 0 else result.statuses[i] for k, i in enumerate(result.status_index)}


@pytest.mark.parametrize("count", [1, 2, 3])
def test_counts_give_the_allocators_verdict_on_every_node(count: int) -> None:
    env = Env(
        GPU_CLASS, *SLICES, HELD, claim_dict("c", request_dict("r", count=count, selectors=[f"{X} == 1"])), nodes=NODES
    )
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, s = state_of(env, pod)
    assert s.counts is not None and s.allocator is not None
    claims = [c for _, c in s.to_allocate()]
    for name, node in env.nodes.items():
        assert s.counts.fits(name) is (s.allocator.allocate(name, node.labels, claims) is not None), name
    per_node = env.filter_all(state, pod)
    assert batch(env, state, pod) == per_node
    want = {1: ["n1", "n3"], 2: ["n1", "n3"], 3: []}[count]
    assert sorted(n for n, st in per_node.items() if st is None) == want


def test_reserve_gets_the_allocators_devices_on_a_node_the_counts_passed() -> None:
    env = Env(
        GPU_CLASS,
        *SLICES,
        HELD,
        claim_dict("a", request_dict("r")),
        claim_dict("b", request_dict("r", count=2)),
        nodes=NODES,
    )
    first = env.pod(claim_pod("first", by_name("gpu", "a")))
    state, s = state_of(env, first)
    assert batch(env, state, first) is not None
    assert "n1" not in dict(s.node_allocations)  # not searched in Filter
    assert env.plugin.reserve(state, first, "n1") is None
    assert [r.device for r in s.infos[0].allocation.results] == ["g1"]  # type: ignore[union-attr]
    second = env.pod(claim_pod("second", by_name("gpu", "b")))
    _, s2 = state_of(env, second)
    assert s2.counts is not None and s2.counts.fits("n1") is False and s2.counts.fits("n3") is True


def test_a_node_that_was_not_filtered_has_no_allocation_for_reserve() -> None:
    env = Env(GPU_CLASS, *SLICES, claim_dict("c", request_dict("r")), nodes=NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, s = state_of(env, pod)
    assert env.plugin.filter(state, pod, env.node_info("n3")) is None
    with pytest.raises(KeyError):
        s.node_allocations["n1"]
    assert [r.device for r in s.node_allocations["n3"][0].results] == ["g0"]


HAZARDS = [
    (
        "invalid pool",
        [slice_dict(f"n1-{i}", [device_dict("g0", {"x": 1})], node="n1", pool="n1", count=2) for i in range(2)],
    ),
    ("failing selector", [slice_dict("n1-gpus", [device_dict("g0", {"y": 1})], node="n1")]),
]


@pytest.mark.parametrize(("name", "bad"), HAZARDS, ids=[h[0] for h in HAZARDS])
def test_nodes_where_the_search_may_fail_are_left_to_the_allocator(name: str, bad: list[dict[str, Any]]) -> None:
    env = Env(GPU_CLASS, *bad, SLICES[2], claim_dict("c", request_dict("r", selectors=[f"{X} == 1"])), nodes=NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, s = state_of(env, pod)
    assert s.counts is not None
    assert s.counts.fits("n1") is None and s.counts.fits("n3") is True and s.counts.fits("n4") is False
    assert batch(env, state, pod) is None  # the per-node form runs, errors and all
    assert env.plugin.filter(state, pod, env.node_info("n1")).code.name == "ERROR"  # type: ignore[union-attr]


NOT_SIMPLE = [
    ("two requests", claim_dict("c", request_dict("a"), request_dict("b"))),
    ("a constraint", claim_dict("c", request_dict("a"), constraints=[{"matchAttribute": f"{DRIVER}/x"}])),
    ("a prioritized list", claim_dict("c", first_available_dict("r", request_dict("a")))),
    ("all devices", claim_dict("c", request_dict("r", mode="All"))),
]


@pytest.mark.parametrize(("name", "claim"), NOT_SIMPLE, ids=[c[0] for c in NOT_SIMPLE])
def test_claims_the_counts_cannot_decide_are_searched(name: str, claim: dict[str, Any]) -> None:
    env = Env(GPU_CLASS, *SLICES, claim, nodes=NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, s = state_of(env, pod)
    assert s.allocator is not None and s.counts is None
    assert batch(env, state, pod) is None


def test_shared_slices_turn_the_counts_off() -> None:
    env = Env(
        GPU_CLASS, *SLICES, slice_dict("net", ["g0"], all_nodes=True), claim_dict("c", request_dict("r")), nodes=NODES
    )
    _, s = state_of(env, env.pod(claim_pod("p", by_name("gpu", "c"))))
    assert s.allocator is not None and s.counts is None


def test_devices_that_look_alike_to_a_selector_share_its_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    views = [
        ResourceSlice.from_dict(slice_dict(f"s{i}", [device_dict("g0", {"x": 7})], node=f"n{i}")) for i in range(2)
    ]
    expression = f"{X} == 7 && device.driver == '{DRIVER}'"
    assert cached_verdict(expression, views[0].devices[0], DRIVER, False) is True
    monkeypatch.setattr(
        "kubesched.plugins.dynamicresources.allocator._verdict", lambda *args: pytest.fail("evaluated again")
    )
    assert cached_verdict(expression, views[1].devices[0], DRIVER, False) is True
    assert Features().consumable_capacity is False


CLAIM_ADDED = ClusterEvent(qevents.RESOURCE_CLAIM, ActionType.ADD)


def test_the_gate_holds_through_claim_events_while_the_pod_itself_names_no_claim() -> None:
    env = Env(GPU_CLASS)
    waiting = env.pod(claim_pod("w", by_template("gpu", "t")))
    assert env.plugin.gate_holds_through(waiting, CLAIM_ADDED)
    assert not env.plugin.gate_holds_through(waiting, ClusterEvent(qevents.NODE, ActionType.ADD))
    # A named claim that does not exist yet: a claim event may be the one that brings it.
    assert not env.plugin.gate_holds_through(env.pod(claim_pod("n", by_name("gpu", "c"))), CLAIM_ADDED)
    recorded = env.pod(claim_pod("r", by_template("gpu", "t"), statuses={"gpu": "r-gpu-x"}))
    assert not env.plugin.gate_holds_through(recorded, CLAIM_ADDED)


@pytest.mark.parametrize(("name", "slices", "claim", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_the_batch_form_agrees_with_filter(
    name: str, slices: list[dict[str, Any]], claim: dict[str, Any], want: dict[str, Status | None]
) -> None:
    env = Env(GPU_CLASS, *slices, claim, nodes=FILTER_NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, _ = state_of(env, pod)
    got = batch(env, state, pod)
    assert got is None or got == want
    assert env.filter_all(state, pod) == want


def test_the_batch_form_records_allocated_claims_out_of_reach() -> None:
    held = {"allocation": {**allocated(("r", DRIVER, "n1", "g0"))["allocation"], "nodeSelector": on_node("n1")}}
    env = Env(GPU_CLASS, *SLICES, claim_dict("c", request_dict("r"), status=held), nodes=NODES)
    pod = env.pod(claim_pod("p", by_name("gpu", "c")))
    state, s = state_of(env, pod)
    got = batch(env, state, pod)
    assert got is not None and got["n1"] is None
    assert got["n2"] == unresolvable("resourceclaim not available on the node")
    assert s.unavailable == {0}
