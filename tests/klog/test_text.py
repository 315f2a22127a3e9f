"""klog's text lines (kubesched.klog.text): header, quoted message, key/value pairs, plain lines."""

from __future__ import annotations

import logging
import os
import re
import time

import pytest

from kubesched import klog
from kubesched.klog.text import TextFormatter, header, key_values, text_value
from kubesched.klog.values import ObjectRef
from tests.klog.capture import captured

HEADER = re.compile(r"^([IWE])(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6}) ([ \d]{7}) ([\w.]+):(\d+)\] ")

logger = klog.Logger("kubesched.tests.text")


class Named:
    def __init__(self, name: str, namespace: str = "") -> None:
        self.name, self.namespace = name, namespace


def test_a_bound_pod_line_reads_as_kube_schedulers() -> None:
    with captured(2) as out:
        if v := logger.v(2):
            v.info(
                "Successfully bound pod to node",
                "pod",
                klog.kobj(Named("web-1", "default")),
                "node",
                "node-3",
                "evaluatedNodes",
                5,
                "feasibleNodes",
                3,
            )
        line_no = _line_of('"Successfully bound pod to node",') - 1  # the call starts a line above
    line = out.getvalue()
    match = HEADER.match(line)
    assert match, line
    assert match.group(1) == "I" and match.group(8) == f"{os.getpid():7d}"
    assert (match.group(9), int(match.group(10))) == ("test_text.py", line_no)  # the caller, not klog's module
    assert line[match.end() :] == (
        '"Successfully bound pod to node" pod="default/web-1" node="node-3" evaluatedNodes=5 feasibleNodes=3\n'
    )


def _line_of(snippet: str) -> int:
    with open(__file__) as source:
        return next(i for i, text in enumerate(source, 1) if snippet in text)


def test_the_header_is_local_time_to_the_microsecond() -> None:
    record = logging.LogRecord("kubesched.x", logging.WARNING, "/a/b/cache.py", 42, "m", (), None)
    record.created = 1700000000.25
    record.process = 12345
    local = time.localtime(1700000000)
    assert header(record) == (
        f"W{local.tm_mon:02d}{local.tm_mday:02d} {local.tm_hour:02d}:{local.tm_min:02d}:"
        f"{local.tm_sec:02d}.250000   12345 cache.py:42] "
    )


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("node-3", '"node-3"'),
        ('a "quoted" word', r'"a \"quoted\" word"'),
        ("two\nlines", "<\n\ttwo\n\tlines\n >"),
        (5, "5"),
        (-1, "-1"),
        (2.5, "2.5"),
        (3.0, "3"),
        (True, "true"),
        (None, "null"),
        (ObjectRef("web-1", "default"), '"default/web-1"'),
        (ObjectRef("node-3"), '"node-3"'),
        (["a", "b"], '["a","b"]'),
        ({"NodeResourcesFit"}, '{"NodeResourcesFit":{}}'),
        ({"k": 1.5}, '{"k":1.5}'),
        (ValueError("boom"), '"boom"'),
        (float("nan"), '"<internal error: json: unsupported value: NaN>"'),
    ],
)
def test_values(value: object, want: str) -> None:
    assert text_value(value) == want


def test_a_plugins_logger_is_its_first_pair_after_err() -> None:
    """klog writes a named logger as the first of the logger's values, after ``err``."""
    assert key_values(("logger", "PostFilter.DefaultPreemption", "pod", ObjectRef("p", "ns")), ValueError("x")) == (
        ' err="x" logger="PostFilter.DefaultPreemption" pod="ns/p"'
    )


def test_key_values_put_err_first_and_mark_a_missing_value() -> None:
    assert key_values(("pod", ObjectRef("p", "ns"), "odd"), ValueError("no")) == ' err="no" pod="ns/p" odd="(MISSING)"'
    assert key_values(("unschedulable plugins", {"A"})) == ' unschedulable plugins={"A":{}}'


def test_an_error_line() -> None:
    with captured(0) as out:
        logger.error(
            RuntimeError("binding rejected"), "Error scheduling pod; retrying", "pod", klog.kref("default", "web-1")
        )
        logger.error(None, "Leaderelection lost")
    first, second = out.getvalue().splitlines()
    assert first.startswith("E") and first.endswith(
        '] "Error scheduling pod; retrying" err="binding rejected" pod="default/web-1"'
    )
    assert second.endswith('] "Leaderelection lost"')


def test_a_line_logged_the_ordinary_way_keeps_its_words_unquoted() -> None:
    std = logging.getLogger("kubesched.tests.text")
    with captured(0) as out:
        std.warning("lock %s is held", "kube-scheduler")
        try:
            raise KeyError("k")
        except KeyError:
            std.exception("handler failed")
    lines = out.getvalue().splitlines()
    assert HEADER.match(lines[0]) and lines[0].endswith("] lock kube-scheduler is held") and lines[0][0] == "W"
    assert lines[1].startswith("E") and lines[1].endswith("] handler failed")
    assert lines[2] == "Traceback (most recent call last):" and lines[-1] == "KeyError: 'k'"


def test_the_formatter_alone() -> None:
    record = logging.LogRecord("kubesched.x", logging.INFO - 3, "/x/queue.py", 7, "Add event for node", (), None)
    record.klog_kv = ("node", ObjectRef("n1"))
    assert TextFormatter().format(record).endswith('queue.py:7] "Add event for node" node="n1"')
