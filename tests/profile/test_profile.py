"""Profiles (kubesched.profile): one framework per profile, and what the queue and the watch need of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesched.cache.snapshot import Snapshot
from kubesched.clock import VirtualClock
from kubesched.cluster.listers import LISTED_KINDS, Listers
from kubesched.config import load_config
from kubesched.config.features import feature_gates
from kubesched.config.pluginargs import NodeResourcesFitArgs
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.metrics import SchedulerMetrics
from kubesched.plugins import names, registry
from kubesched.plugins.noderesources.fit import NodeResourcesFit
from kubesched.profile import (
    ClusterEventRecorder,
    FrameworkOptions,
    ProfileMap,
    QueueNominator,
    guarded_less,
    ignore_resources_in_fit,
    new_map,
)
from kubesched.queue import events as qevents
from kubesched.queue.queued_pod_info import QueuedPodInfo
from tests.factories import make_pod
from tests.fakeplugins import API, config_dict, profile_with

T0 = datetime(2024, 1, 1, tzinfo=UTC)
NO_PREEMPTION = {"postFilter": {"disabled": [{"name": names.DEFAULT_PREEMPTION}]}}


def build(config: dict[str, Any] | None = None, plugins: Any = None, version: str | None = None) -> ProfileMap:
    clock = VirtualClock(T0)
    cluster = EmbeddedCluster(clock=clock.now)
    snapshot = Snapshot()
    options = FrameworkOptions(
        cluster=cluster,
        clock=clock,
        snapshot=lambda: snapshot,
        listers=Listers(),
        extenders=[],
        event_recorder=ClusterEventRecorder(cluster, clock),
        pod_lister=lambda namespace, labels: [],
        extra_handle={},
    )
    return new_map(load_config(config or dict(API), features=feature_gates(version)), options, plugins)


def two_profiles() -> dict[str, Any]:
    return config_dict(profile_with({}), dict(profile_with(NO_PREEMPTION), schedulerName="calm"))


def test_a_framework_per_profile_in_configuration_order() -> None:
    profiles = build(two_profiles())
    assert list(profiles.frameworks) == ["default-scheduler", "calm"]
    assert [fwk.profile_name for fwk in profiles.frameworks.values()] == ["default-scheduler", "calm"]
    assert profiles.handles("calm") and not profiles.handles("nobody")
    assert profiles.warnings == []


def test_only_profiles_running_default_preemption_count_as_preempting() -> None:
    assert build(two_profiles()).preempting() == {"default-scheduler": names.DEFAULT_PREEMPTION}


def test_plugins_left_out_are_warned_about(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "NOT_YET_BUILT", frozenset({names.TAINT_TOLERATION}))
    plugins = {k: v for k, v in registry.in_tree_registry().items() if k != names.TAINT_TOLERATION}
    profiles = build(plugins=plugins)
    assert profiles.warnings == [
        f'profile "default-scheduler": plugin {names.TAINT_TOLERATION} is not '
        "implemented in kubesched yet; it is left out of the effective plugin set"
    ]
    assert names.TAINT_TOLERATION not in profiles.frameworks["default-scheduler"].plugins


def test_extenders_ignored_resources_become_node_resources_fit_args() -> None:
    ext = {
        "urlPrefix": "http://127.0.0.1:1",
        "filterVerb": "filter",
        "managedResources": [{"name": "example.com/licence", "ignoredByScheduler": True}, {"name": "example.com/kept"}],
    }
    profiles = build(dict(API, extenders=[ext]))
    fit = profiles.frameworks["default-scheduler"].plugins[names.NODE_RESOURCES_FIT]
    assert isinstance(fit, NodeResourcesFit)
    assert fit.ignored_resources == frozenset({"example.com/licence"})


def test_ignored_resources_replace_the_configured_ones() -> None:
    config = load_config(config_dict(profile_with({}, {names.NODE_RESOURCES_FIT: {"ignoredResources": ["a"]}})))
    [profile] = config.profiles
    changed = ignore_resources_in_fit(profile, ("b", "c"))
    changed_args, original_args = (p.plugin_config[names.NODE_RESOURCES_FIT] for p in (changed, profile))
    assert isinstance(changed_args, NodeResourcesFitArgs) and isinstance(original_args, NodeResourcesFitArgs)
    assert changed_args.ignored_resources == ("b", "c")
    assert original_args.ignored_resources != ("b", "c")  # a copy


def test_cluster_event_maps_name_the_plugins_that_registered_each_event() -> None:
    maps = build(two_profiles()).cluster_event_maps()
    assert set(maps) == {"default-scheduler", "calm"}
    node_adds = {
        e: plugins
        for e, plugins in maps["default-scheduler"].items()
        if e.resource == "Node" and qevents.NodeAdd.action in e.action
    }
    assert any(names.NODE_RESOURCES_FIT in plugins for plugins in node_adds.values())


def test_the_queue_sort_offers_its_sort_key_and_pre_enqueue_plugins_come_per_profile() -> None:
    profiles = build(two_profiles())
    less, sort_key = profiles.queue_sort()
    assert sort_key is not None  # PrioritySort orders by key; its less is its own
    high = QueuedPodInfo(make_pod("high", priority=10), T0 + timedelta(seconds=5))
    low = QueuedPodInfo(make_pod("low", priority=1), T0)
    assert less(high, low) and not less(low, high)
    assert sort_key(high) < sort_key(low)
    assert set(profiles.pre_enqueue_plugins()) == {"default-scheduler", "calm"}


def test_kinds_plugins_register_beyond_the_watched_ones() -> None:
    coscheduling = profile_with(
        {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        }
    )
    watched = ("Node", "Pod", *LISTED_KINDS)
    # v1.34's NodeVolumeLimits hears VolumeAttachment deletions, DynamicResources its claims, slices and
    # device classes (kinds the scheduler may not list).
    v134 = sorted({"VolumeAttachment", "DeviceClass", "ResourceClaim", "ResourceSlice"} - set(watched))
    assert build(config_dict(coscheduling)).extra_kinds(watched) == sorted(["PodGroup", *v134])
    assert build().extra_kinds(watched) == v134
    assert build(config_dict(coscheduling), version="1.30").extra_kinds(watched) == ["PodGroup"]
    assert build(version="1.30").extra_kinds(watched) == []


class _Sort:
    name = "Sorter"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("answer", "first_before_second"),
    [
        (False, False),  # a bool answer stands
        (KeyError("no order"), True),  # an exception: priority first
        ("yes", True),  # not a bool: the same fallback
    ],
)
def test_a_guarded_less_falls_back_to_priority_then_queue_time(answer: Any, first_before_second: bool) -> None:
    less = guarded_less(_Sort(answer))
    high = QueuedPodInfo(make_pod("high", priority=10), T0 + timedelta(seconds=5))
    low = QueuedPodInfo(make_pod("low", priority=1), T0)
    assert less(high, low) is first_before_second
    early, late = QueuedPodInfo(make_pod("a"), T0), QueuedPodInfo(make_pod("b"), T0 + timedelta(seconds=1))
    if not isinstance(answer, bool):
        assert less(early, late) and not less(late, early)


def test_the_nominator_is_the_queue_once_it_exists() -> None:
    nominator = QueueNominator()
    with pytest.raises(RuntimeError, match="before the scheduling queue exists"):
        nominator.nominations()
    pod = make_pod("p")

    class Queue:
        def nominated_pods_for_node(self, node_name: str) -> list[Any]:
            return [pod] if node_name == "n1" else []

        def nominations(self) -> dict[str, tuple[Any, ...]]:
            return {"n1": (pod,)}

    profiles = ProfileMap({}, [], nominator)
    profiles.set_pod_nominator(Queue())
    assert nominator.nominated_pods_for_node("n1") == [pod] and nominator.nominations() == {"n1": (pod,)}


def test_instrumented_frameworks_time_into_their_profile() -> None:
    profiles = build(two_profiles())
    metrics = SchedulerMetrics()
    profiles.instrument(metrics)
    assert {
        name: fwk.metrics.profile  # type: ignore[union-attr]
        for name, fwk in profiles.frameworks.items()
    } == {"default-scheduler": "default-scheduler", "calm": "calm"}


def test_queueing_hint_maps_per_profile_hold_the_plugins_that_can_reject() -> None:
    from kubesched.framework.interfaces import ActionType, ClusterEvent
    from kubesched.queue.hints import unrolled_wildcard_events
    from tests.fakeplugins import RejectAllFilter, ref

    cfg = config_dict(
        dict(profile_with({"filter": {"enabled": [{"name": ref(RejectAllFilter)}]}}), schedulerName="wild"),
        dict(profile_with({}), schedulerName="calm"),
    )
    maps = build(cfg).queueing_hint_maps(True, extenders=True)
    assert set(maps) == {"wild", "calm"}
    plugins = {f.plugin_name for fns in maps["calm"].values() for f in fns}
    # Score-only plugins never reject a pod: they register nothing.
    assert names.NODE_RESOURCES_FIT in plugins and "ImageLocality" not in plugins
    fit_node = maps["calm"][ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)]
    assert [(f.plugin_name, f.always_queue) for f in fit_node] == [(names.NODE_RESOURCES_FIT, False)]
    # A plugin without events_to_register, and the extenders, hear every action of every kind.
    for event in unrolled_wildcard_events():
        assert {"Extender", ref(RejectAllFilter)} <= {f.plugin_name for f in maps["wild"][event]}
    without_hints = build(cfg).queueing_hint_maps(False)
    assert all(f.always_queue for m in without_hints.values() for fns in m.values() for f in fns)
