"""--v and --logging-format (kubesched.klog.options): which lines show, and other libraries kept quiet."""

from __future__ import annotations

import io
import logging

import pytest

from kubesched import klog
from kubesched.klog.options import THIRD_PARTY_VERBOSITY, configure, formatter, unstructured_only
from tests.klog.capture import captured

logger = klog.Logger("kubesched.tests.options")


def _log_every_level() -> None:
    for level in range(klog.MAX_V + 1):
        if v := logger.v(level):
            v.info(f"at V{level}")


@pytest.mark.parametrize("verbosity", [0, 2, 4, 5, 10])
def test_lines_up_to_the_verbosity_show(verbosity: int) -> None:
    with captured(verbosity) as out:
        _log_every_level()
        logger.std.warning("a warning")
        logger.error(None, "an error")
    shown = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert shown == [f'"at V{level}"' for level in range(verbosity + 1)] + ["a warning", '"an error"']


def test_a_v4_line_is_hidden_at_v2_and_shown_at_v4() -> None:
    for verbosity, shown in ((2, False), (4, True)):
        with captured(verbosity) as out:
            if v := logger.v(4):
                v.info("Update event for node", "node", klog.kref("", "n1"))
        assert ('"Update event for node" node="n1"' in out.getvalue()) is shown


def test_a_hidden_line_builds_nothing() -> None:
    """The guard answers None, so the arguments of a hidden line are never evaluated."""
    with captured(2):
        assert logger.v(3) is None
        assert logger.v(2) is not None


@pytest.mark.parametrize("verbosity", [0, 4, THIRD_PARTY_VERBOSITY - 1])
def test_urllib3_stays_quiet(verbosity: int) -> None:
    with captured(verbosity) as out:
        logging.getLogger("urllib3.connectionpool").debug("Starting new HTTPS connection (1): 127.0.0.1:6443")
        logging.getLogger("urllib3.connectionpool").info("Resetting dropped connection")
        logging.getLogger("kubernetes.client.rest").debug("response body: {...}")
        logging.getLogger("urllib3.connectionpool").warning("Connection pool is full")
    assert out.getvalue().count("\n") == 1 and "Connection pool is full" in out.getvalue()


def test_other_libraries_join_in_from_the_third_party_verbosity() -> None:
    with captured(THIRD_PARTY_VERBOSITY) as out:
        logging.getLogger("urllib3.connectionpool").debug("Starting new HTTPS connection (1): 127.0.0.1:6443")
        logging.getLogger("kubesched.tests.options").debug("kubesched's own debug lines wait for --v 10")
        if v := logger.v(THIRD_PARTY_VERBOSITY + 1):
            v.info("one level too verbose")
    assert out.getvalue().count("\n") == 1 and "Starting new HTTPS connection" in out.getvalue()


def test_configure_replaces_the_root_handlers() -> None:
    with captured(2):
        handler = configure(3, "json", io.StringIO())
        assert logging.getLogger().handlers == [handler]
        assert logging.getLogger().level == klog.level_for(3)


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported log format 'yaml'"):
        formatter("yaml")


def test_commands_with_their_own_output_leave_the_structured_lines_out() -> None:
    structured = logging.LogRecord("kubesched.x", logging.ERROR, "f.py", 1, "Error scheduling pod; retrying", (), None)
    structured.klog_kv = ()
    plain = logging.LogRecord("kubesched.x", logging.ERROR, "f.py", 1, "binding task failed", (), None)
    assert not unstructured_only(structured) and unstructured_only(plain)
