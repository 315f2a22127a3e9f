"""Defaults: what kube-scheduler v1.30 and v1.34 run with when the config says nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kubesched.config import (
    DEFAULT_MULTI_POINT,
    EXTENSION_POINTS,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginRef,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    VolumeBindingArgs,
    default_args,
    default_config,
    load_config,
)
from kubesched.config.features import feature_gates

EXPECTED_MULTI_POINT = [
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("EBSLimits", 0),
    ("GCEPDLimits", 0),
    ("NodeVolumeLimits", 0),
    ("AzureDiskLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
]

#: v1.34 without the in-tree cloud volume limits, and with DynamicResources (its gate is on) just before
#: DefaultPreemption.
EXPECTED_MULTI_POINT_V1_34 = [
    (name, weight)
    for name, weight in EXPECTED_MULTI_POINT
    if name not in ("EBSLimits", "GCEPDLimits", "AzureDiskLimits")
]
EXPECTED_MULTI_POINT_V1_34.insert(EXPECTED_MULTI_POINT_V1_34.index(("DefaultPreemption", 0)), ("DynamicResources", 0))

MINIMAL = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def test_default_multi_point_list_order_and_weights() -> None:
    assert [(p.name, p.weight) for p in DEFAULT_MULTI_POINT] == EXPECTED_MULTI_POINT


@pytest.mark.parametrize("source", [None, MINIMAL], ids=["none", "minimal-dict"])
def test_default_configuration_values(source: object) -> None:
    cfg = load_config(source)  # type: ignore[arg-type]
    assert cfg.parallelism == 16
    assert cfg.percentage_of_nodes_to_score == 0  # adaptive
    assert cfg.pod_initial_backoff_seconds == 1
    assert cfg.pod_max_backoff_seconds == 10
    assert cfg.extenders == ()
    assert cfg.delay_cache_until_active is False
    assert cfg.enable_profiling is True
    assert cfg.enable_contention_profiling is True
    le = cfg.leader_election
    assert le.leader_elect is True
    assert le.lease_duration == timedelta(seconds=15)
    assert le.renew_deadline == timedelta(seconds=10)
    assert le.retry_period == timedelta(seconds=2)
    assert (le.resource_lock, le.resource_name, le.resource_namespace) == (
        "leases",
        "kube-scheduler",
        "kube-system",
    )
    assert cfg.client_connection["qps"] == 50.0
    assert cfg.client_connection["burst"] == 100
    assert cfg.client_connection["contentType"] == "application/vnd.kubernetes.protobuf"


@pytest.mark.parametrize(
    ("version", "expected"), [("1.30", EXPECTED_MULTI_POINT), ("1.34", EXPECTED_MULTI_POINT_V1_34)]
)
def test_default_profile_plugins(version: str, expected: list[tuple[str, int]]) -> None:
    (profile,) = default_config(feature_gates(version)).profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    mp = profile.plugins.multi_point
    assert [(p.name, p.weight) for p in mp.enabled] == expected
    assert mp.disabled == ()
    # Nothing outside multiPoint: expansion is the framework's job.
    for yaml_name, attr in EXTENSION_POINTS:
        if yaml_name != "multiPoint":
            assert getattr(profile.plugins, attr).enabled == (), yaml_name


def test_default_profile_plugin_config_has_every_in_tree_args() -> None:
    (profile,) = default_config().profiles
    assert profile.plugin_config == {
        "DefaultPreemption": DefaultPreemptionArgs(10, 100),
        "DynamicResources": DynamicResourcesArgs(timedelta(seconds=10)),
        "InterPodAffinity": InterPodAffinityArgs(1, False),
        "NodeAffinity": NodeAffinityArgs(None),
        "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs(
            (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
        ),
        "NodeResourcesFit": NodeResourcesFitArgs(
            (), (), ScoringStrategy("LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1)))
        ),
        "PodTopologySpread": PodTopologySpreadArgs((), "System"),
        "VolumeBinding": VolumeBindingArgs(600, ()),
    }


@pytest.mark.parametrize(
    ("plugin", "expected"),
    [
        (
            "DefaultPreemption",
            DefaultPreemptionArgs(min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=100),
        ),
        ("InterPodAffinity", InterPodAffinityArgs(hard_pod_affinity_weight=1)),
        ("NodeAffinity", NodeAffinityArgs(added_affinity=None)),
        ("NodeResourcesBalancedAllocation", NodeResourcesBalancedAllocationArgs()),
        ("NodeResourcesFit", NodeResourcesFitArgs()),
        ("PodTopologySpread", PodTopologySpreadArgs(defaulting_type="System")),
        ("VolumeBinding", VolumeBindingArgs(bind_timeout_seconds=600)),
        ("TaintToleration", None),
        ("MyOutOfTreePlugin", None),
    ],
)
def test_default_args(plugin: str, expected: object) -> None:
    assert default_args(plugin) == expected


def test_dataclass_defaults_match_loaded_defaults() -> None:
    assert KubeSchedulerConfiguration() == default_config() == load_config(MINIMAL)


def test_disabled_plugin_gets_no_default_args() -> None:
    cfg = load_config(
        {
            **MINIMAL,
            "profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "VolumeBinding"}]}}}],
        }
    )
    assert "VolumeBinding" not in cfg.profiles[0].plugin_config
    assert "NodeResourcesFit" in cfg.profiles[0].plugin_config


def test_plugin_ref_weight_defaults_to_unset() -> None:
    assert PluginRef("X").weight == 0
