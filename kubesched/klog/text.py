"""klog's text format, kube-scheduler's default (``--logging-format text``), one line per record::

    I1125 22:58:12.123456   12345 schedule_one.py:346] "Successfully bound pod to node" pod="default/web-1" \
node="node-3" evaluatedNodes=5 feasibleNodes=3

The header is the severity (I, W, E), the month and day, the local time to the microsecond, the process
id right-aligned in seven columns, and the Python file and line that logged. A structured line (see
:class:`kubesched.klog.Logger`) goes on with its quoted message, ``err=`` for an error, then its
key/value pairs; a line logged the ordinary way (``logging.getLogger(...).warning("... %s", x)``) goes on
with its message as it is, as klog's ``Infof`` writes it. A traceback follows on the next lines.
"""

from __future__ import annotations

import logging
import numbers
import time
from collections.abc import Sequence
from enum import Enum
from typing import Any

from kubesched.klog.values import ObjectRef, UnsupportedValue, error_text, go_float, go_json, go_quote, text_string

#: Record attributes a structured call sets (see :mod:`kubesched.klog`).
KV_ATTR = "klog_kv"
ERR_ATTR = "klog_err"
_MISSING = "(MISSING)"


def severity(levelno: int) -> str:
    if levelno >= logging.ERROR:
        return "E"
    if levelno >= logging.WARNING:
        return "W"
    return "I"


def header(record: logging.LogRecord) -> str:
    """``Lmmdd hh:mm:ss.uuuuuu threadid file:line] `` (klog writes the process id as the thread id)."""
    created = record.created
    local = time.localtime(created)
    micros = int((created - int(created)) * 1_000_000)
    return (
        f"{severity(record.levelno)}{local.tm_mon:02d}{local.tm_mday:02d} "
        f"{local.tm_hour:02d}:{local.tm_min:02d}:{local.tm_sec:02d}.{micros:06d} "
        f"{record.process or 0:7d} {record.filename}:{record.lineno}] "
    )


def text_value(value: Any) -> str:
    """One value as klog's text format writes it after ``key=``."""
    kind = type(value)
    if kind is str:
        return text_string(value)
    if kind is ObjectRef:
        return f'"{value}"'  # written as it is, unescaped, as klog writes an ObjectRef
    if kind is int:
        return str(value)
    if value is None or kind is bool or kind is list or kind is tuple or kind is dict:
        return _json_or_error(value)
    if isinstance(value, BaseException):
        return text_string(error_text(value))
    if isinstance(value, Enum):
        return text_value(value.value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return _json_or_error(float(value))
    if isinstance(value, list | tuple | dict | set | frozenset):
        return _json_or_error(value)
    return text_string(str(value))  # Go's Stringer


def _json_or_error(value: Any) -> str:
    try:
        return go_float(value) if type(value) is float else go_json(value)
    except UnsupportedValue as err:
        return go_quote(f"<internal error: {err}>")


def key_values(kv: Sequence[Any], err: BaseException | None = None) -> str:
    """`` key=value`` for each pair (``err`` first when given); an odd last key gets ``(MISSING)``."""
    parts = []
    if err is not None:
        parts.append(f" err={text_string(error_text(err))}")
    for i in range(0, len(kv), 2):
        value = kv[i + 1] if i + 1 < len(kv) else _MISSING
        parts.append(f" {kv[i]}={text_value(value)}")
    return "".join(parts)


class TextFormatter(logging.Formatter):
    """klog's text lines from Python log records (structured or not)."""

    def format(self, record: logging.LogRecord) -> str:
        kv = getattr(record, KV_ATTR, None)
        if kv is None:
            body = record.getMessage()
        else:
            body = go_quote(str(record.msg)) + key_values(kv, getattr(record, ERR_ATTR, None))
        line = header(record) + body
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line = f"{line}\n{record.exc_text}"
        if record.stack_info:
            line = f"{line}\n{self.formatStack(record.stack_info)}"
        return line
