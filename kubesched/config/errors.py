"""Field-path errors for the scheduler configuration.

kube-scheduler reports configuration problems as ``field.Error`` values
(``<path>: <kind>: <value>: <detail>``) and aggregates many of them into one
error.  We mirror that shape so that messages stay familiar to operators who
know the Go binary, while keeping a structured ``(path, reason)`` list for
programmatic checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence


class ConfigError(ValueError):
    """A configuration problem, or several of them, each tied to a field path.

    ``path``/``reason`` describe the first problem; ``errors`` holds every
    ``(path, reason)`` pair so callers can inspect all of them.
    """

    path: str
    reason: str
    errors: tuple[tuple[str, str], ...]

    def __init__(self, path: str, reason: str, *, errors: Sequence[tuple[str, str]] | None = None) -> None:
        self.path = path
        self.reason = reason
        self.errors = tuple(errors) if errors else ((path, reason),)
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [f"{p}: {r}" if p else r for p, r in self.errors]
        # Same convention as apimachinery's aggregate: bare message for one
        # error, a bracketed list for several.
        return parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"

    def __str__(self) -> str:
        return self._render()

    @classmethod
    def aggregate(cls, errors: Iterable[ConfigError | tuple[str, str]]) -> ConfigError | None:
        """Flatten errors (and nested aggregates) into one, or None if empty."""
        pairs: list[tuple[str, str]] = []
        for err in errors:
            if isinstance(err, ConfigError):
                pairs.extend(err.errors)
            else:
                pairs.append(err)
        if not pairs:
            return None
        return cls(pairs[0][0], pairs[0][1], errors=pairs)


def render_value(value: object) -> str:
    """Render a value the way field errors quote them (strings quoted)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    try:
        return json.dumps(value, default=str, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


# Constructors mirroring the field.Error kinds kube-scheduler uses.


def invalid(path: str, value: object, detail: str = "") -> ConfigError:
    reason = f"Invalid value: {render_value(value)}"
    return ConfigError(path, f"{reason}: {detail}" if detail else reason)


def required(path: str, detail: str = "") -> ConfigError:
    return ConfigError(path, f"Required value: {detail}" if detail else "Required value")


def duplicate(path: str, value: object) -> ConfigError:
    return ConfigError(path, f"Duplicate value: {render_value(value)}")


def not_supported(path: str, value: object, supported: Iterable[str]) -> ConfigError:
    choices = ", ".join(json.dumps(s) for s in supported)
    return ConfigError(path, f"Unsupported value: {render_value(value)}: supported values: {choices}")


def forbidden(path: str, detail: str) -> ConfigError:
    return ConfigError(path, f"Forbidden: {detail}")


def unknown_field(path: str) -> ConfigError:
    """Strict decoding: a key the schema does not define."""
    return ConfigError(path, "unknown field")


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


class ErrorList:
    """Collects validation errors so all of them are reported at once."""

    def __init__(self) -> None:
        self._errors: list[ConfigError] = []

    def add(self, err: ConfigError | None) -> None:
        if err is not None:
            self._errors.append(err)

    def extend(self, errs: Iterable[ConfigError]) -> None:
        self._errors.extend(errs)

    def __bool__(self) -> bool:
        return bool(self._errors)

    def __iter__(self) -> Iterator[ConfigError]:
        return iter(self._errors)

    def raise_if_any(self) -> None:
        agg = ConfigError.aggregate(self._errors)
        if agg is not None:
            raise agg
