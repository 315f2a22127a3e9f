"""Kubernetes ``resource.Quantity`` values (``500m``, ``1.5Gi``, ``2e3``) as exact fractions.

Resource accounting must agree bit-for-bit with kube-scheduler, so everything here is exact
(:class:`fractions.Fraction`); floats would make ``0.1 + 0.2`` style errors show up as pods that
do or do not fit depending on summation order.

Behaviour mirrors ``apimachinery/pkg/api/resource``:

* grammar: ``[+-]digits[.digits]`` followed by one suffix: a decimal SI suffix
  (``n u m k M G T P E`` or none), a binary one (``Ki Mi Gi Ti Pi Ei``) or a decimal exponent
  (``e3``, ``E-3``, ``e+6``). ``"5."`` and ``".5"`` are fine, but unlike Go a quantity needs at
  least one digit (Go reads ``"Mi"``, ``"+"`` or ``"."`` as zero);
* exponents above 4096 are refused (Go keeps them symbolic, or even wraps them past int32);
* parsed values are rounded away from zero to a whole number of nano units (``0.1n`` is ``1n``),
  so that asking for a tiny amount never turns into asking for nothing;
* values written with a binary suffix are capped at ``2**63 - 1`` in magnitude.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from kubesched.api.errors import ObjectError

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "QuantityError",
    "format_quantity",
    "int_value",
    "milli_value",
    "parse_quantity",
    "quantity_format",
    "quantity_string",
]

#: How a quantity was written, which decides how the API server writes it back (``Quantity.Format``).
DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"


class QuantityError(ObjectError):
    """A string that is not a valid Kubernetes quantity."""

    def __init__(self, value: object, why: str, path: str = "") -> None:
        self.value = value
        self.why = why
        super().__init__(path, f"invalid quantity {_show(value)}: {why}")


def _show(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


# Same shape as the Go scanner: sign, integer digits, optional fraction, then a suffix made of
# suffix letters, an optional sign and digits. Possessive quantifiers make the split greedy and
# deterministic, exactly like the hand-written scanner (no backtracking into another split).
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*+)(?:\.([0-9]*+))?([eEinumkKMGTP]*+[+-]?[0-9]*+)")
_EXPONENT_RE = re.compile(r"[+-]?[0-9]+")

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

_NANO = 10**9
_BINARY_MAX = 2**63 - 1
# Go keeps huge exponents symbolic; we expand them, so refuse the absurd ones instead of
# building gigantic integers (no real resource amount is anywhere near 10**4096).
_MAX_EXPONENT = 4096


def _suffix_scale(text: str, suffix: str) -> tuple[Fraction, bool]:
    """The multiplier a suffix stands for, and whether it is a binary (power of two) suffix."""
    if suffix in _DECIMAL_SUFFIXES:
        return Fraction(10) ** _DECIMAL_SUFFIXES[suffix], False
    if suffix in _BINARY_SUFFIXES:
        return Fraction(2 ** _BINARY_SUFFIXES[suffix]), True
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT_RE.fullmatch(suffix[1:]):
        exponent = int(suffix[1:])
        if exponent > _MAX_EXPONENT:
            raise QuantityError(text, f"exponent {exponent} is out of range")
        # A very negative exponent only matters up to "smaller than a nano unit": clamp it to a
        # point where even a mantissa as long as the whole text is far below 1e-9 (both then
        # round to the same nano value), so "1e-999999999" stays cheap.
        return Fraction(10) ** max(exponent, -(len(text) + 20)), False
    raise QuantityError(text, f"unknown suffix {suffix!r}")


def _round_to_nano(value: Fraction) -> Fraction:
    """Round away from zero to a multiple of 1e-9 (Kubernetes' smallest representable unit)."""
    scaled = value * _NANO
    if scaled.denominator == 1:
        return value
    magnitude = -(-abs(scaled.numerator) // scaled.denominator)
    return Fraction(magnitude if value > 0 else -magnitude, _NANO)


@lru_cache(maxsize=8192)
def _parse_text(text: str) -> Fraction:
    """Parse one quantity string; cached because pod specs repeat the same few strings."""
    if not text:
        raise QuantityError(text, "empty string")
    match = _QUANTITY_RE.fullmatch(text)
    if match is None:
        raise QuantityError(
            text, "expected a number with an optional suffix (n u m k M G T P E Ki Mi Gi Ti Pi Ei e<N>)"
        )
    sign, whole, fraction, suffix = match.groups()
    fraction = fraction or ""
    if not whole and not fraction:
        # Go's scanner would read "Mi", "+" or "." as zero; a quantity without a single digit
        # is always a typo, so we refuse it instead.
        raise QuantityError(text, "no digits before the suffix")
    multiplier, binary = _suffix_scale(text, suffix)
    digits = int((whole or "0") + fraction)
    value = Fraction(digits, 10 ** len(fraction)) * multiplier
    value = _round_to_nano(value)
    if binary and abs(value) > _BINARY_MAX:
        value = Fraction(_BINARY_MAX)
    return -value if sign == "-" else value


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact numeric value of a quantity written as a string or a bare YAML number.

    YAML numbers (``cpu: 2``, ``cpu: 0.5``) go through their decimal text so that ``0.1`` means
    one tenth, not the nearest binary float. Booleans are refused even though ``bool`` is an
    ``int`` subtype: ``cpu: yes`` is a manifest bug, not one core.
    """
    if isinstance(value, bool):
        raise QuantityError(value, "a boolean is not a quantity")
    if isinstance(value, str):
        return _parse_text(value)
    if isinstance(value, int):
        return _parse_text(str(value))
    if isinstance(value, float):
        return _parse_text(repr(value))
    raise QuantityError(value, f"expected a string or a number, got {type(value).__name__}")


def _ceil_away_from_zero(value: Fraction) -> int:
    """Integer rounding as the Quantity accessors do it: any remainder pushes away from zero."""
    magnitude = -(-abs(value.numerator) // value.denominator)
    return magnitude if value >= 0 else -magnitude


def milli_value(value: str | int | float | Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths of the value, rounded away from zero.

    For the positive amounts that appear in resource requests this is the ceiling
    (``"1.0001m"`` is 2). Negative values round towards minus infinity (``"-1.5m"`` is -2),
    matching Go's common int64 representation (its rarely used big-decimal path differs).
    """
    return _ceil_away_from_zero(_as_fraction(value) * 1000)


def int_value(value: str | int | float | Fraction) -> int:
    """``Quantity.Value()``: the whole value, rounded away from zero like :func:`milli_value`."""
    return _ceil_away_from_zero(_as_fraction(value))


def _as_fraction(value: str | int | float | Fraction) -> Fraction:
    if isinstance(value, Fraction):
        return value
    return parse_quantity(value)


def format_quantity(q: Fraction) -> str:
    """A short, exact rendering for messages: the largest decimal SI suffix that keeps an integer.

    Values finer than a nano unit (which parsing never produces) are shown rounded away from
    zero to nanos.
    """
    value = _round_to_nano(q)
    if value == 0:
        return "0"
    for suffix, exponent in sorted(_DECIMAL_SUFFIXES.items(), key=lambda item: -item[1]):
        scaled = value / Fraction(10) ** exponent
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    raise AssertionError("unreachable: every nano-rounded value is a whole number of nanos")


def quantity_format(value: str | int | float) -> str:
    """The format of a quantity as written: binary (``Mi``), decimal exponent (``e3``) or decimal SI."""
    if not isinstance(value, str):
        return DECIMAL_SI
    match = _QUANTITY_RE.fullmatch(value)
    suffix = match.group(4) if match is not None else ""
    if suffix in _BINARY_SUFFIXES:
        return BINARY_SI
    if suffix and suffix[0] in "eE" and suffix not in _DECIMAL_SUFFIXES:
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def _strip_factors(value: int, base: int) -> tuple[int, int]:
    """``value`` without its factors of ``base``, and how many there were (a zero keeps none)."""
    times = 0
    while value >= base and value % base == 0:
        value //= base
        times += 1
    return value, times


def quantity_string(q: Fraction, fmt: str = DECIMAL_SI) -> str:
    """A quantity as the API server writes it in format ``fmt`` (``Quantity.String()``).

    Binary values from -1024 to 1024, and those that are not whole, are written in decimal SI; the
    others with the largest power-of-1024 suffix that keeps a whole number. Decimal values take the
    largest power-of-1000 suffix (or ``e<n>`` exponent) that keeps a whole number.
    """
    value = _round_to_nano(q)
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if fmt == BINARY_SI and magnitude >= 1024 and magnitude.denominator == 1:
        amount, times = _strip_factors(magnitude.numerator, 1024)
        suffixes = {exponent // 10: suffix for suffix, exponent in _BINARY_SUFFIXES.items()}
        if times == 0 or times in suffixes:
            return f"{sign}{amount}{suffixes.get(times, '')}"
    nanos = int(magnitude * _NANO)
    amount, times = _strip_factors(nanos, 10)
    exponent = times - 9
    shift = exponent % 3  # down to a multiple of three (Python's % is never negative here)
    amount, exponent = amount * 10**shift, exponent - shift
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{amount}" + (f"e{exponent}" if exponent else "")
    suffix = next((s for s, e in _DECIMAL_SUFFIXES.items() if e == exponent), None)
    return f"{sign}{amount}{suffix}" if suffix is not None else f"{sign}{amount}e{exponent}"
