"""Quantity parsing must agree exactly with resource.ParseQuantity and the Quantity accessors."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.errors import ObjectError
from kubesched.api.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    QuantityError,
    format_quantity,
    int_value,
    milli_value,
    parse_quantity,
    quantity_format,
    quantity_string,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", Fraction(0)),
        ("1", Fraction(1)),
        ("+1", Fraction(1)),
        ("-1", Fraction(-1)),
        ("007", Fraction(7)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("5.", Fraction(5)),
        ("1.G", Fraction(10**9)),
        # decimal SI suffixes
        ("1n", Fraction(1, 10**9)),
        ("1u", Fraction(1, 10**6)),
        ("1m", Fraction(1, 1000)),
        ("500m", Fraction(1, 2)),
        ("1k", Fraction(10**3)),
        ("1M", Fraction(10**6)),
        ("1G", Fraction(10**9)),
        ("1T", Fraction(10**12)),
        ("1P", Fraction(10**15)),
        ("1E", Fraction(10**18)),
        # binary suffixes
        ("1Ki", Fraction(2**10)),
        ("1Mi", Fraction(2**20)),
        ("1Gi", Fraction(2**30)),
        ("1Ti", Fraction(2**40)),
        ("1Pi", Fraction(2**50)),
        ("1Ei", Fraction(2**60)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("0.5Ki", Fraction(512)),
        ("-2Mi", Fraction(-(2**21))),
        # decimal exponents
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("1E-3", Fraction(1, 1000)),
        ("12e+6", Fraction(12 * 10**6)),
        ("1.5e1", Fraction(15)),
        ("-3e-2", Fraction(-3, 100)),
        ("1e0", Fraction(1)),
    ],
)
def test_parse_valid(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # anything finer than a nano unit rounds away from zero to the next nano
        ("0.1n", Fraction(1, 10**9)),
        ("-0.1n", Fraction(-1, 10**9)),
        ("1.0000000001", Fraction(1_000_000_001, 10**9)),
        ("1e-20", Fraction(1, 10**9)),
        ("1e-999999999", Fraction(1, 10**9)),
        ("0e-20", Fraction(0)),
        # binary-suffixed values are capped at the int64 maximum
        ("100Ei", Fraction(2**63 - 1)),
        ("-100Ei", Fraction(-(2**63 - 1))),
        ("7Ei", Fraction(7 * 2**60)),
        # decimal values are not capped
        ("100E", Fraction(10**20)),
    ],
)
def test_parse_rounding_and_caps(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        " 1",
        "1 ",
        "1 Gi",
        "1KB",
        "1K",
        "1ki",
        "1KiB",
        "1Zi",
        "1i",
        ".5i",
        "0.1mi",
        "1µ",
        "1.2.3",
        "1..5",
        "1.1.M",
        "1+1.0M",
        "1-",
        "++1",
        "1,5",
        "1_000",
        "0x10",
        "1/2",
        "Mi",
        "+",
        "-",
        ".",
        "Inf",
        "NaN",
        "aoeu",
        "\uff11",
        "\u0663",
        "1e",
        "1e+",
        "1e-",
        "-3.01e-",
        "1e1.5",
        "1e.5",
        "1e3k",
        "1E3Ki",
        "1e+-3",
        "1Ee3",
        "1m3",
        "1e99999",
    ],
)
def test_parse_invalid(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert isinstance(info.value, ObjectError)
    assert f'invalid quantity "{text}"' in str(info.value)
    assert info.value.path == ""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, Fraction(2)),
        (-3, Fraction(-3)),
        (0.5, Fraction(1, 2)),
        (0.1, Fraction(1, 10)),
        (1e-05, Fraction(1, 10**5)),
    ],
)
def test_parse_yaml_numbers(value: int | float, expected: Fraction) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize("value", [True, False, None, [1], float("inf"), float("nan"), b"1"])
def test_parse_rejects_non_quantities(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "milli", "whole"),
    [
        ("1", 1000, 1),
        ("100m", 100, 1),
        ("1.5", 1500, 2),
        ("1.0001m", 2, 1),
        ("1.5m", 2, 1),
        ("0.1n", 1, 1),
        ("1Ki", 1_024_000, 1024),
        ("0", 0, 0),
        ("2.000", 2000, 2),
        # negative values round away from zero, like Go's int64 fast path
        ("-1.5m", -2, -1),
        ("-1.5", -1500, -2),
        ("-100m", -100, -1),
    ],
)
def test_milli_and_int_values(text: str, milli: int, whole: int) -> None:
    assert milli_value(text) == milli
    assert int_value(text) == whole
    assert milli_value(parse_quantity(text)) == milli
    assert int_value(parse_quantity(text)) == whole


def test_accessors_propagate_parse_errors() -> None:
    with pytest.raises(QuantityError):
        milli_value("lots")
    with pytest.raises(QuantityError):
        int_value("1 Gi")


def test_error_can_be_repathed() -> None:
    try:
        parse_quantity("12Qi")
    except QuantityError as error:
        moved = error.under("spec.containers[0].resources.requests.cpu")
    assert moved.path == "spec.containers[0].resources.requests.cpu"
    assert 'invalid quantity "12Qi"' in str(moved)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Fraction(0), "0"),
        (Fraction(1, 2), "500m"),
        (Fraction(1024), "1024"),
        (Fraction(3000), "3k"),
        (Fraction(-2, 10**9), "-2n"),
        (Fraction(10**18), "1E"),
    ],
)
def test_format_quantity(value: Fraction, text: str) -> None:
    assert format_quantity(value) == text
    assert parse_quantity(text) == value


suffixes = st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "e3", "e-2"])


@given(
    sign=st.sampled_from(["", "+", "-"]),
    whole=st.integers(min_value=0, max_value=10**12),
    fraction=st.text(alphabet="0123456789", max_size=12),
    suffix=suffixes,
)
def test_property_parse_is_exact_and_accessors_are_ceilings(sign: str, whole: int, fraction: str, suffix: str) -> None:
    text = f"{sign}{whole}.{fraction}{suffix}" if fraction else f"{sign}{whole}{suffix}"
    value = parse_quantity(text)
    # never coarser than a nano unit, and within one nano unit of the exact decimal value
    assert (value * 10**9).denominator == 1
    multipliers: dict[str, int | Fraction] = {
        "": 1,
        "n": Fraction(1, 10**9),
        "u": Fraction(1, 10**6),
        "m": Fraction(1, 1000),
        "k": 10**3,
        "M": 10**6,
        "G": 10**9,
        "T": 10**12,
        "P": 10**15,
        "E": 10**18,
        "Ki": 2**10,
        "Mi": 2**20,
        "Gi": 2**30,
        "Ti": 2**40,
        "Pi": 2**50,
        "e3": 1000,
        "e-2": Fraction(1, 100),
    }
    multiplier = multipliers[suffix]
    exact = Fraction(f"{whole}.{fraction or '0'}") * multiplier
    if suffix.endswith("i"):
        exact = min(exact, Fraction(2**63 - 1))  # binary-suffixed values are capped
    exact *= -1 if sign == "-" else 1
    assert abs(value - exact) < Fraction(1, 10**9)
    assert abs(value) >= abs(exact)
    # the accessors round the magnitude up
    milli = milli_value(value)
    assert abs(milli) - 1 < abs(value * 1000) <= abs(milli)
    assert int_value(text) == int_value(value)


@pytest.mark.parametrize(
    ("text", "fmt", "written"),
    [
        ("128Mi", BINARY_SI, "128Mi"),
        ("1.5Gi", BINARY_SI, "1536Mi"),
        ("2048Ki", BINARY_SI, "2Mi"),
        ("1000Ki", BINARY_SI, "1000Ki"),
        ("0.5Ki", BINARY_SI, "512"),  # below 1024: written in decimal
        ("0.5", DECIMAL_SI, "500m"),
        ("1500m", DECIMAL_SI, "1500m"),
        ("2000m", DECIMAL_SI, "2"),
        ("1000000", DECIMAL_SI, "1M"),
        ("1e3", DECIMAL_EXPONENT, "1e3"),
        ("1E3", DECIMAL_EXPONENT, "1e3"),
        ("1.5e3", DECIMAL_EXPONENT, "1500"),
        ("0", DECIMAL_SI, "0"),
        ("100m", DECIMAL_SI, "100m"),
    ],
)
def test_quantity_string_as_the_api_server_writes_it(text: str, fmt: str, written: str) -> None:
    assert quantity_format(text) == fmt
    assert quantity_string(parse_quantity(text), fmt) == written


def test_quantity_format_of_yaml_numbers() -> None:
    assert quantity_format(2) == DECIMAL_SI
    assert quantity_string(Fraction(3 * 1024 * 1024), BINARY_SI) == "3Mi"
