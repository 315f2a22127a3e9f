"""Typed reads of object fields: the value with its type, or an error saying what was expected."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api import fields
from kubesched.api.errors import ObjectError


@pytest.mark.parametrize(
    ("read", "value", "want"),
    [
        pytest.param(fields.boolean, True, True, id="boolean"),
        pytest.param(fields.boolean, None, False, id="boolean-omitted"),
        pytest.param(fields.integer, 3, 3, id="integer"),
        pytest.param(fields.integer, 3.0, 3, id="integer-from-json-float"),
        pytest.param(fields.string, None, "", id="string-omitted"),
        pytest.param(fields.string_map, {"a": "b", "c": None}, {"a": "b", "c": ""}, id="string-map-null-is-empty"),
        pytest.param(fields.mapping, None, {}, id="mapping-omitted"),
        pytest.param(fields.sequence, None, [], id="list-omitted"),
        pytest.param(fields.int_or_percent, "30%", "30%", id="percent"),
        pytest.param(fields.int_or_percent, 2, 2, id="count"),
    ],
)
def test_accepted_values(read: Any, value: object, want: object) -> None:
    assert read(value, "f") == want


@pytest.mark.parametrize(
    ("read", "value", "message"),
    [
        pytest.param(
            fields.boolean,
            "false",
            'f: expected a boolean (true or false), got string "false" (remove the quotes)',
            id="quoted-boolean",
        ),
        pytest.param(fields.boolean, 1, "f: expected a boolean (true or false), got integer 1", id="number-as-boolean"),
        pytest.param(fields.integer, "1", 'f: expected an integer, got string "1"', id="quoted-integer"),
        pytest.param(fields.integer, True, "f: expected an integer, got boolean true", id="boolean-as-integer"),
        pytest.param(
            fields.integer,
            2**63,
            "f: Invalid value: 9223372036854775808: must be less than or equal to 9223372036854775807",
            id="beyond-int64",
        ),
        pytest.param(fields.string, True, "f: expected a string, got boolean true", id="boolean-as-string"),
        pytest.param(fields.string, 7, "f: expected a string, got integer 7 (quote it in YAML)", id="number-as-string"),
        pytest.param(
            fields.string_map, {"ssd": True}, "f.ssd: expected a string, got boolean true", id="boolean-in-string-map"
        ),
        pytest.param(fields.mapping, "x", 'f: expected a mapping, got string "x"', id="string-as-mapping"),
        pytest.param(fields.mapping, [1], "f: expected a mapping, got a list", id="list-as-mapping"),
        pytest.param(fields.sequence, {}, "f: expected a list, got a mapping", id="mapping-as-list"),
        pytest.param(
            fields.port, 70000, "f: Invalid value: 70000: must be between 1 and 65535, inclusive", id="port-too-high"
        ),
        pytest.param(fields.port, 0, "f: Invalid value: 0: must be between 1 and 65535, inclusive", id="port-zero"),
        pytest.param(
            fields.int_or_percent, "half", 'f: Invalid value: "half": a valid percent string', id="bad-percent"
        ),
        pytest.param(
            fields.int_or_percent, -1, "f: Invalid value: -1: must be greater than or equal to 0", id="negative-count"
        ),
    ],
)
def test_refused_values_say_what_was_expected(read: Any, value: object, message: str) -> None:
    with pytest.raises(ObjectError) as info:
        read(value, "f")
    assert str(info.value).startswith(message)


def test_port_may_allow_zero_for_unset() -> None:
    assert fields.port(0, "hostPort", allow_zero=True) == 0
    with pytest.raises(ObjectError, match="between 0 and 65535"):
        fields.port(-1, "hostPort", allow_zero=True)


def test_one_of_lists_the_supported_values() -> None:
    assert fields.one_of(None, "p", ("A", "B"), default="A") == "A"
    with pytest.raises(ObjectError, match='p: Unsupported value: "C": supported values: "A", "B"'):
        fields.one_of("C", "p", ("A", "B"))


def test_string_map_copies_strings_and_converts_or_refuses_the_rest() -> None:
    given = {"a": "b", "c": "d"}
    copied = fields.string_map(given, "metadata.labels")
    assert copied == given and copied is not given
    assert fields.string_map({1: "a", "b": None}, "x") == {"1": "a", "b": ""}
    with pytest.raises(ObjectError, match=r"x\.b"):
        fields.string_map({"a": "b", "b": 3}, "x")
