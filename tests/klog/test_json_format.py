"""The JSON log format (kubesched.klog.json_format): component-base's field names, order and encodings."""

from __future__ import annotations

import json
import logging
import time

import pytest

from kubesched import klog
from kubesched.klog.json_format import JSONFormatter, caller, json_value
from kubesched.klog.values import ObjectRef
from tests.klog.capture import captured

logger = klog.Logger("kubesched.tests.json")


def test_an_info_line() -> None:
    before = time.time() * 1000
    with captured(2, "json") as out:
        if v := logger.v(2):
            v.info(
                "Successfully bound pod to node",
                "pod",
                klog.kref("default", "web-1"),
                "node",
                "node-3",
                "evaluatedNodes",
                5,
                "feasibleNodes",
                3,
            )
    line = out.getvalue()
    assert line.count("\n") == 1
    obj = json.loads(line)
    assert list(obj) == ["ts", "caller", "msg", "v", "pod", "node", "evaluatedNodes", "feasibleNodes"]
    assert before <= obj["ts"] <= time.time() * 1000  # milliseconds since the epoch
    assert obj["caller"].startswith("klog/test_json_format.py:")
    assert obj["msg"] == "Successfully bound pod to node" and obj["v"] == 2
    assert obj["pod"] == {"name": "web-1", "namespace": "default"}
    assert (obj["node"], obj["evaluatedNodes"], obj["feasibleNodes"]) == ("node-3", 5, 3)


def test_an_error_line_has_err_last_and_no_v() -> None:
    with captured(0, "json") as out:
        logger.error(RuntimeError("boom"), "Error scheduling pod; retrying", "pod", klog.kref("default", "p"))
        logger.error(None, "Leaderelection lost")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert list(first) == ["ts", "caller", "msg", "pod", "err"]
    assert first["err"] == "boom" and first["pod"] == {"name": "p", "namespace": "default"}
    assert list(second) == ["ts", "caller", "msg"]


def test_a_plugins_logger_is_named_before_the_caller() -> None:
    with captured(3, "json") as out:
        if v := logger.v(3):
            v.info("Attempting to bind pod to node", "logger", "Bind.DefaultBinder", "pod", klog.kref("ns", "p"))
        logger.error(ValueError("gone"), "Tried to preempted pod", "logger", "PostFilter.DefaultPreemption")
    info, error = (json.loads(line) for line in out.getvalue().splitlines())
    assert list(info) == ["ts", "logger", "caller", "msg", "v", "pod"] and info["logger"] == "Bind.DefaultBinder"
    assert list(error) == ["ts", "logger", "caller", "msg", "err"]


def test_lines_logged_the_ordinary_way() -> None:
    std = logging.getLogger("kubesched.tests.json")
    with captured(0, "json") as out:
        std.warning("lock %s is held", "kube-scheduler")
        try:
            raise KeyError("k")
        except KeyError:
            std.exception("handler failed")
    warning, error = (json.loads(line) for line in out.getvalue().splitlines())
    assert warning["msg"] == "lock kube-scheduler is held" and warning["v"] == 0  # a warning is a V0 line
    assert error["msg"] == "handler failed" and error["err"] == "'k'" and "KeyError" in error["stacktrace"]


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ('<b> & "q"\n', '"<b> & \\"q\\"\\n"'),  # no HTML escaping in the JSON format
        (ObjectRef("node-3"), '{"name":"node-3"}'),
        (3.0, "3"),
        (1e21, "1000000000000000000000"),
        (float("nan"), '"NaN"'),
        (float("-inf"), '"-Inf"'),
        (True, "true"),
        (None, "null"),
        ({"A", "B"}, '{"A":{},"B":{}}'),
        ([1, "x"], '[1,"x"]'),
        (ValueError("bad"), '"bad"'),
    ],
)
def test_values(value: object, want: str) -> None:
    assert json_value(value) == want


def test_caller_is_folder_and_file() -> None:
    record = logging.LogRecord("x", logging.INFO, "/src/kubesched/queue/scheduling_queue.py", 12, "m", (), None)
    assert caller(record) == "queue/scheduling_queue.py:12"
    record.klog_kv = ("odd",)
    assert json.loads(JSONFormatter().format(record))["odd"] == "(MISSING)"
