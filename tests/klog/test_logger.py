"""The structured calls (kubesched.klog): KObj and KRef, and V levels on Python's logging levels."""

from __future__ import annotations

import logging

from kubesched import klog
from kubesched.klog.values import ObjectRef


class Named:
    name = "web-1"
    namespace = "default"


def test_kobj_of_a_parsed_object_and_of_a_manifest() -> None:
    assert klog.kobj(Named()) == ObjectRef("web-1", "default")
    assert klog.kobj({"metadata": {"name": "node-3"}}) == ObjectRef("node-3")
    assert klog.kobj({"metadata": {"name": "p", "namespace": "ns"}}) == ObjectRef("p", "ns")
    assert klog.kobj({}) == ObjectRef("")
    assert klog.kref("ns", "p") == ObjectRef("p", "ns")


def test_v_levels_sit_below_info() -> None:
    assert klog.level_for(0) == logging.INFO
    assert klog.level_for(4) == logging.INFO - 4
    assert klog.level_for(klog.MAX_V) == logging.DEBUG


def test_v_follows_the_python_level_of_the_logger() -> None:
    logger = klog.Logger("kubesched.tests.logger")
    std = logging.getLogger("kubesched.tests.logger")
    try:
        std.setLevel(klog.level_for(3))
        assert [level for level in range(klog.MAX_V + 1) if logger.v(level)] == [0, 1, 2, 3]
        std.setLevel(logging.WARNING)
        assert logger.v(0) is None
    finally:
        std.setLevel(logging.NOTSET)


def test_the_record_carries_the_pairs_and_the_callers_place() -> None:
    logger = klog.Logger("kubesched.tests.logger")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    std = logging.getLogger("kubesched.tests.logger")
    handler = Keep()
    std.addHandler(handler)
    std.setLevel(klog.level_for(2))
    try:
        if v := logger.v(2):
            v.info("Attempting to schedule pod", "pod", klog.kref("ns", "p"))
        logger.error(ValueError("x"), "Error occurred")
    finally:
        std.removeHandler(handler)
        std.setLevel(logging.NOTSET)
    info, error = records
    pairs = info.klog_kv  # type: ignore[attr-defined]
    assert (info.levelno, info.msg) == (klog.level_for(2), "Attempting to schedule pod")
    assert pairs == ("pod", ObjectRef("p", "ns"))
    assert info.filename == "test_logger.py"  # the caller's place, not kubesched.klog's
    assert info.funcName == "test_the_record_carries_the_pairs_and_the_callers_place"
    assert error.levelno == logging.ERROR and str(error.klog_err) == "x"  # type: ignore[attr-defined]
