"""Suite-wide guards and wiring.

Under ``.ci/run`` (``KUBESCHED_REQUIRE_CORPUS=1``) the conformance corpus is part of what must pass, so
its absence stops the run instead of turning every replay into a skip. The real control plane's marker
and session fixture come from testing/controlplane.
"""

from __future__ import annotations

import os

import pytest

from tests.corpus import CORPUS

pytest_plugins = ["testing.controlplane.pytest_plugin"]


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("KUBESCHED_REQUIRE_CORPUS") == "1" and not CORPUS.is_dir():
        pytest.exit(f"conformance corpus not found at {CORPUS} (set KUBESCHED_CONFORMANCE_DIR)", returncode=1)
