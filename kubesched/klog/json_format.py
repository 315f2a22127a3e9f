"""kube-scheduler's JSON log format (``--logging-format json``): one object per line::

    {"ts":1732575492123.457,"caller":"kubesched/schedule_one.py:346","msg":"Successfully bound pod to node",\
"v":2,"pod":{"name":"web-1","namespace":"default"},"node":"node-3","evaluatedNodes":5,"feasibleNodes":3}

The fields are those of component-base's JSON logger: ``ts`` (the time in milliseconds since the epoch,
a float), ``logger`` (the name of a plugin's logger, given as a line's first pair ``"logger", name``),
``caller`` (the logging file's folder and name, and the line), ``msg``, ``v`` (the verbosity of an info
line; error lines have none), the key/value pairs in the order given, then ``err`` on an error line.
Objects referred to with :func:`kubesched.klog.kobj` are ``{"name":…,"namespace":…}``. A Python traceback,
when there is one, is the ``stacktrace`` field.
"""

from __future__ import annotations

import logging
import math
import numbers
import os
from enum import Enum
from typing import Any

from kubesched.klog.text import ERR_ATTR, KV_ATTR
from kubesched.klog.values import ObjectRef, UnsupportedValue, error_text, go_json, plain_float

_MISSING = "(MISSING)"


def caller(record: logging.LogRecord) -> str:
    """``folder/file.py:line``, as zap's short caller names a Go file."""
    folder = os.path.basename(os.path.dirname(record.pathname))
    return f"{folder}/{record.filename}:{record.lineno}" if folder else f"{record.filename}:{record.lineno}"


def verbosity(levelno: int) -> int:
    """The V level of an info line (a warning counts as V0, as klog hands warnings to the logger)."""
    return max(logging.INFO - levelno, 0)


def json_value(value: Any) -> str:
    """One value as the JSON logger writes it (strings unescaped for HTML, floats in plain notation)."""
    kind = type(value)
    if kind is str:
        return go_json(value, escape_html=False)
    if kind is ObjectRef:
        return go_json(value.as_json(), escape_html=False)
    if kind is int:
        return str(value)
    if isinstance(value, BaseException):
        return go_json(error_text(value), escape_html=False)
    if isinstance(value, Enum):
        return json_value(value.value)
    if kind is bool or value is None:
        return go_json(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return '"NaN"'
        if math.isinf(number):
            return '"+Inf"' if number > 0 else '"-Inf"'
        return plain_float(number)
    try:
        return go_json(value, escape_html=False)
    except UnsupportedValue as err:
        return go_json(f"<internal error: {err}>", escape_html=False)


class JSONFormatter(logging.Formatter):
    """One JSON object per record, with component-base's JSON logger's field names and order."""

    def format(self, record: logging.LogRecord) -> str:
        kv = getattr(record, KV_ATTR, None)
        message = record.getMessage() if kv is None else str(record.msg)
        fields = [f'"ts":{plain_float(record.created * 1000)}']
        if kv and kv[0] == "logger" and len(kv) > 1:
            # A plugin's named logger: the JSON logger writes its name before the caller.
            fields.append(f'"logger":{json_value(kv[1])}')
            kv = kv[2:]
        fields += [f'"caller":{json_value(caller(record))}', f'"msg":{json_value(message)}']
        if record.levelno < logging.ERROR:
            fields.append(f'"v":{verbosity(record.levelno)}')
        for i in range(0, len(kv or ()), 2):
            assert kv is not None
            value = kv[i + 1] if i + 1 < len(kv) else _MISSING
            fields.append(f"{json_value(str(kv[i]))}:{json_value(value)}")
        err = getattr(record, ERR_ATTR, None)
        if err is None and record.exc_info and record.exc_info[1] is not None:
            err = record.exc_info[1]
        if err is not None:
            fields.append(f'"err":{json_value(error_text(err))}')
        if record.exc_info:
            fields.append(f'"stacktrace":{json_value(self.formatException(record.exc_info))}')
        return "{" + ",".join(fields) + "}"
