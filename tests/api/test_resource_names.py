"""Resource names and amounts checked as kube-apiserver checks them, plus the int64 column limit."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesched.api.errors import ObjectError
from kubesched.api.resource_names import (
    MAX_SCHEDULER_UNITS,
    is_extended,
    parse_amount,
    validate_container_resource_name,
    validate_resource_name,
)


@pytest.mark.parametrize(
    "name",
    [
        "cpu",
        "memory",
        "ephemeral-storage",
        "hugepages-2Mi",
        "nvidia.com/gpu",
        "example.com/foo_bar.baz",
        "kubernetes.io/something",
    ],
)
def test_container_resource_names_accepted(name: str) -> None:
    validate_container_resource_name(name, "r")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        pytest.param("CPU", 'must be a standard resource type or fully qualified (did you mean "cpu"?)', id="CPU"),
        pytest.param(
            "memroy", 'must be a standard resource type or fully qualified (did you mean "memory"?)', id="memroy"
        ),
        pytest.param("gpu", "must be a standard resource type or fully qualified", id="gpu"),
        pytest.param("pods", "must be a standard resource for containers", id="pods-in-a-container"),
        pytest.param("requests.cpu", "must be a standard resource for containers", id="quota-name"),
        pytest.param("nvidia.com/", "name part must be non-empty", id="empty-name-part"),
        pytest.param("Example.com/gpu", "prefix part must be a lowercase RFC 1123 subdomain", id="upper-case-prefix"),
        pytest.param("a/b/c", "prefix part must be a lowercase RFC 1123 subdomain", id="two-slashes"),
        pytest.param("example.com/-gpu", "name part must consist of alphanumeric characters", id="bad-name-part"),
    ],
)
def test_container_resource_names_refused(name: str, reason: str) -> None:
    with pytest.raises(ObjectError) as info:
        validate_container_resource_name(name, "requests." + name)
    assert info.value.path == "requests." + name
    assert info.value.reason == f'Invalid value: "{name}": {reason}' or info.value.reason.startswith(
        f'Invalid value: "{name}": {reason}'
    )


def test_node_resources_may_name_any_standard_resource() -> None:
    validate_resource_name("pods", "status.allocatable.pods")
    with pytest.raises(ObjectError, match="fully qualified"):
        validate_resource_name("gpu", "status.allocatable.gpu")


def test_extended_resources_are_vendor_qualified() -> None:
    assert is_extended("nvidia.com/gpu")
    assert not is_extended("kubernetes.io/foo")
    assert not is_extended("cpu")
    assert not is_extended("requests.example.com/gpu")


@pytest.mark.parametrize(
    ("name", "value", "want"),
    [
        ("cpu", "500m", Fraction(1, 2)),
        ("cpu", 0.5, Fraction(1, 2)),
        ("memory", "1Gi", Fraction(2**30)),
        ("nvidia.com/gpu", "2", Fraction(2)),
        ("hugepages-2Mi", "4Mi", Fraction(4 * 2**20)),
        ("pods", "0", Fraction(0)),
    ],
)
def test_amounts_accepted(name: str, value: object, want: Fraction) -> None:
    assert parse_amount(name, value, "f") == want


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        pytest.param("cpu", "-1", 'Invalid value: "-1": must be greater than or equal to 0', id="negative-cpu"),
        pytest.param("memory", -5, 'Invalid value: "-5": must be greater than or equal to 0', id="negative-number"),
        pytest.param("nvidia.com/gpu", "0.5", 'Invalid value: "0.5": must be an integer', id="fractional-device"),
        pytest.param("nvidia.com/gpu", "1500m", 'Invalid value: "1500m": must be an integer', id="milli-device"),
        pytest.param("pods", "2.5", 'Invalid value: "2.5": must be an integer', id="fractional-pod-count"),
        pytest.param(
            "hugepages-2Mi",
            "3Mi",
            'Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
            id="partial-huge-page",
        ),
        pytest.param(
            "cpu", "1E", 'Invalid value: "1E": must be less than or equal to 9007199254740992m', id="cpu-too-big"
        ),
        pytest.param(
            "memory",
            "100E",
            'Invalid value: "100E": must be less than or equal to 9007199254740992',
            id="memory-too-big",
        ),
        pytest.param("cpu", "abc", 'invalid quantity "abc"', id="not-a-quantity"),
    ],
)
def test_amounts_refused(name: str, value: object, reason: str) -> None:
    with pytest.raises(ObjectError) as info:
        parse_amount(name, value, "spec.x")
    assert info.value.path == "spec.x"
    assert info.value.reason.startswith(reason)


def test_the_largest_accepted_amount_fits_the_snapshot_arithmetic() -> None:
    assert parse_amount("memory", str(MAX_SCHEDULER_UNITS), "f") == MAX_SCHEDULER_UNITS
    # Scores multiply one amount by 100; a node's requested column adds up a thousand of them.
    assert MAX_SCHEDULER_UNITS * 100 < 2**63
    assert MAX_SCHEDULER_UNITS * 1000 < 2**63
