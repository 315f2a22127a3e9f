"""The kube-scheduler v1.34 goldens come from upstream only: rebuilding the recorder and recording every
scenario again reproduces the committed files byte for byte, and DIFFERENCES.md is what compare.py
says about them.

Needs Go (the recorder runs kube-scheduler v1.34.4 in-process), hence the ``controlplane`` marker: where
Go is missing the test is skipped, unless the run requires the control plane.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.controlplane.fixture import go_available
from testing.controlplane.pytest_plugin import REQUIRE_ENV, controlplane_required
from tests.corpus import CORPUS

GOLDENS = Path(__file__).resolve().parents[2] / "testing" / "goldens"


def _require_go() -> None:
    if go_available():
        return
    if controlplane_required():
        pytest.fail(f"Go is not installed, and this run requires the real control plane ({REQUIRE_ENV} or CI is set)")
    pytest.skip("Go is not installed: the golden recorder cannot be built")


@pytest.mark.controlplane
def test_committed_goldens_are_exactly_what_upstream_records(tmp_path: Path) -> None:
    _require_go()
    if not CORPUS.is_dir():
        pytest.skip(f"conformance corpus not found at {CORPUS}")
    out = tmp_path / "v1.34"
    env = {**os.environ, "KUBESCHED_CONFORMANCE_DIR": str(CORPUS)}
    proc = subprocess.run(
        ["bash", str(GOLDENS / "record.sh"), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]

    committed = {p.name: p.read_bytes() for p in (GOLDENS / "v1.34").glob("*.json")}
    recorded = {p.name: p.read_bytes() for p in out.glob("*.json")}
    assert sorted(recorded) == sorted(committed)
    changed = sorted(name for name in committed if committed[name] != recorded[name])
    assert changed == [], f"re-recorded goldens differ from the committed ones: {changed}"

    diff = subprocess.run(
        [sys.executable, str(GOLDENS / "compare.py"), str(out), str(CORPUS)], capture_output=True, text=True, check=True
    )
    assert diff.stdout == (GOLDENS / "DIFFERENCES.md").read_text()
