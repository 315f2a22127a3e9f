"""The Filter walk (kubesched.framework.runtime.filtering) on nodes with nominated pods, as
RunFilterPluginsWithNominatedPods: the pass with the pods nominated to the node runs first, and a
rejection there is the node's status; the pass without them counts only when the first one passes.

The filters are the twins of tests.framework.capability_plugins, in the order slot (reads the node's
pods) then zone (reads the node alone), so that a node can fail both passes at different plugins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from tests.factories import make_pod, node_dict, pod_dict
from tests.fakeplugins import Harness, config_dict, profile_with
from tests.framework.capability_plugins import (
    NO_SLOT,
    WRONG_ZONE,
    FitSlotFilter,
    NodeOnlyZoneFilter,
    SlotFilter,
    ZoneFilter,
)


def ref(cls: type) -> str:
    return f"tests.framework.capability_plugins:{cls.__name__}"


def harness(*filters: type) -> Harness:
    point: dict[str, Any] = {"enabled": [{"name": ref(c)} for c in filters], "disabled": [{"name": "*"}]}
    nodes = [
        node_dict("in-a", labels={"zone": "a"}),
        node_dict("in-b", labels={"zone": "b"}),
        node_dict("free-b", labels={"zone": "b"}),
    ]
    return Harness(
        config_dict(profile_with({"filter": point, "postFilter": {"disabled": [{"name": "*"}]}})), objects=nodes
    )


def fwk(h: Harness) -> Framework:
    return h.scheduler.profiles["default-scheduler"]


def _nominate(h: Harness, node: str, priority: int = 100) -> None:
    pod = make_pod(f"nominated-{node}", priority=priority, spec={"schedulerName": "someone-else"})
    h.scheduler.queue.add_nominated_pod(pod, node)


def _walk(h: Harness, pod_priority: int = 0) -> dict[str, Status | None]:
    """Each node's verdict from the walk over every node, and the same from the per-node runner."""
    f = fwk(h)
    pod = make_pod("p", priority=pod_priority)
    state = CycleState()
    f.run_pre_filter_plugins(state, pod)
    h.scheduler.cache.update_snapshot(h.scheduler.snapshot)
    snapshot = h.scheduler.snapshot
    outcome = f.find_nodes_that_pass_filters(state, pod, snapshot, np.arange(len(snapshot)), len(snapshot))
    assert outcome.error is None
    walked: dict[str, Status | None] = {name: None for name in snapshot.names[outcome.feasible].tolist()}
    walked.update(outcome.node_status_map(snapshot))
    one_by_one = {info.name: f.run_filter_plugins_with_nominated_pods(state, pod, info) for info in snapshot.node_infos}
    assert {n: _said(s) for n, s in walked.items()} == {n: _said(s) for n, s in one_by_one.items()}
    return walked


def _said(status: Status | None) -> tuple[str, Code, tuple[str, ...]] | None:
    return None if status is None else (status.plugin, status.code, status.reasons)


@pytest.mark.parametrize("slot", [SlotFilter, FitSlotFilter])
@pytest.mark.parametrize("zone", [ZoneFilter, NodeOnlyZoneFilter])
def test_a_node_failing_both_passes_reports_the_pass_with_its_nominated_pods(slot: type, zone: type) -> None:
    h = harness(slot, zone)
    _nominate(h, "in-b")
    verdicts = _walk(h)
    # Without the nominated pod, in-b would fail at the zone filter; with it, the slot filter says no first.
    assert _said(verdicts["in-b"]) == (ref(slot), Code.UNSCHEDULABLE, (NO_SLOT,))
    assert _said(verdicts["free-b"]) == (ref(zone), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (WRONG_ZONE,))
    assert verdicts["in-a"] is None


@pytest.mark.parametrize("slot", [SlotFilter, FitSlotFilter])
def test_a_node_passing_with_its_nominated_pods_is_judged_without_them(slot: type) -> None:
    h = harness(slot, NodeOnlyZoneFilter)
    _nominate(h, "in-a")
    verdicts = _walk(h)
    assert _said(verdicts["in-a"]) == (ref(slot), Code.UNSCHEDULABLE, (NO_SLOT,))


def test_lower_priority_nominations_are_not_in_the_first_pass() -> None:
    h = harness(SlotFilter, NodeOnlyZoneFilter)
    _nominate(h, "in-b", priority=0)
    verdicts = _walk(h, pod_priority=10)
    assert _said(verdicts["in-b"]) == (ref(NodeOnlyZoneFilter), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (WRONG_ZONE,))


def test_the_failed_attempt_counts_the_first_pass_rejection() -> None:
    h = harness(SlotFilter, NodeOnlyZoneFilter)
    _nominate(h, "in-a")
    _nominate(h, "in-b")
    h.create(pod_dict("p"))
    h.step()
    record = h.records[-1]
    assert record.result == "Unschedulable"
    assert record.message == ("0/3 nodes are available: 1 node is not in zone a, 2 no free slot.")
