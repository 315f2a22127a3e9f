"""Behaviour of the framework runtime (kubesched.framework.runtime), as kube-scheduler's framework.go.

Profiles are built through the real config loader and :class:`Scheduler`, with small out-of-tree
plugins from tests.fakeplugins enabled by import path, so construction errors, multiPoint expansion,
weights, PreFilter / Filter / Score semantics are all checked end to end.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extension_points import FrameworkError
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.framework.runtime import ALL_EVENTS, Framework
from kubesched.framework.status import Code
from kubesched.plugins import names
from kubesched.plugins.registry import NOT_YET_BUILT, PluginLoadError
from tests.factories import make_pod, node_dict, pod_dict
from tests.fakeplugins import (
    ExtraSort,
    Harness,
    LabelFilter,
    MultiPointPlugin,
    NamedScore,
    NameScore,
    PostFilterSays,
    PostFilterSaysToo,
    PreFilterNodes,
    PreFilterNodesB,
    PreFilterStatus,
    RejectAllFilter,
    RejectAllFilterNoEvents,
    SkippingFilter,
    config_dict,
    profile_with,
    ref,
)

#: No PostFilter at all (DefaultPreemption, and in v1.34 DynamicResources, which adds its own text).
NO_PREEMPTION = {"postFilter": {"disabled": [{"name": "*"}]}}


def enabled(*classes: type, **weights: int) -> list[dict[str, Any]]:
    return [{"name": ref(c), **({"weight": weights[c.__name__]} if c.__name__ in weights else {})} for c in classes]


def harness(
    plugins: dict[str, Any], args: dict[str, Any] | None = None, nodes: int | list[dict] = 2, **kw: Any
) -> Harness:
    objs = [node_dict(f"n{i + 1}") for i in range(nodes)] if isinstance(nodes, int) else nodes
    return Harness(config_dict(profile_with(plugins, args)), objects=objs, **kw)


def fwk(h: Harness) -> Framework:
    return h.scheduler.profiles["default-scheduler"]


# -- construction ---------------------------------------------------------------------------------------
def test_multipoint_expansion_orders_overrides_then_multipoint_then_rest() -> None:
    """expandMultiPointPlugins: plugins re-enabled at the point (in its order), multiPoint ones, the rest."""
    plugins = {
        "multiPoint": {
            "enabled": [
                {"name": names.PRIORITY_SORT},
                {"name": names.DEFAULT_BINDER},
                *enabled(LabelFilter, MultiPointPlugin),
            ],
            "disabled": [{"name": "*"}],
        },
        "filter": {"enabled": enabled(RejectAllFilter, MultiPointPlugin)},
    }
    f = fwk(harness(plugins))
    assert f.plugin_names("filter") == [ref(MultiPointPlugin), ref(LabelFilter), ref(RejectAllFilter)]
    # A multiPoint plugin lands at every point it implements, and only there.
    assert f.plugin_names("score") == [ref(MultiPointPlugin)]
    assert f.plugin_names("queue_sort") == [names.PRIORITY_SORT]
    assert f.plugin_names("bind") == [names.DEFAULT_BINDER]
    assert f.plugin_names("reserve") == []


def test_multipoint_plugin_disabled_at_one_point_stays_at_the_others() -> None:
    plugins = {
        "multiPoint": {"enabled": enabled(MultiPointPlugin)},
        "filter": {"disabled": [{"name": ref(MultiPointPlugin)}]},
    }
    f = fwk(harness(plugins))
    assert ref(MultiPointPlugin) not in f.plugin_names("filter")
    assert ref(MultiPointPlugin) in f.plugin_names("score")


def test_point_disabled_star_skips_multipoint_expansion() -> None:
    plugins = {
        "multiPoint": {"enabled": enabled(MultiPointPlugin)},
        "score": {"enabled": enabled(NameScore), "disabled": [{"name": "*"}]},
    }
    f = fwk(harness(plugins))
    assert f.plugin_names("score") == [ref(NameScore)]
    assert names.NODE_RESOURCES_FIT in f.plugin_names("filter")


@pytest.mark.parametrize(
    ("multipoint_weight", "score_weight", "want"),
    [
        (3, None, 3),  # multiPoint weight used
        (3, 5, 5),  # score.enabled beats multiPoint
        (0, None, 1),  # 0 means unset -> 1
        (None, None, 1),
        (3, 0, 1),  # score.enabled entry present with weight 0 -> 1, not the multiPoint 3
    ],
)
def test_score_weights(multipoint_weight: int | None, score_weight: int | None, want: int) -> None:
    mp: dict[str, Any] = {"name": ref(MultiPointPlugin)}
    if multipoint_weight is not None:
        mp["weight"] = multipoint_weight
    plugins: dict[str, Any] = {"multiPoint": {"enabled": [mp]}}
    if score_weight is not None:
        plugins["score"] = {"enabled": [{"name": ref(MultiPointPlugin), "weight": score_weight}]}
    f = fwk(harness(plugins))
    assert f.score_weights[ref(MultiPointPlugin)] == want
    # In-tree defaults keep their v1 weights.
    assert f.score_weights[names.TAINT_TOLERATION] == 3
    assert f.score_weights[names.NODE_AFFINITY] == 2


def test_weight_multiplies_the_normalised_score() -> None:
    args = {ref(NameScore): {"scores": {"n1": 5, "n2": 10}, "normalize": True}}
    h = harness({"score": {"enabled": enabled(NameScore, NameScore=2), "disabled": [{"name": "*"}]}}, args)
    h.create(pod_dict("p"))
    h.step()
    rec = h.records[-1]
    assert rec.scores == {"n1": {ref(NameScore): 100}, "n2": {ref(NameScore): 200}}
    assert rec.total == {"n1": 100, "n2": 200}
    assert rec.node == "n2"
    assert ("normalize",) in h.plugin(NameScore).calls


def test_weight_applies_to_a_plugin_that_names_itself() -> None:
    """A plugin whose ``name`` is not its config name still gets the configured weight."""
    args = {ref(NamedScore): {"scores": {"n1": 10, "n2": 20}}}
    h = harness({"score": {"enabled": enabled(NamedScore, NamedScore=5), "disabled": [{"name": "*"}]}}, args)
    h.create(pod_dict("p"))
    h.step()
    assert h.records[-1].scores == {"n1": {"NamedScore": 50}, "n2": {"NamedScore": 100}}


@pytest.mark.parametrize(
    ("plugins", "error", "match"),
    [
        (
            {"queueSort": {"enabled": enabled(ExtraSort)}},
            FrameworkError,
            'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 2',
        ),
        (
            {"bind": {"disabled": [{"name": "*"}]}},
            FrameworkError,
            'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
        ),
        ({"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}, PluginLoadError, 'plugin "NoSuchPlugin" does not exist'),
        (
            {"filter": {"enabled": [{"name": "tests.no_such_module:X"}]}},
            PluginLoadError,
            'plugin "tests.no_such_module:X": importing tests.no_such_module failed',
        ),
        (
            {"filter": {"enabled": [{"name": "tests.fakeplugins:NoSuchClass"}]}},
            PluginLoadError,
            "module tests.fakeplugins has no attribute NoSuchClass",
        ),
        (
            {"score": {"enabled": enabled(LabelFilter)}},
            FrameworkError,
            f'plugin "{ref(LabelFilter)}" does not extend score plugin',
        ),
    ],
)
def test_construction_errors(plugins: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error) as info:
        harness(plugins)
    assert match in str(info.value)


def test_not_yet_built_plugins_are_dropped_with_a_warning_naming_each() -> None:
    h = harness({"filter": {"enabled": [{"name": "DynamicResources"}]}})
    f = fwk(h)
    for name in NOT_YET_BUILT:
        assert name not in f.plugins
        assert any(f"plugin {name} is not implemented" in w for w in h.scheduler.warnings), name
    # The built plugins still run, the volume plugins among them.
    assert names.NODE_RESOURCES_FIT in f.plugin_names("filter")
    assert names.VOLUME_BINDING in f.plugin_names("filter")


def test_events_to_register_or_wildcard() -> None:
    """A plugin without events_to_register is assumed to care about every event; an empty list about none."""
    plugins = {"filter": {"enabled": enabled(RejectAllFilter, LabelFilter, RejectAllFilterNoEvents)}}
    f = fwk(harness(plugins))
    assert f.enqueue_events[ref(RejectAllFilter)] == [ALL_EVENTS]
    assert ALL_EVENTS.is_wildcard()
    assert f.enqueue_events[ref(LabelFilter)] == [ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL)]
    assert f.enqueue_events[ref(RejectAllFilterNoEvents)] == []


# -- PreFilter ------------------------------------------------------------------------------------------
def test_prefilter_skip_skips_the_plugins_filter() -> None:
    h = harness({"multiPoint": {"enabled": enabled(SkippingFilter)}})
    h.create(pod_dict("p"))
    h.step()
    assert h.node_of("p") is not None
    assert h.plugin(SkippingFilter).calls == []


def test_prefilter_skip_bookkeeping_in_cycle_state() -> None:
    h = harness({"multiPoint": {"enabled": enabled(SkippingFilter)}})
    state = CycleState()
    _, status, _ = fwk(h).run_pre_filter_plugins(state, make_pod("p"))
    assert status is None
    assert ref(SkippingFilter) in state.skip_filter_plugins


@pytest.mark.parametrize(
    ("code", "later_runs", "want_code", "want_message"),
    [
        # Unschedulable: the remaining PreFilter plugins still run (kubernetes#119770).
        ("UNSCHEDULABLE", True, Code.UNSCHEDULABLE, "no"),
        # UnschedulableAndUnresolvable: stop at once.
        ("UNSCHEDULABLE_AND_UNRESOLVABLE", False, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no"),
        ("ERROR", False, Code.ERROR, f'running PreFilter plugin "{ref(PreFilterStatus)}": no'),
    ],
)
def test_prefilter_status_codes(code: str, later_runs: bool, want_code: Code, want_message: str) -> None:
    plugins = {"preFilter": {"enabled": enabled(PreFilterStatus, PreFilterNodes), "disabled": [{"name": "*"}]}}
    h = harness(plugins, {ref(PreFilterStatus): {"code": code, "reason": "no"}})
    result, status, _ = fwk(h).run_pre_filter_plugins(CycleState(), make_pod("p"))
    assert result is None
    assert status is not None
    assert status.code is want_code
    assert status.message == want_message
    assert status.plugin == ref(PreFilterStatus)
    assert bool(h.plugin(PreFilterNodes).calls) is later_runs


@pytest.mark.parametrize(
    ("code", "result", "message"),
    [
        ("UNSCHEDULABLE", "Unschedulable", "0/2 nodes are available: no."),
        ("UNSCHEDULABLE_AND_UNRESOLVABLE", "Unschedulable", "0/2 nodes are available: no."),
        ("ERROR", "Error", f'running PreFilter plugin "{ref(PreFilterStatus)}": no'),
    ],
)
def test_prefilter_rejection_in_a_cycle(code: str, result: str, message: str) -> None:
    plugins = {"preFilter": {"enabled": enabled(PreFilterStatus)}, **NO_PREEMPTION}
    h = harness(plugins, {ref(PreFilterStatus): {"code": code, "reason": "no"}})
    h.create(pod_dict("p"))
    h.step()
    rec = h.records[-1]
    assert (rec.result, rec.message) == (result, message)
    assert h.node_of("p") is None
    if result == "Unschedulable":
        # Every node carries the PreFilter status (so preemption sees them all as rejected).
        assert set(rec.filter) == {"n1", "n2"}
        assert rec.filter["n1"]["plugin"] == ref(PreFilterStatus)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (["n1", "n2"], ["n2", "n3"], {"n2"}),
        (["n1", "n2"], None, {"n1", "n2"}),
        (None, None, None),
    ],
)
def test_prefilter_results_merge(a: list[str] | None, b: list[str] | None, want: set[str] | None) -> None:
    plugins = {"preFilter": {"enabled": enabled(PreFilterNodes, PreFilterNodesB)}}
    h = harness(plugins, {ref(PreFilterNodes): {"nodes": a}, ref(PreFilterNodesB): {"nodes": b}}, nodes=3)
    result, status, _ = fwk(h).run_pre_filter_plugins(CycleState(), make_pod("p"))
    assert status is None
    got = None if result is None or result.all_nodes() else set(result.node_names or ())
    assert got == want


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (
            ["n1"],
            ["n2"],
            f"node(s) didn't satisfy plugin(s) [{ref(PreFilterNodes)} {ref(PreFilterNodesB)}] simultaneously",
        ),
        ([], None, f"node(s) didn't satisfy plugin {ref(PreFilterNodes)}"),
    ],
)
def test_prefilter_results_disjoint(a: list[str], b: list[str] | None, message: str) -> None:
    plugins = {"preFilter": {"enabled": enabled(PreFilterNodes, PreFilterNodesB)}, **NO_PREEMPTION}
    h = harness(plugins, {ref(PreFilterNodes): {"nodes": a}, ref(PreFilterNodesB): {"nodes": b}}, nodes=3)
    _, status, _ = fwk(h).run_pre_filter_plugins(CycleState(), make_pod("x"))
    assert status is not None
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == message
    h.create(pod_dict("p"))
    h.step()
    assert h.records[-1].message == f"0/3 nodes are available: {message}."


@pytest.mark.parametrize(
    ("version", "listed"), [("1.34", [PreFilterNodes, PreFilterNodesB]), ("1.30", [PreFilterNodesB, PreFilterNodes])]
)
def test_prefilter_plugins_that_narrow_the_nodes_sorted_from_v1_34(version: str, listed: list[type]) -> None:
    """In profile order before v1.34 (B is configured first here), sorted from v1.34 (a set's list)."""
    plugins = {"preFilter": {"enabled": enabled(PreFilterNodesB, PreFilterNodes)}, **NO_PREEMPTION}
    h = harness(
        plugins,
        {ref(PreFilterNodes): {"nodes": ["n1"]}, ref(PreFilterNodesB): {"nodes": ["n2"]}},
        nodes=3,
        version=version,
    )
    _, status, narrowing = fwk(h).run_pre_filter_plugins(CycleState(), make_pod("x"))
    assert narrowing == [ref(c) for c in listed]
    assert status is not None
    assert status.message == f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"


def test_prefilter_plugins_that_narrow_nothing_or_stop_the_cycle_are_not_listed() -> None:
    plugins = {"preFilter": {"enabled": enabled(PreFilterNodes, PreFilterNodesB)}}
    h = harness(plugins, {ref(PreFilterNodes): {"nodes": ["n1", "n2"]}}, nodes=3)
    assert fwk(h).run_pre_filter_plugins(CycleState(), make_pod("x"))[2] == [ref(PreFilterNodes)]
    plugins = {"preFilter": {"enabled": enabled(PreFilterNodes, PreFilterStatus)}}
    h = harness(
        plugins,
        {ref(PreFilterNodes): {"nodes": ["n1"]}, ref(PreFilterStatus): {"code": "UNSCHEDULABLE_AND_UNRESOLVABLE"}},
        nodes=3,
    )
    assert fwk(h).run_pre_filter_plugins(CycleState(), make_pod("x"))[2] == []


def test_nodes_outside_the_prefilter_result_are_not_filtered_and_traced_as_skipped() -> None:
    plugins = {
        "preFilter": {"enabled": enabled(PreFilterNodes)},
        "filter": {"enabled": enabled(LabelFilter)},
        **NO_PREEMPTION,
    }
    nodes = [node_dict("n1"), node_dict("n2", labels={"fake": "yes"}), node_dict("n3", labels={"fake": "yes"})]
    h = harness(plugins, {ref(PreFilterNodes): {"nodes": ["n1", "n2", "ghost"]}}, nodes=nodes)
    h.create(pod_dict("p"))
    h.step()
    rec = h.records[-1]
    assert h.node_of("p") == "n2"
    assert sorted(c[2] for c in h.plugin(LabelFilter).calls) == ["n1", "n2"]
    assert rec.filter["n3"]["plugin"] == "PreFilterResult"
    assert rec.filter["n3"]["code"] == "Skipped"
    assert rec.filter["n1"]["plugin"] == ref(LabelFilter)


# -- PostFilter -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("first", "code", "message", "plugin", "ran"),
    [
        # Unschedulable: the next one runs too, the reasons join and the first rejector is named.
        ("UNSCHEDULABLE", Code.UNSCHEDULABLE, "no, too", PostFilterSays, [PostFilterSays, PostFilterSaysToo]),
        ("UNSCHEDULABLE_AND_UNRESOLVABLE", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no", PostFilterSays, [PostFilterSays]),
        # An Error stops the run in the plugin's own words (kube-scheduler passes them on).
        ("ERROR", Code.ERROR, "no", PostFilterSays, [PostFilterSays]),
        ("SUCCESS", Code.SUCCESS, "no", PostFilterSays, [PostFilterSays]),
    ],
)
def test_post_filter_outcomes(first: str, code: Code, message: str, plugin: type, ran: list[type]) -> None:
    plugins = {"postFilter": {"enabled": enabled(PostFilterSays, PostFilterSaysToo), "disabled": [{"name": "*"}]}}
    h = harness(plugins, {ref(PostFilterSays): {"code": first}, ref(PostFilterSaysToo): {"reason": "too"}})
    f = fwk(h)
    _, status = f.run_post_filter_plugins(CycleState(), make_pod("p"), {})
    assert (status.code, status.message, status.plugin) == (code, message, ref(plugin))
    assert f.post_filter_plugins_ran(status) == [ref(c) for c in ran]
    assert bool(h.plugin(PostFilterSaysToo).calls) is (len(ran) == 2)


# -- Filter ---------------------------------------------------------------------------------------------
def test_first_rejecting_filter_wins_and_later_filters_do_not_see_the_node() -> None:
    plugins = {"filter": {"enabled": enabled(LabelFilter, RejectAllFilter)}, **NO_PREEMPTION}
    nodes = [
        node_dict("plain"),
        node_dict("labelled", labels={"fake": "yes"}),
        node_dict("cordoned", labels={"fake": "yes"}, unschedulable=True),
    ]
    h = harness(plugins, nodes=nodes)
    h.create(pod_dict("p"))
    h.step()
    rec = h.records[-1]
    assert {n: e["plugin"] for n, e in rec.filter.items()} == {
        "plain": ref(LabelFilter),
        "labelled": ref(RejectAllFilter),
        "cordoned": names.NODE_UNSCHEDULABLE,
    }
    # The batch in-tree filter ran first: the per-node plugins never saw the cordoned node.
    assert "cordoned" not in {c[2] for c in h.plugin(LabelFilter).calls}
    assert {c[2] for c in h.plugin(RejectAllFilter).calls} == {"labelled"}
    assert rec.message == (
        "0/3 nodes are available: 1 node(s) lacked label fake, "
        "1 node(s) were unschedulable, 1 rejected by RejectAllFilter."
    )


def test_filter_error_fails_the_cycle_with_an_error() -> None:
    plugins = {"filter": {"enabled": enabled(LabelFilter)}}
    h = harness(
        plugins,
        {ref(LabelFilter): {"error_on": "n2"}},
        nodes=[node_dict("n1", labels={"fake": "yes"}), node_dict("n2", labels={"fake": "yes"})],
    )
    h.create(pod_dict("p"))
    h.step()
    rec = h.records[-1]
    assert rec.result == "Error"
    assert rec.message == f'running "{ref(LabelFilter)}" filter plugin: filter broke'
    assert h.condition("p")["reason"] == "SchedulerError"


@pytest.mark.parametrize("code", ["Unschedulable", "UnschedulableAndUnresolvable"])
def test_filter_rejection_code_is_kept_in_the_trace(code: str) -> None:
    h = harness({"filter": {"enabled": enabled(LabelFilter)}, **NO_PREEMPTION}, {ref(LabelFilter): {"code": code}})
    h.create(pod_dict("p"))
    h.step()
    assert {e["code"] for e in h.records[-1].filter.values()} == {code}


def test_one_feasible_node_is_chosen_without_scoring() -> None:
    plugins = {"filter": {"enabled": enabled(LabelFilter)}, "multiPoint": {"enabled": enabled(NameScore)}}
    h = harness(plugins, nodes=[node_dict("n1"), node_dict("n2", labels={"fake": "yes"})])
    h.create(pod_dict("p"))
    h.step()
    rec = h.records[-1]
    assert (rec.node, rec.scores, rec.total, rec.ties, rec.feasible) == ("n2", {}, {}, ["n2"], ["n2"])
    assert h.plugin(NameScore).calls == []


def _nominate(h: Harness, name: str, node: str, priority: int, cpu: str) -> None:
    """A pod of another scheduler nominated to ``node``, as a preemptor waiting for its victims."""
    pod = make_pod(name, priority=priority, cpu=cpu, spec={"schedulerName": "someone-else"})
    h.scheduler.queue.add_nominated_pod(pod, node)


@pytest.mark.parametrize(
    ("priority", "want_node"),
    [
        (0, "n2"),  # a nominated pod of >= priority makes n1 look full
        (10, "n2"),  # equal priority counts too
        (11, "n1"),  # a lower-priority nomination is ignored
    ],
)
def test_nominated_pods_count_against_their_node(priority: int, want_node: str) -> None:
    pcs = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"pc{v}"}, "value": v}
        for v in (0, 10, 11)
    ]
    nodes = [node_dict("n1", cpu="2"), node_dict("n2", cpu="2"), *pcs]
    h = harness(
        {"score": {"enabled": enabled(NameScore), "disabled": [{"name": "*"}]}},
        {ref(NameScore): {"scores": {"n1": 100, "n2": 0}}},
        nodes=nodes,
    )
    _nominate(h, "big", "n1", priority=10, cpu="2")
    pod = pod_dict("p", cpu="1", spec={"priorityClassName": f"pc{priority}"})
    del pod["spec"]["priority"]
    h.create(pod)
    h.step()
    assert h.node_of("p") == want_node
    if want_node == "n2":
        assert h.records[-1].filter["n1"]["reasons"] == ["Insufficient cpu"]


# -- Score ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "bad"),
    [
        ({"scores": {"n1": 150}}, 150),
        ({"scores": {"n1": -1}}, -1),
        ({"bad_normalize": True}, 101),
    ],
)
def test_score_out_of_range_is_an_error(args: dict[str, Any], bad: int) -> None:
    h = harness({"score": {"enabled": enabled(NameScore)}}, {ref(NameScore): args})
    h.create(pod_dict("p"))
    h.step()
    rec = h.records[-1]
    assert rec.result == "Error"
    assert rec.message == (
        f'applying score defaultWeights on Score plugins: plugin "{ref(NameScore)}" returns an '
        f"invalid score {bad}, it should in the range of [0, 100] after normalizing"
    )
    assert h.node_of("p") is None


def test_tie_break_by_name_picks_the_smallest_name() -> None:
    nodes = [node_dict(n) for n in ("zeta", "alpha", "mid")]
    h = harness({"multiPoint": {"enabled": enabled(NameScore)}}, nodes=nodes, tie_break="name")
    h.create(pod_dict("p"))
    h.step()
    assert h.records[-1].ties == ["alpha", "mid", "zeta"]
    assert h.node_of("p") == "alpha"


def _random_pick(seed: int) -> str | None:
    h = harness({}, nodes=8, tie_break="random", seed=seed)
    h.create(pod_dict("p"))
    h.step()
    assert len(h.records[-1].ties) == 8
    return h.node_of("p")


def test_random_tie_break_is_reproducible_per_seed() -> None:
    assert _random_pick(7) == _random_pick(7)
    assert len({_random_pick(s) for s in range(8)}) > 1
