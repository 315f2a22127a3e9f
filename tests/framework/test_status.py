"""Status and codes: messages, classification, and None meaning success."""

from __future__ import annotations

import pytest

from kubesched.framework.status import (
    Code,
    Status,
    code_of,
    error,
    is_success,
    unresolvable,
    unschedulable,
)


@pytest.mark.parametrize(
    ("code", "label", "value", "rejected"),
    [
        (Code.SUCCESS, "Success", 0, False),
        (Code.ERROR, "Error", 1, False),
        (Code.UNSCHEDULABLE, "Unschedulable", 2, True),
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "UnschedulableAndUnresolvable", 3, True),
        (Code.WAIT, "Wait", 4, False),
        (Code.SKIP, "Skip", 5, False),
        (Code.PENDING, "Pending", 6, True),
    ],
)
def test_codes(code: Code, label: str, value: int, rejected: bool) -> None:
    status = Status(code)
    assert code.label == label and int(code) == value
    assert status.is_rejected() is rejected
    assert status.is_success() is (code is Code.SUCCESS)
    assert status.is_wait() is (code is Code.WAIT)
    assert status.is_skip() is (code is Code.SKIP)
    assert is_success(status) is (code is Code.SUCCESS)
    assert code_of(status) is code


def test_none_is_success() -> None:
    assert is_success(None) and code_of(None) is Code.SUCCESS


@pytest.mark.parametrize(
    ("status", "message", "text"),
    [
        (
            Status.of(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory"),
            "Insufficient cpu, Insufficient memory",
            "Unschedulable: Insufficient cpu, Insufficient memory",
        ),
        (Status(Code.WAIT), "", "Wait"),
        (unschedulable("a"), "a", "Unschedulable: a"),
        (unresolvable("b", "c"), "b, c", "UnschedulableAndUnresolvable: b, c"),
        (error("boom"), "boom", "Error: boom"),
    ],
)
def test_message_and_str(status: Status, message: str, text: str) -> None:
    assert status.message == message and str(status) == text


def test_helpers_build_the_right_codes() -> None:
    assert unschedulable("x").code is Code.UNSCHEDULABLE
    assert unresolvable("x").code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert error("x").code is Code.ERROR


def test_with_plugin_sets_and_returns_the_same_status() -> None:
    status = unschedulable("x")
    assert status.with_plugin("NodePorts") is status and status.plugin == "NodePorts"


def test_errors_round_trip() -> None:
    cause = KeyError("missing")
    status = Status.from_error(cause)
    assert status.code is Code.ERROR and status.as_error() is cause and status.message == str(cause)
    plain = error("boom").as_error()
    assert isinstance(plain, RuntimeError) and str(plain) == "boom"


def test_equality_ignores_the_error_object() -> None:
    assert Status(Code.ERROR, ("x",), error=ValueError("a")) == Status(Code.ERROR, ("x",), error=KeyError("b"))
    assert Status(Code.UNSCHEDULABLE, ("x",), "A") != Status(Code.UNSCHEDULABLE, ("x",), "B")
