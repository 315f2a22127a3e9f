"""Plugin args used directly (from_dict, registry), outside a whole config."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import (
    PLUGIN_ARGS,
    ConfigError,
    DefaultPreemptionArgs,
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
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy("MostAllocated", (ResourceSpec("cpu", 1),))
            ),
        ),
        (NodeResourcesBalancedAllocationArgs, {"resources": []}, NodeResourcesBalancedAllocationArgs()),
        (InterPodAffinityArgs, {"ignorePreferredTermsOfExistingPods": True}, InterPodAffinityArgs(1, True)),
        (InterPodAffinityArgs, {"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False)),
        (DefaultPreemptionArgs, {"minCandidateNodesPercentage": 0}, DefaultPreemptionArgs(0, 100)),
        (VolumeBindingArgs, {"bindTimeoutSeconds": 30}, VolumeBindingArgs(30)),
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
