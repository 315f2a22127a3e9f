"""Plugin args used directly (from_dict, registry), outside a whole config."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kubesched.config import (
    PLUGIN_ARGS,
    ConfigError,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    VolumeBindingArgs,
    parse_plugin_args,
)


@pytest.mark.parametrize(
    ("cls", "data", "expected"),
    [
        (NodeResourcesFitArgs, None, NodeResourcesFitArgs()),
        (NodeResourcesFitArgs, {"ignoredResources": ["a"]}, NodeResourcesFitArgs(ignored_resources=("a",))),
        (
            NodeResourcesFitArgs,
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}},
            NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("MostAllocated", (ResourceSpec("cpu", 1),))),
        ),
        (NodeResourcesBalancedAllocationArgs, {"resources": []}, NodeResourcesBalancedAllocationArgs()),
        (InterPodAffinityArgs, {"ignorePreferredTermsOfExistingPods": True}, InterPodAffinityArgs(1, True)),
        (InterPodAffinityArgs, {"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False)),
        (DefaultPreemptionArgs, {"minCandidateNodesPercentage": 0}, DefaultPreemptionArgs(0, 100)),
        (VolumeBindingArgs, {"bindTimeoutSeconds": 30}, VolumeBindingArgs(30)),
        (DynamicResourcesArgs, {"filterTimeout": "1m30s"}, DynamicResourcesArgs(timedelta(seconds=90))),
        (DynamicResourcesArgs, {"filterTimeout": "0s"}, DynamicResourcesArgs(timedelta(0))),
        (PodTopologySpreadArgs, {"defaultingType": ""}, PodTopologySpreadArgs((), "System")),
    ],
)
def test_from_dict_defaults_field_by_field(cls: Any, data: dict[str, Any] | None, expected: object) -> None:
    args = cls.from_dict(data)
    assert args == expected
    assert args.validate() == []


def test_registry_covers_in_tree_configurable_plugins() -> None:
    assert sorted(PLUGIN_ARGS) == [
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]
    for name, spec in PLUGIN_ARGS.items():
        assert isinstance(spec.parse(None, "args"), spec.args_type), name


def test_parse_plugin_args_unknown_plugin_keeps_raw_dict() -> None:
    raw = {"x": {"y": 1}}
    parsed = parse_plugin_args("Custom", raw, "args")
    assert parsed == raw
    assert parse_plugin_args("Custom", None, "args") == {}


def test_validate_reports_paths_relative_to_given_prefix() -> None:
    errs = InterPodAffinityArgs(hard_pod_affinity_weight=500).validate("p.args")
    assert [e.path for e in errs] == ["p.args.hardPodAffinityWeight"]
    assert errs[0].reason == "Invalid value: 500: not in valid range [0, 100]"


def test_from_dict_strict() -> None:
    with pytest.raises(ConfigError) as exc:
        VolumeBindingArgs.from_dict({"bindTimeout": 3})
    assert str(exc.value) == "args.bindTimeout: unknown field"


def test_config_error_aggregate_flattens() -> None:
    inner = ConfigError.aggregate([("a", "x"), ("b", "y")])
    assert inner is not None
    outer = ConfigError.aggregate([inner, ConfigError("c", "z")])
    assert outer is not None
    assert outer.errors == (("a", "x"), ("b", "y"), ("c", "z"))
    assert str(outer) == "[a: x, b: y, c: z]"
    assert ConfigError.aggregate([]) is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"filterTimeout": "soon"}, "args.filterTimeout"),
        ({"filterTimeout": "5s", "timeout": "5s"}, "timeout"),
    ],
)
def test_dynamic_resources_args_are_read_strictly(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        DynamicResourcesArgs.from_dict(args)


def test_a_negative_filter_timeout_is_refused() -> None:
    (error,) = DynamicResourcesArgs.from_dict({"filterTimeout": "-1s"}).validate("p.args")
    assert "p.args.filterTimeout" in str(error) and "must be zero or positive" in str(error)
