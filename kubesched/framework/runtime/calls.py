"""How the runtime calls plugin code: guarded, checked and timed.

A plugin cannot take the scheduler down: an exception, or an answer of the wrong type, becomes an
Error status naming the plugin (the traceback goes to the log at warning level). On the cycles that
sample plugin metrics the CycleState carries a plugin timer, and each call is timed with the code of
its outcome; :func:`timed_extension_point` times a whole extension point when the framework has metrics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from kubesched.framework.status import Status, status_label

log = logging.getLogger("kubesched.framework.runtime")

P = ParamSpec("P")
R = TypeVar("R")

#: What a per-node Score may return as its score (a bool is an int to Python, but no score).
SCORE_TYPES = (int, np.integer)


class PluginReturnError(TypeError):
    """A plugin returned something its extension point does not allow."""


def call_plugin(
    fn: Callable[..., Any], *args: Any, expect: type | tuple[type, ...] = object
) -> tuple[Any, Status | None]:
    """Run a plugin method returning ``(value, status)``; an exception, or a return value that is
    no such pair (``value`` None or an ``expect``), becomes an Error status.

    Callers pass the CycleState first: on sampled cycles it carries the plugin timer.
    """
    timer = args[0].plugin_timer if args else None
    started = time.perf_counter() if timer is not None else 0.0
    result: tuple[Any, Status | None]
    try:
        answer = fn(*args)
        if type(answer) is not tuple or len(answer) != 2:
            raise PluginReturnError(f"returned {shown(answer)}, expected a (value, Status | None) pair")
        value, status = answer
        if status is not None and type(status) is not Status:
            raise PluginReturnError(f"returned status {shown(status)}, expected a Status or None")
        if (value is not None or expect is SCORE_TYPES) and not (
            isinstance(value, expect) and not isinstance(value, bool)
        ):
            raise PluginReturnError(f"returned {shown(value)}, expected {_type_names(expect)}")
        result = value, status
    except Exception as exc:
        log_plugin_failure(fn, exc)
        result = None, Status.from_error(exc)
    if timer is not None:
        timer.observe(fn, status_label(result), started)
    return result


def call_status(fn: Callable[..., Status | None], *args: Any) -> Status | None:
    """Run a plugin method returning a Status or None; anything else becomes an Error status."""
    timer = args[0].plugin_timer if args else None
    started = time.perf_counter() if timer is not None else 0.0
    try:
        status = fn(*args)
        if status is not None and type(status) is not Status:
            raise PluginReturnError(f"returned {shown(status)}, expected a Status or None")
    except Exception as exc:
        log_plugin_failure(fn, exc)
        status = Status.from_error(exc)
    if timer is not None:
        timer.observe(fn, status_label(status), started)
    return status


def permit_answer(answer: Any) -> tuple[Status | None, float]:
    """A Permit plugin's ``(status, timeout seconds)``, checked."""
    if type(answer) is not tuple or len(answer) != 2:
        raise PluginReturnError(f"returned {shown(answer)}, expected a (Status | None, timeout seconds) pair")
    status, timeout = answer
    if status is not None and type(status) is not Status:
        raise PluginReturnError(f"returned status {shown(status)}, expected a Status or None")
    numeric = isinstance(timeout, (int, float, np.integer, np.floating)) and not isinstance(timeout, bool)
    if not numeric or timeout != timeout:
        raise PluginReturnError(f"returned timeout {shown(timeout)}, expected seconds as a number")
    return status, float(timeout)


def log_plugin_failure(fn: Callable[..., Any], exc: BaseException) -> None:
    # A warning with the traceback: shown with -v, never mixed into the normal output.
    log.warning("plugin call %s failed: %s", getattr(fn, "__qualname__", fn), exc, exc_info=True)


def shown(value: Any) -> str:
    """A value as error messages show it: its type and a shortened repr."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _type_names(expect: type | tuple[type, ...]) -> str:
    types = expect if isinstance(expect, tuple) else (expect,)
    return " or ".join(t.__name__ for t in types) + " or None" * (expect is not SCORE_TYPES)


def timed_extension_point(point: str) -> Callable[[Callable[Concatenate[Any, P], R]], Callable[Concatenate[Any, P], R]]:
    """Decorate a Framework ``run_*`` method so that, when the framework has ``metrics``, the whole
    extension point is timed into framework_extension_point_duration_seconds with its outcome's code.
    The method keeps its signature."""

    def wrap(run: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
        def timed(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
            metrics = self.metrics
            if metrics is None:
                return run(self, *args, **kwargs)
            started = time.perf_counter()
            result = run(self, *args, **kwargs)
            metrics.observe_extension_point(point, status_label(result), time.perf_counter() - started)
            return result

        timed.__name__ = run.__name__
        timed.__qualname__ = run.__qualname__
        timed.__doc__ = run.__doc__
        timed.__wrapped__ = run  # type: ignore[attr-defined]
        return timed

    return wrap
