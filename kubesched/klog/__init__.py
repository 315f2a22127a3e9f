"""Structured logging as kube-scheduler does it (klog): verbosity levels, key/value pairs, object references.

kube-scheduler logs each thing it does to a pod or a node at a fixed verbosity, and people debug it by
reading those lines (``--v 2`` shows every binding, ``--v 4`` every event). kubesched logs the same
messages with the same keys at the same levels, through Python's :mod:`logging`::

    logger = klog.Logger(__name__)

    if v := logger.v(2):
        v.info("Successfully bound pod to node", "pod", klog.kobj(pod), "node", host)
    logger.error(err, "Error scheduling pod; retrying", "pod", klog.kobj(pod))

``logger.v(n)`` answers None unless lines at verbosity ``n`` are shown, so a guarded line costs one
check and nothing else when they are not: the simulator runs the same code with logging off. Key/value
pairs alternate as in Go (keys may hold spaces, as upstream's ``"unschedulable plugins"`` does). A
plugin's lines name its logger as kube-scheduler's framework names it, with the first pair
``"logger", "PostFilter.DefaultPreemption"``.

Verbosity maps onto Python's levels: V0 is ``logging.INFO`` and V(n) is ``INFO - n``, so ``--v N``
(see :func:`kubesched.klog.options.configure`) is the level ``INFO - N`` and shows every line of V N or
less; warnings and errors always show. The formats are :mod:`kubesched.klog.text` (klog's) and
:mod:`kubesched.klog.json_format` (component-base's JSON logger).

This package imports nothing of kubesched's, so every floor may use it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.klog.text import ERR_ATTR, KV_ATTR
from kubesched.klog.values import ObjectRef

#: The highest verbosity a line may be logged at (kube-scheduler's own lines stop at 10).
MAX_V = 10

__all__ = ["MAX_V", "Logger", "ObjectRef", "Verbose", "kobj", "kref", "level_for"]


def level_for(v: int) -> int:
    """The Python logging level of verbosity ``v`` (V0 is ``logging.INFO``)."""
    return logging.INFO - v


def kobj(obj: Any) -> ObjectRef:
    """klog's ``KObj``: an object (a parsed Pod or Node, or a raw manifest) as ``namespace/name``."""
    if isinstance(obj, Mapping):
        meta = obj.get("metadata") or {}
        return ObjectRef(str(meta.get("name") or ""), str(meta.get("namespace") or ""))
    return ObjectRef(getattr(obj, "name", "") or "", getattr(obj, "namespace", "") or "")


def kref(namespace: str, name: str) -> ObjectRef:
    """klog's ``KRef``: a reference from a namespace and a name."""
    return ObjectRef(name, namespace)


class Verbose:
    """The logger at one verbosity, handed out by :meth:`Logger.v` only when that verbosity is shown."""

    __slots__ = ("_level", "_std")

    def __init__(self, std: logging.Logger, v: int) -> None:
        self._std = std
        self._level = level_for(v)

    def info(self, msg: str, *kv: Any) -> None:
        """Log ``msg`` with alternating keys and values."""
        self._std.log(self._level, msg, extra={KV_ATTR: kv}, stacklevel=2)


class Logger:
    """A named logger with kube-scheduler's structured calls (:meth:`v`, :meth:`info`, :meth:`error`)."""

    __slots__ = ("_enabled", "_verbose", "std")

    def __init__(self, name: str) -> None:
        #: The Python logger behind it (for lines logged the ordinary way).
        self.std = logging.getLogger(name)
        self._enabled = self.std.isEnabledFor
        self._verbose = tuple(Verbose(self.std, v) for v in range(MAX_V + 1))

    def v(self, level: int) -> Verbose | None:
        """The logger at verbosity ``level`` when such lines are shown, else None (guard the call)."""
        if self._enabled(logging.INFO - level):
            return self._verbose[level]
        return None

    def info(self, msg: str, *kv: Any) -> None:
        """A V0 line: shown at every verbosity."""
        self.std.log(logging.INFO, msg, extra={KV_ATTR: kv}, stacklevel=2)

    def error(self, err: BaseException | None, msg: str, *kv: Any) -> None:
        """An error line (``err=`` the exception's message, when there is one); always shown."""
        self.std.log(logging.ERROR, msg, extra={KV_ATTR: kv, ERR_ATTR: err}, stacklevel=2)
