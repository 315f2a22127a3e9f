"""Kubernetes' CEL library functions that DRA selectors use: quantities, semantic versions, regex find.

kube-apiserver's CEL environment adds ``quantity(...)`` and ``semver(...)`` with their member functions
(``compareTo``, ``isGreaterThan``, ``asInteger``, ``major``, ...). The CEL engine kubesched uses
(:mod:`kubesched.api.dra_cel`) runs Python functions on plain CEL values only, so a quantity and a version
travel through an expression as one-key maps, ``{"__quantity__": "3/2"}`` (the exact value) and
``{"__semver__": "1.2.3-rc.1"}`` (the version without build metadata): equal values give equal maps, so
``==`` keeps its meaning, and every function here checks the key it expects. A function given the wrong
kind of value fails as CEL's "no such overload" would.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.fields import INT64_MAX, INT64_MIN
from kubesched.api.quantity import parse_quantity

QUANTITY_KEY = "__quantity__"
SEMVER_KEY = "__semver__"

_NUMERIC = r"(?:0|[1-9]\d*)"
_PRE_ID = r"(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD_ID = r"[0-9a-zA-Z-]+"
SEMVER_RE = re.compile(
    rf"({_NUMERIC})\.({_NUMERIC})\.({_NUMERIC})(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?"
    rf"(?:\+({_BUILD_ID}(?:\.{_BUILD_ID})*))?"
)


class NoSuchOverload(TypeError):
    """A library function applied to a value of another kind."""

    def __init__(self, function: str) -> None:
        super().__init__(f"no such overload: {function}")


# ---------------------------------------------------------------------------------------------------------
# Semantic versions (semver.org 2.0.0, as github.com/blang/semver parses and orders them)


@lru_cache(maxsize=4096)
def parse_semver(text: str) -> tuple[int, int, int, tuple[int | str, ...]]:
    """(major, minor, patch, prerelease identifiers); ValueError saying what is wrong."""
    if not text:
        raise ValueError("Version string empty")
    match = SEMVER_RE.fullmatch(text)
    if match is None:
        raise ValueError(
            f"Invalid semantic version {text!r}: expected MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD] without leading zeroes"
        )
    pre = tuple(int(p) if p.isdigit() else p for p in (match.group(4) or "").split(".") if p)
    return int(match.group(1)), int(match.group(2)), int(match.group(3)), pre


def normalize_semver(text: str) -> str:
    """The lenient form ``semver(s, true)`` accepts: a "v" prefix dropped, leading zeroes trimmed, missing
    minor and patch numbers added."""
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            trimmed = part.lstrip("0")
            parts[i] = trimmed if trimmed[:1].isdigit() else "0" + trimmed
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def semver_value(text: str, normalize: bool = False) -> dict[str, str]:
    """The CEL value of a version: its text without build metadata (which orders nothing)."""
    if normalize:
        text = normalize_semver(text)
    parse_semver(text)
    return {SEMVER_KEY: text.split("+", 1)[0]}


def compare_semver(a: str, b: str) -> int:
    """-1, 0 or 1 by semver precedence: numbers, then a release above its prereleases, then identifiers
    (numeric ones numerically and below alphanumeric ones, a shorter list first when all else is equal)."""
    ma, mb = parse_semver(a), parse_semver(b)
    if ma[:3] != mb[:3]:
        return -1 if ma[:3] < mb[:3] else 1
    pa, pb = ma[3], mb[3]
    if not pa or not pb:
        return (not pa) - (not pb)
    for x, y in zip(pa, pb, strict=False):
        if x == y:
            continue
        if isinstance(x, int) != isinstance(y, int):
            return -1 if isinstance(x, int) else 1
        return -1 if x < y else 1  # type: ignore[operator]
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


def _version(value: Any, function: str) -> str:
    if isinstance(value, dict) and SEMVER_KEY in value:
        return str(value[SEMVER_KEY])
    raise NoSuchOverload(function)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        semver_value(text, normalize)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------------------------
# Quantities


def quantity_value(amount: Fraction) -> dict[str, str]:
    return {QUANTITY_KEY: str(amount)}


def _amount(value: Any, function: str) -> Fraction:
    if isinstance(value, dict) and QUANTITY_KEY in value:
        return Fraction(str(value[QUANTITY_KEY]))
    raise NoSuchOverload(function)


def _parse(text: str) -> dict[str, str]:
    try:
        return quantity_value(parse_quantity(text))
    except ObjectError:
        raise ValueError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ObjectError:
        return False
    return True


def _as_integer(value: Any) -> int:
    amount = _amount(value, "asInteger")
    if amount.denominator != 1 or not INT64_MIN <= amount.numerator <= INT64_MAX:
        raise ValueError("cannot convert value to integer")
    return amount.numerator


def _is_integer(value: Any) -> bool:
    amount = _amount(value, "isInteger")
    return amount.denominator == 1 and INT64_MIN <= amount.numerator <= INT64_MAX


def _sign(value: Any) -> int:
    amount = _amount(value, "sign")
    return (amount > 0) - (amount < 0)


def _plus(value: Any, other: Any, function: str, sign: int) -> dict[str, str]:
    addend = Fraction(other) if isinstance(other, int) else _amount(other, function)
    return quantity_value(_amount(value, function) + sign * addend)


# ---------------------------------------------------------------------------------------------------------
# Functions shared by both kinds (one CEL overload each, since both travel as maps)


def _compare(a: Any, b: Any, function: str) -> int:
    if isinstance(a, dict) and SEMVER_KEY in a:
        return compare_semver(_version(a, function), _version(b, function))
    x, y = _amount(a, function), _amount(b, function)
    return (x > y) - (x < y)


def _find(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in re.finditer(pattern, text)]
    return found if limit < 0 else found[:limit]


#: (function, overload id, is member, parameter kinds, result kind, implementation); kinds are
#: "string", "bool", "int", "double", "value" (a quantity or version) and "strings" (a list of strings).
FUNCTIONS: tuple[tuple[str, str, bool, tuple[str, ...], str, Callable[..., Any]], ...] = (
    ("quantity", "string_to_quantity", False, ("string",), "value", _parse),
    ("isQuantity", "is_quantity_string", False, ("string",), "bool", _is_quantity),
    ("sign", "quantity_sign", False, ("value",), "int", _sign),
    (
        "asApproximateFloat",
        "quantity_get_float",
        True,
        ("value",),
        "double",
        lambda q: float(_amount(q, "asApproximateFloat")),
    ),
    ("asInteger", "quantity_get_int", True, ("value",), "int", _as_integer),
    ("isInteger", "quantity_is_integer", True, ("value",), "bool", _is_integer),
    ("add", "quantity_add", True, ("value", "value"), "value", lambda a, b: _plus(a, b, "add", 1)),
    ("add", "quantity_add_int", True, ("value", "int"), "value", lambda a, b: _plus(a, b, "add", 1)),
    ("sub", "quantity_sub", True, ("value", "value"), "value", lambda a, b: _plus(a, b, "sub", -1)),
    ("sub", "quantity_sub_int", True, ("value", "int"), "value", lambda a, b: _plus(a, b, "sub", -1)),
    ("semver", "string_to_semver", False, ("string",), "value", semver_value),
    ("semver", "string_bool_to_semver", False, ("string", "bool"), "value", semver_value),
    ("isSemver", "is_semver_string", False, ("string",), "bool", _is_semver),
    ("isSemver", "is_semver_string_bool", False, ("string", "bool"), "bool", _is_semver),
    ("major", "semver_major", True, ("value",), "int", lambda v: parse_semver(_version(v, "major"))[0]),
    ("minor", "semver_minor", True, ("value",), "int", lambda v: parse_semver(_version(v, "minor"))[1]),
    ("patch", "semver_patch", True, ("value",), "int", lambda v: parse_semver(_version(v, "patch"))[2]),
    (
        "isGreaterThan",
        "is_greater_than",
        True,
        ("value", "value"),
        "bool",
        lambda a, b: _compare(a, b, "isGreaterThan") > 0,
    ),
    ("isLessThan", "is_less_than", True, ("value", "value"), "bool", lambda a, b: _compare(a, b, "isLessThan") < 0),
    ("compareTo", "compare_to", True, ("value", "value"), "int", lambda a, b: _compare(a, b, "compareTo")),
    ("find", "string_find_string", True, ("string", "string"), "string", _find),
    ("findAll", "string_find_all_string", True, ("string", "string"), "strings", _find_all),
    ("findAll", "string_find_all_string_int", True, ("string", "string", "int"), "strings", _find_all),
)
