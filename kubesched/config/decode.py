"""Strict, typed reading of parsed YAML/JSON mappings.

kube-scheduler decodes its configuration strictly: an unknown or misspelt key
is an error rather than silently ignored, because a typo in a scheduler
config otherwise changes behaviour without any signal.  ``Fields`` wraps one
mapping, hands out typed values and remembers which keys were consumed so
``done()`` can reject the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from kubesched.config.errors import ConfigError, child, index, invalid, unknown_field

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def type_error(path: str, value: object, expected: str) -> ConfigError:
    return invalid(path, value, f"expected {expected}, got {type(value).__name__}")


def as_mapping(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise type_error(path, value, "object")
    for key in value:
        if not isinstance(key, str):
            raise invalid(child(path, str(key)), key, "object keys must be strings")
    return value


def as_list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise type_error(path, value, "list")
    return list(value)


def as_int(value: object, path: str, *, bits: int = 32) -> int:
    # bool is an int subclass in Python but never a valid integer in JSON.
    if isinstance(value, bool) or not isinstance(value, int):
        raise type_error(path, value, "integer")
    lo, hi = (INT32_MIN, INT32_MAX) if bits == 32 else (INT64_MIN, INT64_MAX)
    if not lo <= value <= hi:
        raise invalid(path, value, f"does not fit in int{bits}")
    return value


def as_float(value: object, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise type_error(path, value, "number")
    return float(value)


def as_str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise type_error(path, value, "string")
    return value


def as_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise type_error(path, value, "boolean")
    return value


_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def as_duration(value: object, path: str) -> timedelta:
    """Parse a Go ``time.Duration`` string such as ``15s`` or ``1m30s``.

    metav1.Duration is serialised in Go's duration syntax, so that is what
    config files contain.
    """
    text = as_str(value, path)
    body = text
    sign = 1.0
    if body[:1] in "+-" and body:
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return timedelta(0)
    total = 0.0
    pos = 0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if m is None:
            raise invalid(path, text, 'not a valid duration (e.g. "15s", "1m30s")')
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if not body:
        raise invalid(path, text, 'not a valid duration (e.g. "15s", "1m30s")')
    return timedelta(seconds=sign * total)


class Fields:
    """Typed, strict accessor over one decoded object at ``path``."""

    def __init__(self, value: object, path: str) -> None:
        self.data = as_mapping(value, path)
        self.path = path
        self._seen: set[str] = set()

    def at(self, key: str) -> str:
        return child(self.path, key)

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def raw(self, key: str) -> Any:
        """Return the raw value (None when absent or null) and mark it used."""
        self._seen.add(key)
        return self.data.get(key)

    def opt_int(self, key: str, *, bits: int = 32) -> int | None:
        v = self.raw(key)
        return None if v is None else as_int(v, self.at(key), bits=bits)

    def get_int(self, key: str, default: int, *, bits: int = 32) -> int:
        v = self.opt_int(key, bits=bits)
        return default if v is None else v

    def get_float(self, key: str, default: float) -> float:
        v = self.raw(key)
        return default if v is None else as_float(v, self.at(key))

    def opt_str(self, key: str) -> str | None:
        v = self.raw(key)
        return None if v is None else as_str(v, self.at(key))

    def get_str(self, key: str, default: str = "") -> str:
        v = self.opt_str(key)
        return default if v is None else v

    def get_bool(self, key: str, default: bool) -> bool:
        v = self.raw(key)
        return default if v is None else as_bool(v, self.at(key))

    def get_list(self, key: str) -> list[Any]:
        v = self.raw(key)
        return [] if v is None else as_list(v, self.at(key))

    def get_mapping(self, key: str) -> Mapping[str, Any] | None:
        v = self.raw(key)
        return None if v is None else as_mapping(v, self.at(key))

    def get_str_list(self, key: str) -> tuple[str, ...]:
        p = self.at(key)
        return tuple(as_str(v, index(p, i)) for i, v in enumerate(self.get_list(key)))

    def done(self) -> None:
        """Reject keys that no accessor consumed (strict decoding)."""
        for key in self.data:
            if key not in self._seen:
                raise unknown_field(self.at(key))
