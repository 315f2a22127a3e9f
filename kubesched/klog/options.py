"""kube-scheduler's logging flags, ``--v`` and ``--logging-format``, applied to Python's logging.

``--v N`` shows kubesched's lines of verbosity N or less (warnings and errors always). Other libraries'
loggers (urllib3's connection pool, the Kubernetes client) stay at warnings until
:data:`THIRD_PARTY_VERBOSITY`: client-go logs each request's method, URL and status from V6 on, so that
is where the HTTP library's own lines join in; below it, ``--v 4`` is the scheduler's lines only.

Everything is set on the root logger and its one handler, so that the next ``logging.basicConfig(force=True)``
(another command in the same process, a test) starts afresh.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from kubesched.klog import MAX_V, level_for
from kubesched.klog.json_format import JSONFormatter
from kubesched.klog.text import KV_ATTR, TextFormatter

#: The values of ``--logging-format``.
FORMATS = ("text", "json")
#: From this ``--v`` on, other libraries' debug lines are shown too.
THIRD_PARTY_VERBOSITY = 6
#: The loggers that follow ``--v`` (this package's); every other one is a library's.
OWN_LOGGER = "kubesched"


def formatter(logging_format: str) -> logging.Formatter:
    if logging_format == "text":
        return TextFormatter()
    if logging_format == "json":
        return JSONFormatter()
    raise ValueError(f"unsupported log format {logging_format!r} (want one of {', '.join(FORMATS)})")


class VerbosityFilter(logging.Filter):
    """kubesched's records down to ``--v``; other libraries' down to warnings, or everything from
    :data:`THIRD_PARTY_VERBOSITY` on."""

    def __init__(self, verbosity: int) -> None:
        super().__init__()
        self.own_level = level_for(min(max(verbosity, 0), MAX_V))
        self.other_level = logging.DEBUG if verbosity >= THIRD_PARTY_VERBOSITY else logging.WARNING

    @property
    def level(self) -> int:
        """The lowest level either kind of record may have (the root logger's level)."""
        return min(self.own_level, self.other_level)

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        own = name.startswith(OWN_LOGGER) and (len(name) == len(OWN_LOGGER) or name[len(OWN_LOGGER)] == ".")
        return record.levelno >= (self.own_level if own else self.other_level)


def configure(verbosity: int, logging_format: str = "text", stream: TextIO | None = None) -> logging.Handler:
    """Send every log line to ``stream`` (stderr) in ``logging_format``, at ``--v verbosity``.

    Replaces the root logger's handlers and level; returns the handler installed.
    """
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(formatter(logging_format))
    verbosity_filter = VerbosityFilter(verbosity)
    handler.addFilter(verbosity_filter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(verbosity_filter.level)
    return handler


def unstructured_only(record: logging.LogRecord) -> bool:
    """A handler filter for commands whose output reports each pod itself (simulate, capacity, plan):
    kube-scheduler's structured per-pod lines are left out, other lines kept."""
    return not hasattr(record, KV_ATTR)
