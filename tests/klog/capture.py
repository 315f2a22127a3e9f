"""Log lines captured as a command would write them, for tests of what kubesched logs."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from kubesched.klog.options import configure


@contextmanager
def captured(verbosity: int, logging_format: str = "text") -> Iterator[io.StringIO]:
    """Everything logged inside, formatted as ``kubesched run --v verbosity`` writes it; the root logger's
    handlers and level are put back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    out = io.StringIO()
    try:
        configure(verbosity, logging_format, out)
        yield out
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
