"""A mark for an observer's hook that does nothing with what it is told, so that a fan-out can leave it
out instead of calling it on every scheduling cycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

_Hook = TypeVar("_Hook", bound=Callable[..., Any])
#: The attribute :func:`ignores_report` sets on a hook that does nothing.
_IGNORES = "_ignores_report"


def ignores_report(hook: _Hook) -> _Hook:
    """Marks an observer's hook that does nothing with its report (returns None)."""
    setattr(hook, _IGNORES, True)
    return hook


def reports_ignored(hook: Callable[..., Any]) -> bool:
    """Whether ``hook`` (a function or a bound method) was marked by :func:`ignores_report`."""
    return bool(getattr(hook, _IGNORES, False))
