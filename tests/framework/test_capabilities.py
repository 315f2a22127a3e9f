"""Capabilities (kubesched.framework.capabilities): a plugin that declares one gets the shortcut in the
runtime and in preemption, a plugin that does not gets the plain path, and both decide alike.

The plugins come in twins (tests.framework.capability_plugins), enabled by import path in a profile
whose only Filter plugins they are.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.capabilities import reads_node_only, reads_pod_only
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime import Framework
from kubesched.plugins import names
from kubesched.plugins.schedulinggates import SchedulingGates
from tests.factories import make_pod, node_dict, pod_dict
from tests.fakeplugins import Harness, config_dict, profile_with
from tests.framework.capability_plugins import (
    NO_SLOT,
    FitSlotFilter,
    NodeOnlyZoneFilter,
    NotNodeOnlyZoneFilter,
    SlotFilter,
    ZoneFilter,
)


def ref(cls: type) -> str:
    return f"tests.framework.capability_plugins:{cls.__name__}"


def plugin_of(h: Harness, cls: type) -> Any:
    return h.scheduler.profiles["default-scheduler"].plugins[ref(cls)]


IN_TREE_NODE_ONLY = {
    names.NODE_UNSCHEDULABLE,
    names.NODE_NAME,
    names.TAINT_TOLERATION,
    names.NODE_AFFINITY,
    names.VOLUME_ZONE,
    names.VOLUME_BINDING,
    names.DYNAMIC_RESOURCES,
}


def harness(
    *filters: type,
    args: dict[type, Any] | None = None,
    nodes: list[dict[str, Any]] | None = None,
    keep_in_tree_filters: bool = False,
) -> Harness:
    point: dict[str, Any] = {"enabled": [{"name": ref(c)} for c in filters]}
    if not keep_in_tree_filters:
        point["disabled"] = [{"name": "*"}]
    plugin_config = {ref(c): a for c, a in (args or {}).items()} if args else None
    objs = nodes if nodes is not None else [node_dict("n1"), node_dict("n2")]
    return Harness(config_dict(profile_with({"filter": point}, plugin_config)), objects=objs)


def fwk(h: Harness) -> Framework:
    return h.scheduler.profiles["default-scheduler"]


def prepared_state(f: Framework) -> CycleState:
    """A cycle's state after PreFilter for a pod asking for nothing (the plugins with nothing to
    check, and PreFilter extensions, are skipped)."""
    state = CycleState()
    f.run_pre_filter_plugins(state, make_pod("p"))
    return state


# -- declaring ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("plugin", "declares"),
    [(NodeOnlyZoneFilter, True), (ZoneFilter, False), (NotNodeOnlyZoneFilter, False)],
)
def test_reads_node_only_is_the_declared_true(plugin: type, declares: bool) -> None:
    assert reads_node_only(plugin(None, None)) is declares


def test_reads_pod_only_is_declared_by_scheduling_gates_alone() -> None:
    assert reads_pod_only(SchedulingGates())
    assert not reads_pod_only(ZoneFilter(None, None))


def test_the_framework_collects_node_only_filters_by_declaration() -> None:
    f = fwk(harness(ZoneFilter, NodeOnlyZoneFilter, NotNodeOnlyZoneFilter, keep_in_tree_filters=True))
    assert f.node_only_filters == IN_TREE_NODE_ONLY | {ref(NodeOnlyZoneFilter)}


# -- the plan both shortcuts rest on --------------------------------------------------------------
def test_arithmetic_filters_pairs_each_active_filter_with_its_checks() -> None:
    h = harness(NodeOnlyZoneFilter, FitSlotFilter)
    f = fwk(h)
    plan = f.arithmetic_filters(prepared_state(f))
    fit = plugin_of(h, FitSlotFilter)
    assert plan == [(plugin_of(h, NodeOnlyZoneFilter), None), (fit, fit.checks)]


@pytest.mark.parametrize("undeclared", [SlotFilter, ZoneFilter])
def test_one_undeclared_active_filter_means_no_plan(undeclared: type) -> None:
    f = fwk(harness(NodeOnlyZoneFilter, FitSlotFilter, undeclared))
    state = prepared_state(f)
    assert f.arithmetic_filters(state) is None
    state.skip_filter_plugins.add(ref(undeclared))  # unless it was skipped for this pod
    assert f.arithmetic_filters(state) is not None


def test_no_plan_without_checks_or_while_pre_filter_extensions_would_run() -> None:
    f = fwk(harness(FitSlotFilter, args={FitSlotFilter: {"without_checks": True}}))
    assert f.arithmetic_filters(prepared_state(f)) is None
    f = fwk(harness(FitSlotFilter))
    # Nothing skipped: InterPodAffinity's and PodTopologySpread's AddPod/RemovePod would run.
    assert f.active_pre_filter_extensions(CycleState())
    assert f.arithmetic_filters(CycleState()) is None


# -- the runtime: nodes with nominated pods -------------------------------------------------------
def _nominate(h: Harness, node: str) -> None:
    """A higher-priority pod of another scheduler, nominated to ``node``."""
    pod = make_pod("nominated", priority=100, spec={"schedulerName": "someone-else"})
    h.scheduler.queue.add_nominated_pod(pod, node)


@pytest.mark.parametrize(("plugin", "shortcut"), [(FitSlotFilter, True), (SlotFilter, False)])
def test_the_runtime_rechecks_nominated_nodes_through_declared_fit_checks(plugin: type, shortcut: bool) -> None:
    h = harness(plugin)
    _nominate(h, "n1")
    h.create(pod_dict("p"))
    h.step()
    # Both ways, the nominated pod takes n1's only slot.
    assert h.node_of("p") == "n2"
    assert h.records[-1].filter["n1"]["reasons"] == [NO_SLOT]
    calls = plugin_of(h, plugin).filter_calls
    assert sorted(calls) == ([("n1", 0), ("n2", 0)] if shortcut else [("n1", 0), ("n1", 1), ("n2", 0)])
    if shortcut:
        assert plugin_of(h, plugin).checks.batch_calls == 1


# -- preemption: victims by arithmetic ------------------------------------------------------------
@pytest.mark.parametrize(("plugin", "shortcut"), [(FitSlotFilter, True), (SlotFilter, False)])
def test_preemption_selects_victims_through_declared_fit_checks(plugin: type, shortcut: bool) -> None:
    high_class = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 100,
    }
    nodes = [node_dict("n1", labels={"zone": "a"}), pod_dict("low", node_name="n1"), high_class]
    h = harness(NodeOnlyZoneFilter, plugin, nodes=nodes)
    high = pod_dict("high", spec={"priorityClassName": "high"})
    del high["spec"]["priority"]
    h.create(high)
    h.step()
    record = h.records[-1]
    # Both ways, "low" is the victim and "high" is nominated to the node it frees.
    assert (record.nominated_node, record.victims) == ("n1", ["default/low"])
    slot = plugin_of(h, plugin)
    zone = plugin_of(h, NodeOnlyZoneFilter)
    if shortcut:
        # The node was never copied for a dry run: Filter saw it only in the filter pass.
        assert slot.filter_calls == [("n1", 1)] and zone.filter_calls == [("n1", 1), ("n1", 1)]
        assert slot.checks.shortage_calls == 2  # the emptied node, then "low" back on it
    else:
        # A copy of the node without "low", then with "low" reprieved; the node-only filter is asked
        # about the emptied node and left out of the reprieve check.
        assert slot.filter_calls == [("n1", 1), ("n1", 0), ("n1", 1)]
        assert zone.filter_calls == [("n1", 1), ("n1", 0)]
