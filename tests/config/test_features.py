"""Emulated versions and feature gates: each version's defaults, and what upstream refuses to set."""

from __future__ import annotations

import pytest

from kubesched.config.features import (
    DEFAULT_EMULATED_VERSION,
    GATES,
    FeatureGateError,
    check_version,
    feature_gates,
    parse_feature_gates,
)


@pytest.mark.parametrize(
    ("gate", "at_130", "at_134"),
    [
        ("SchedulerQueueingHints", False, True),
        ("SchedulerAsyncPreemption", False, True),
        ("SchedulerPopFromBackoffQ", False, True),
        ("PodLevelResources", False, True),
        ("MatchLabelKeysInPodAffinity", False, True),
        ("MatchLabelKeysInPodTopologySpread", True, True),
        ("DynamicResourceAllocation", False, True),
        ("InPlacePodVerticalScaling", False, True),
        ("SchedulerAsyncAPICalls", False, False),
        ("NominatedNodeNameForExpectation", False, False),
        ("PodDisruptionConditions", True, False),
    ],
)
def test_each_version_has_its_defaults(gate: str, at_130: bool, at_134: bool) -> None:
    assert feature_gates("1.30").enabled(gate) is at_130
    assert feature_gates("1.34").enabled(gate) is at_134


def test_the_default_version_is_the_newest() -> None:
    assert DEFAULT_EMULATED_VERSION == "1.34"
    assert feature_gates().version == "1.34"
    assert feature_gates(None, None) == feature_gates("1.34")


@pytest.mark.parametrize(
    ("given", "want"), [("1.30", "1.30"), ("v1.34", "1.34"), ("1.34.4", "1.34"), (" 1.30 ", "1.30")]
)
def test_versions_are_read_as_kube_spells_them(given: str, want: str) -> None:
    assert check_version(given) == want


@pytest.mark.parametrize("version", ["1.29", "1.31", "2.0", "latest", "1"])
def test_an_unknown_version_is_a_clear_error(version: str) -> None:
    with pytest.raises(
        FeatureGateError,
        match=rf"emulated version {version} is not supported: kubesched emulates "
        r"1\.30 and 1\.34",
    ):
        check_version(version)


def test_settings_apply_on_top_of_the_version() -> None:
    gates = feature_gates("1.34", "SchedulerAsyncPreemption=false,PodLevelResources=false")
    assert not gates.enabled("SchedulerAsyncPreemption")
    assert not gates.enabled("PodLevelResources")
    assert gates.enabled("SchedulerPopFromBackoffQ")
    assert gates.describe() == "1.34 (PodLevelResources=false,SchedulerAsyncPreemption=false)"
    assert feature_gates("1.30", {"SchedulerQueueingHints": True}).enabled("SchedulerQueueingHints")
    assert feature_gates("1.34").describe() == "1.34"


@pytest.mark.parametrize(
    ("version", "settings", "message"),
    [
        ("1.34", "Nope=true", "unrecognized feature gate: Nope"),
        (
            "1.34",
            "SchedulerQueueingHints=false",
            "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true",
        ),
        (
            "1.30",
            "SchedulerAsyncPreemption=true",
            "cannot set feature gate SchedulerAsyncPreemption to true, feature is PreAlpha at emulated version 1.30",
        ),
        (
            "1.34",
            "PodLevelResources=maybe",
            'invalid value of PodLevelResources=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
        ),
        ("1.34", "PodLevelResources", "missing bool value for PodLevelResources"),
    ],
)
def test_what_upstream_refuses_is_refused_in_its_words(version: str, settings: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as info:
        feature_gates(version, settings)
    assert str(info.value) == message


def test_go_booleans_and_repeated_flags() -> None:
    assert parse_feature_gates(["A=1,B=F", "C=TRUE", ""]) == {"A": True, "B": False, "C": True}
    assert parse_feature_gates(" A = t , ") == {"A": True}


def test_a_mapping_value_must_be_a_bool() -> None:
    with pytest.raises(FeatureGateError, match="must be true or false"):
        feature_gates("1.34", {"PodLevelResources": "yes"})


def test_every_gate_names_only_known_versions() -> None:
    for specs in GATES.values():
        assert set(specs) <= {"1.30", "1.34"}
        assert specs


def test_version_order() -> None:
    assert feature_gates("1.34").at_least("1.30")
    assert not feature_gates("1.30").at_least("1.34")
