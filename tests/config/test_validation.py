"""Every validation rule, asserting the field path it reports."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from kubesched.config import (
    ConfigError,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    LeaderElectionConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    default_config,
    load_config,
    validate_config,
)

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def cfg(**fields: Any) -> dict[str, Any]:
    return {**HEAD, **fields}


def args_cfg(plugin: str, args: dict[str, Any]) -> dict[str, Any]:
    return cfg(profiles=[{"pluginConfig": [{"name": plugin, "args": args}]}])


def errors_of(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as exc:
        load_config(data)
    return list(exc.value.errors)


ARGS = "profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize(
    ("data", "path", "fragment"),
    [
        # --- top level
        pytest.param(cfg(parallelism=0), "parallelism", "greater than zero", id="parallelism"),
        pytest.param(cfg(percentageOfNodesToScore=101), "percentageOfNodesToScore", "[0-100]", id="pct"),
        pytest.param(cfg(percentageOfNodesToScore=-1), "percentageOfNodesToScore", "[0-100]", id="pct-neg"),
        pytest.param(cfg(podInitialBackoffSeconds=0), "podInitialBackoffSeconds", "greater than 0", id="backoff0"),
        pytest.param(
            cfg(podInitialBackoffSeconds=5, podMaxBackoffSeconds=4),
            "podMaxBackoffSeconds",
            "greater than or equal to PodInitialBackoffSeconds",
            id="backoff-max",
        ),
        pytest.param(
            cfg(leaderElection={"resourceLock": "endpoints"}),
            "leaderElection.resourceLock",
            '"leases"',
            id="lock",
        ),
        pytest.param(
            cfg(leaderElection={"leaseDuration": "5s", "renewDeadline": "10s"}),
            "leaderElection.leaseDuration",
            "greater than RenewDeadline",
            id="lease-vs-renew",
        ),
        pytest.param(
            cfg(leaderElection={"retryPeriod": "-1s"}),
            "leaderElection.retryPeriod",
            "greater than zero",
            id="retry",
        ),
        pytest.param(cfg(clientConnection={"burst": -1}), "clientConnection.burst", "non-negative", id="burst"),
        # --- profiles
        pytest.param(
            cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
            "profiles[1].schedulerName",
            "Duplicate value",
            id="dup-name",
        ),
        pytest.param(
            cfg(profiles=[{"schedulerName": ""}]),
            "profiles[0].schedulerName",
            "Required value",
            id="empty-name",
        ),
        pytest.param(
            cfg(profiles=[{"percentageOfNodesToScore": 120}]),
            "profiles[0].percentageOfNodesToScore",
            "[0-100]",
            id="profile-pct",
        ),
        pytest.param(
            cfg(
                profiles=[
                    {
                        "pluginConfig": [
                            {"name": "MyPlugin", "args": {}},
                            {"name": "MyPlugin", "args": {"a": 1}},
                        ]
                    }
                ]
            ),
            "profiles[0].pluginConfig[1]",
            'Duplicate value: "MyPlugin"',
            id="dup-plugin-config",
        ),
        pytest.param(
            cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "A"}, {"name": "B"}, {"name": "A"}]}}}]),
            "profiles[0].plugins.score.enabled[2]",
            '"A"',
            id="dup-enabled",
        ),
        pytest.param(
            cfg(profiles=[{"plugins": {"multiPoint": {"enabled": [{"name": "X"}, {"name": "X", "weight": 2}]}}}]),
            "profiles[0].plugins.multiPoint.enabled[1]",
            "more than once",
            id="dup-enabled-multipoint-user-index",
        ),
        pytest.param(
            cfg(
                profiles=[
                    {"schedulerName": "a"},
                    {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "Other"}]}}},
                ]
            ),
            "profiles[1].plugins.queueSort",
            "queueSort must be the same for all profiles",
            id="queue-sort-differs",
        ),
        pytest.param(
            cfg(profiles=[{"plugins": {"queueSort": {"enabled": [{"name": "A"}, {"name": "B"}]}}}]),
            "profiles[0].plugins.queueSort.enabled",
            "only one queue sort plugin",
            id="two-queue-sorts",
        ),
        # --- extenders
        pytest.param(
            cfg(extenders=[{"urlPrefix": "http://x", "prioritizeVerb": "p"}]),
            "extenders[0].weight",
            "positive weight",
            id="ext-weight",
        ),
        pytest.param(
            cfg(extenders=[{"urlPrefix": "a", "bindVerb": "b"}, {"urlPrefix": "c", "bindVerb": "b"}]),
            "extenders",
            "only one extender can implement bind",
            id="ext-binders",
        ),
        pytest.param(
            cfg(
                extenders=[
                    {
                        "urlPrefix": "a",
                        "managedResources": [{"name": "example.com/a"}, {"name": "example.com/a"}],
                    }
                ]
            ),
            "extenders[0].managedResources[1].name",
            "duplicate extender managed resource name",
            id="ext-dup-resource",
        ),
        pytest.param(
            cfg(extenders=[{"urlPrefix": "a", "managedResources": [{"name": "cpu"}]}]),
            "extenders[0].managedResources[0].name",
            "invalid extended resource name",
            id="ext-native-resource",
        ),
        # --- NodeResourcesFit
        pytest.param(
            args_cfg("NodeResourcesFit", {"scoringStrategy": {"type": "Balanced"}}),
            f"{ARGS}.scoringStrategy.type",
            'Unsupported value: "Balanced"',
            id="fit-type",
        ),
        pytest.param(
            args_cfg("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu"}]}}),
            f"{ARGS}.scoringStrategy.type",
            'Unsupported value: ""',
            id="fit-explicit-strategy-needs-type",
        ),
        pytest.param(
            args_cfg(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "LeastAllocated",
                        "resources": [{"name": "cpu"}, {"name": "memory", "weight": 101}],
                    }
                },
            ),
            f"{ARGS}.scoringStrategy.resources[1].weight",
            "resource weight of memory not in valid range (0, 100]",
            id="fit-weight-high",
        ),
        pytest.param(
            args_cfg(
                "NodeResourcesFit",
                {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": -2}]}},
            ),
            f"{ARGS}.scoringStrategy.resources[0].weight",
            "(0, 100]",
            id="fit-weight-negative",
        ),
        pytest.param(
            args_cfg("NodeResourcesFit", {"ignoredResources": ["bad name!"]}),
            f"{ARGS}.ignoredResources[0]",
            "name part",
            id="fit-ignored",
        ),
        pytest.param(
            args_cfg("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/x"]}),
            f"{ARGS}.ignoredResourceGroups[0]",
            "can't contain '/'",
            id="fit-group",
        ),
        pytest.param(
            args_cfg(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "requestedToCapacityRatio": {
                            "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]
                        },
                    }
                },
            ),
            f"{ARGS}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            "sorted in increasing order",
            id="shape-monotonic",
        ),
        pytest.param(
            args_cfg(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 11}]},
                    }
                },
            ),
            f"{ARGS}.scoringStrategy.requestedToCapacityRatio.shape[0].score",
            "[0, 10]",
            id="shape-score",
        ),
        pytest.param(
            args_cfg(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]},
                    }
                },
            ),
            f"{ARGS}.scoringStrategy.requestedToCapacityRatio.shape[0].utilization",
            "[0, 100]",
            id="shape-utilization",
        ),
        pytest.param(
            args_cfg(
                "NodeResourcesFit",
                {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "requestedToCapacityRatio": {"shape": []},
                    }
                },
            ),
            f"{ARGS}.scoringStrategy.requestedToCapacityRatio.shape",
            "at least one point",
            id="shape-empty",
        ),
        pytest.param(
            args_cfg("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}),
            f"{ARGS}.scoringStrategy.requestedToCapacityRatio",
            "Required value",
            id="rtcr-needs-shape",
        ),
        # --- NodeResourcesBalancedAllocation
        pytest.param(
            args_cfg("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 2}]}),
            f"{ARGS}.resources[0].weight",
            "must be 1",
            id="balanced-weight",
        ),
        pytest.param(
            args_cfg("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "cpu"}]}),
            f"{ARGS}.resources[1].name",
            "Duplicate value",
            id="balanced-dup",
        ),
        # --- InterPodAffinity
        pytest.param(
            args_cfg("InterPodAffinity", {"hardPodAffinityWeight": 101}),
            f"{ARGS}.hardPodAffinityWeight",
            "[0, 100]",
            id="ipa-high",
        ),
        pytest.param(
            args_cfg("InterPodAffinity", {"hardPodAffinityWeight": -1}),
            f"{ARGS}.hardPodAffinityWeight",
            "[0, 100]",
            id="ipa-neg",
        ),
        # --- DefaultPreemption
        pytest.param(
            args_cfg("DefaultPreemption", {"minCandidateNodesPercentage": 101}),
            f"{ARGS}.minCandidateNodesPercentage",
            "[0, 100]",
            id="dp-pct",
        ),
        pytest.param(
            args_cfg("DefaultPreemption", {"minCandidateNodesAbsolute": -1}),
            f"{ARGS}.minCandidateNodesAbsolute",
            "[0, inf)",
            id="dp-abs",
        ),
        # --- VolumeBinding
        pytest.param(
            args_cfg("VolumeBinding", {"bindTimeoutSeconds": -1}),
            f"{ARGS}.bindTimeoutSeconds",
            "negative",
            id="vb-timeout",
        ),
        pytest.param(
            args_cfg("VolumeBinding", {"shape": [{"utilization": 0, "score": 0}]}),
            f"{ARGS}.shape",
            "VolumeCapacityPriority",
            id="vb-shape-gated",
        ),
        # --- PodTopologySpread
        pytest.param(
            args_cfg("PodTopologySpread", {"defaultingType": "Auto"}),
            f"{ARGS}.defaultingType",
            "Unsupported value",
            id="pts-type",
        ),
        pytest.param(
            args_cfg(
                "PodTopologySpread",
                {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
            ),
            f"{ARGS}.defaultingType",
            "when .defaultConstraints are not empty",
            id="pts-system-with-constraints",
        ),
        pytest.param(
            args_cfg(
                "PodTopologySpread",
                {
                    "defaultingType": "List",
                    "defaultConstraints": [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
                },
            ),
            f"{ARGS}.defaultConstraints[0].maxSkew",
            "(0, inf)",
            id="pts-skew",
        ),
        pytest.param(
            args_cfg(
                "PodTopologySpread",
                {
                    "defaultingType": "List",
                    "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
                },
            ),
            f"{ARGS}.defaultConstraints[0].topologyKey",
            "Required value",
            id="pts-key",
        ),
        pytest.param(
            args_cfg(
                "PodTopologySpread",
                {
                    "defaultingType": "List",
                    "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}],
                },
            ),
            f"{ARGS}.defaultConstraints[0].whenUnsatisfiable",
            "Unsupported value",
            id="pts-action",
        ),
        pytest.param(
            args_cfg(
                "PodTopologySpread",
                {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "zone",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"a": "b"}},
                        }
                    ],
                },
            ),
            f"{ARGS}.defaultConstraints[0].labelSelector",
            "Forbidden",
            id="pts-selector",
        ),
        pytest.param(
            args_cfg(
                "PodTopologySpread",
                {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                    ],
                },
            ),
            f"{ARGS}.defaultConstraints[1]",
            "Duplicate value",
            id="pts-dup",
        ),
        # --- NodeAffinity
        pytest.param(
            args_cfg(
                "NodeAffinity",
                {
                    "addedAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "a", "operator": "Like", "values": ["x"]}]}
                            ]
                        }
                    }
                },
            ),
            f"{ARGS}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].operator",
            "Unsupported value",
            id="na-operator",
        ),
        pytest.param(
            args_cfg(
                "NodeAffinity",
                {
                    "addedAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 1,
                                "preference": {"matchExpressions": [{"key": "a", "operator": "In"}]},
                            }
                        ]
                    }
                },
            ),
            f"{ARGS}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference"
            ".matchExpressions[0].values",
            "Required value",
            id="na-preferred-values",
        ),
    ],
)
def test_validation_rule(data: dict[str, Any], path: str, fragment: str) -> None:
    errors = errors_of(data)
    matching = [reason for p, reason in errors if p == path]
    assert matching, f"no error at {path}; got {errors}"
    assert any(fragment in reason for reason in matching), matching


def test_error_message_format() -> None:
    data = cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "A"}, {"name": "A"}]}}}])
    with pytest.raises(ConfigError) as exc:
        load_config(data)
    assert str(exc.value) == 'profiles[0].plugins.score.enabled[1]: Invalid value: "A": plugin enabled more than once'


def test_errors_are_aggregated() -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(cfg(parallelism=0, podInitialBackoffSeconds=0, percentageOfNodesToScore=200))
    paths = [p for p, _ in exc.value.errors]
    assert paths == ["parallelism", "percentageOfNodesToScore", "podInitialBackoffSeconds"]
    assert str(exc.value).startswith("[parallelism: Invalid value: 0: ")
    assert exc.value.path == "parallelism"
    assert isinstance(exc.value, ValueError)


def test_both_preemption_minimums_zero() -> None:
    errors = errors_of(
        args_cfg("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})
    )
    assert [p for p, _ in errors] == [
        f"{ARGS}.minCandidateNodesPercentage",
        f"{ARGS}.minCandidateNodesAbsolute",
    ]


def test_leader_election_checks_skipped_when_not_electing() -> None:
    loaded = load_config(cfg(leaderElection={"leaderElect": False, "resourceLock": "endpoints"}))
    assert loaded.leader_election.resource_lock == "endpoints"


def test_same_queue_sort_in_all_profiles_is_fine() -> None:
    loaded = load_config(
        cfg(
            profiles=[
                {"schedulerName": "a", "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}}},
                {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}}},
            ]
        )
    )
    assert len(loaded.profiles) == 2


def test_queue_sort_args_must_match() -> None:
    errors = errors_of(
        cfg(
            profiles=[
                {
                    "schedulerName": "a",
                    "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}},
                    "pluginConfig": [{"name": "Q", "args": {"x": 1}}],
                },
                {
                    "schedulerName": "b",
                    "plugins": {"queueSort": {"enabled": [{"name": "Q"}]}},
                    "pluginConfig": [{"name": "Q", "args": {"x": 2}}],
                },
            ]
        )
    )
    assert errors == [
        (
            "profiles[1].pluginConfig[0].args",
            'Invalid value: "Q": queueSort must be the same for all profiles',
        )
    ]


def test_plugin_existence_is_not_checked_here() -> None:
    loaded = load_config(cfg(profiles=[{"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}]))
    assert loaded.profiles[0].plugins.filter.enabled == (PluginRef("NoSuchPlugin"),)


# ---- validate_config on programmatically built configurations -------------


@pytest.mark.parametrize(
    ("cfg_obj", "path"),
    [
        (replace(default_config(), profiles=()), "profiles"),
        (replace(default_config(), parallelism=-3), "parallelism"),
        (
            replace(
                default_config(),
                leader_election=LeaderElectionConfig(lease_duration=timedelta(seconds=0)),
            ),
            "leaderElection.leaseDuration",
        ),
        (
            KubeSchedulerConfiguration(
                profiles=(
                    Profile(
                        "p",
                        plugins=Plugins(score=PluginSet(enabled=(PluginRef("A"), PluginRef("A")))),
                    ),
                )
            ),
            "profiles[0].plugins.score.enabled[1]",
        ),
        (
            KubeSchedulerConfiguration(
                profiles=(Profile("p", plugin_config={"InterPodAffinity": InterPodAffinityArgs(200)}),)
            ),
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
        ),
    ],
)
def test_validate_config_direct(cfg_obj: KubeSchedulerConfiguration, path: str) -> None:
    with pytest.raises(ConfigError) as exc:
        validate_config(cfg_obj)
    assert path in [p for p, _ in exc.value.errors]


def test_default_config_is_valid() -> None:
    validate_config(default_config())
