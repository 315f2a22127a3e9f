"""The controlplane marker's contract: skipped with a reason where Go is missing, a failure where the run
requires the control plane (``.ci/run``, CI=true). Runs pytest in a subprocess with Go off the PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

NEEDS_PLANE = '''
import pytest

@pytest.mark.controlplane
def test_needs_it(control_plane):
    assert control_plane.url
'''


def run_without_go(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["testing.controlplane.pytest_plugin"]\n')
    (tmp_path / "test_needs_plane.py").write_text(NEEDS_PLANE)
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "KUBESCHED_REQUIRE_CONTROLPLANE")}
    clean.update(PATH=str(Path(sys.executable).parent), PYTHONPATH=str(REPO), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, env=clean, cwd=tmp_path, timeout=120, check=False)


@pytest.fixture(autouse=True)
def _python_without_go() -> None:
    if (Path(sys.executable).parent / "go").exists():
        pytest.skip("go sits beside python: cannot take it off the PATH")


def test_skipped_with_the_reason_where_go_is_missing(tmp_path: Path) -> None:
    proc = run_without_go(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 skipped" in proc.stdout
    assert "Go is not installed" in proc.stdout


@pytest.mark.parametrize("env", [{"KUBESCHED_REQUIRE_CONTROLPLANE": "1"}, {"CI": "true"}])
def test_a_failure_where_the_run_requires_the_control_plane(tmp_path: Path, env: dict[str, str]) -> None:
    proc = run_without_go(tmp_path, **env)
    assert proc.returncode != 0
    assert "skipped" not in proc.stdout
    assert "this run requires the real control plane" in proc.stdout
