"""Type checks for the fields of Kubernetes objects read as plain dicts.

Manifests arrive as YAML, where ``unschedulable: "false"`` is a string and ``ssd: true`` in a
nodeSelector is a boolean. The API server would refuse both at decoding time; reading them with
``bool()`` or ``str()`` instead would quietly change the result. Each helper returns the value
with its proper type or raises :class:`~kubesched.api.errors.ObjectError` naming the field and
what was expected (``expected a boolean, got string "false"``). ``None`` stands for an omitted
field everywhere, as an omitted (or ``null``) field decodes to its zero value in Go.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from kubesched.api.errors import ObjectError

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def describe(value: object) -> str:
    """A short account of a value's YAML type and content for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'string "{shown}"'
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def join(path: str, key: object) -> str:
    """``path.key``, or ``key`` alone at the top."""
    return f"{path}.{key}" if path else str(key)


def mapping(value: object, path: str) -> Mapping[str, Any]:
    """A mapping (an object); omitted is empty."""
    if type(value) is dict:  # the usual case, before the (slower) abstract isinstance check
        return value
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ObjectError(path, f"expected a mapping, got {describe(value)}")
    return value


def sequence(value: object, path: str) -> list[Any]:
    """A list; omitted is empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ObjectError(path, f"expected a list, got {describe(value)}")
    return value


def string(value: object, path: str, *, default: str = "") -> str:
    """A string; numbers and booleans are refused, since YAML only made them so because they were unquoted."""
    if value is None:
        return default
    if not isinstance(value, str):
        hint = " (quote it in YAML)" if isinstance(value, int | float) else ""
        raise ObjectError(path, f"expected a string, got {describe(value)}{hint}")
    return value


def one_of(value: object, path: str, allowed: Collection[str], *, default: str = "") -> str:
    """A string from a fixed set (an enum field); omitted or empty is ``default``."""
    text = string(value, path)
    if not text:
        return default
    if text not in allowed:
        supported = ", ".join(f'"{a}"' for a in allowed)
        raise ObjectError(path, f'Unsupported value: "{text}": supported values: {supported}')
    return text


def boolean(value: object, path: str, *, default: bool = False) -> bool:
    """``true`` or ``false``; a quoted ``"false"`` is a string, and strings are not booleans."""
    if value is None:
        return default
    if not isinstance(value, bool):
        hint = " (remove the quotes)" if value in ("true", "false") else ""
        raise ObjectError(path, f"expected a boolean (true or false), got {describe(value)}{hint}")
    return value


def integer(
    value: object,
    path: str,
    *,
    default: int = 0,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """A whole number within ``[minimum, maximum]`` (int64 unless narrower bounds are given)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON has one number type: 3.0 decodes as 3 in Go too
        else:
            raise ObjectError(path, f"expected an integer, got {describe(value)}")
    low = INT64_MIN if minimum is None else minimum
    high = INT64_MAX if maximum is None else maximum
    if value < low:
        raise ObjectError(path, f"Invalid value: {value}: must be greater than or equal to {low}")
    if value > high:
        raise ObjectError(path, f"Invalid value: {value}: must be less than or equal to {high}")
    return value


def string_map(value: object, path: str) -> dict[str, str]:
    """A mapping of strings to strings (labels, nodeSelector, a Service selector)."""
    given = mapping(value, path)
    if type(given) is dict and _strings_only(given):
        return dict(given)  # the common case: nothing to convert or refuse
    out: dict[str, str] = {}
    for key, item in given.items():
        out[str(key)] = string(item, join(path, key))
    return out


def _strings_only(given: dict[Any, Any]) -> bool:
    """Whether every key and value is a str (a loop: a generator would cost more than the check)."""
    for key, item in given.items():  # noqa: SIM110
        if type(key) is not str or type(item) is not str:
            return False
    return True


def port(value: object, path: str, *, allow_zero: bool = False, default: int = 0) -> int:
    """A port number: 1-65535 (0 too when it means unset, as for hostPort)."""
    if value is None:
        return default
    number = integer(value, path)
    low = 0 if allow_zero else 1
    if not low <= number <= 65535:
        raise ObjectError(path, f"Invalid value: {number}: must be between {low} and 65535, inclusive")
    return number


def int_or_string(value: object, path: str) -> int | str | None:
    """An IntOrString field (a count or ``"N%"``); None when omitted."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return integer(value, path)


def int_or_percent(value: object, path: str) -> int | str | None:
    """An IntOrString that must be a non-negative count or a percentage (PDBs, rolling updates)."""
    parsed = int_or_string(value, path)
    if isinstance(parsed, str):
        digits = parsed[:-1]
        if not parsed.endswith("%") or not digits.isdigit():
            raise ObjectError(
                path,
                f'Invalid value: "{parsed}": a valid percent string must be a numeric '
                "string followed by an ending '%' (e.g. '1%',  or '93%')",
            )
        return parsed
    if parsed is not None and parsed < 0:
        raise ObjectError(path, f"Invalid value: {parsed}: must be greater than or equal to 0")
    return parsed
