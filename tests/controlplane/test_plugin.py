"""The controlplane marker's contract, each case a pytest run in a subprocess: skipped with a reason where
Go is missing or on request, a failure (or a refused request) where the run requires the control plane
(``.ci/run``, CI=true); the first run's build shown on the terminal as it goes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.controlplane.fake_go import NEEDS_BINARIES, FakeGo

REPO = Path(__file__).resolve().parents[2]

NEEDS_PLANE = """
import pytest

@pytest.mark.controlplane
def test_needs_it(control_plane):
    assert control_plane.url
"""


def run_without_go(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["testing.controlplane.pytest_plugin"]\n')
    (tmp_path / "test_needs_plane.py").write_text(NEEDS_PLANE)
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "KUBESCHED_REQUIRE_CONTROLPLANE")}
    clean.update(PATH=str(Path(sys.executable).parent), PYTHONPATH=str(REPO), **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env=clean,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


def _python_without_go() -> None:
    if (Path(sys.executable).parent / "go").exists():
        pytest.skip("go sits beside python: cannot take it off the PATH")


def test_skipped_with_the_reason_where_go_is_missing(tmp_path: Path) -> None:
    _python_without_go()
    proc = run_without_go(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 skipped" in proc.stdout
    assert "Go is not installed" in proc.stdout


@pytest.mark.parametrize("env", [{"KUBESCHED_REQUIRE_CONTROLPLANE": "1"}, {"CI": "true"}])
def test_a_failure_where_the_run_requires_the_control_plane(tmp_path: Path, env: dict[str, str]) -> None:
    _python_without_go()
    proc = run_without_go(tmp_path, **env)
    assert proc.returncode != 0
    assert "skipped" not in proc.stdout
    assert "this run requires the real control plane" in proc.stdout


# -- the first run's build, on the terminal as it goes ------------------------------------------------------
def test_the_first_build_is_announced_on_the_terminal_despite_output_capturing(tmp_path: Path) -> None:
    go = FakeGo(tmp_path)
    proc = go.run_pytest(tmp_path / "suite", NEEDS_BINARIES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # A passing test's captured output is never shown: these lines got through because capturing was off.
    lines = [line for line in proc.stdout.splitlines() if line.startswith("controlplane:")]
    assert "first run only" in lines[0] and str(go.cache) in lines[0]
    assert "--skip-controlplane" in lines[1]
    assert lines[2] == "controlplane: building etcd (1/5) from go.etcd.io/etcd/server/v3 ..."
    assert lines[3].startswith("controlplane: built etcd in ")
    assert "controlplane: building kube-apiserver (2/5) from k8s.io/kubernetes/cmd/kube-apiserver ..." in lines
    assert lines[-1].startswith("controlplane: all built in ")
    assert proc.stdout.index(lines[-1]) < proc.stdout.index("1 passed")
    assert len(go.builds()) == 5


def test_a_warm_cache_builds_nothing_and_says_nothing(tmp_path: Path) -> None:
    go = FakeGo(tmp_path)
    assert go.run_pytest(tmp_path / "suite", NEEDS_BINARIES).returncode == 0
    go.log.unlink()
    proc = go.run_pytest(tmp_path / "suite", NEEDS_BINARIES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "controlplane:" not in proc.stdout + proc.stderr
    assert go.calls() == []


# -- skipping them on purpose ---------------------------------------------------------------------------
SKIP_WAYS = [
    pytest.param(["--skip-controlplane"], {}, id="option"),
    pytest.param([], {"KUBESCHED_SKIP_CONTROLPLANE": "1"}, id="env"),
]


@pytest.mark.parametrize(("args", "env"), SKIP_WAYS)
def test_skipped_on_request_with_the_reason_and_nothing_built(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    go = FakeGo(tmp_path)
    proc = go.run_pytest(tmp_path / "suite", NEEDS_BINARIES, *args, **env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 skipped" in proc.stdout
    assert "control-plane tests skipped on request" in proc.stdout
    assert go.calls() == []


def test_other_tests_still_run_when_the_control_plane_is_skipped(tmp_path: Path) -> None:
    go = FakeGo(tmp_path)
    source = NEEDS_BINARIES + "\n\ndef test_plain():\n    pass\n"
    proc = go.run_pytest(tmp_path / "suite", source, "--skip-controlplane")
    assert "1 passed, 1 skipped" in proc.stdout, proc.stdout


@pytest.mark.parametrize(("args", "env"), SKIP_WAYS)
@pytest.mark.parametrize("required", [{"KUBESCHED_REQUIRE_CONTROLPLANE": "1"}, {"CI": "true"}], ids=["required", "CI"])
def test_skipping_is_refused_where_the_run_requires_the_control_plane(
    tmp_path: Path, args: list[str], env: dict[str, str], required: dict[str, str]
) -> None:
    go = FakeGo(tmp_path)
    proc = go.run_pytest(tmp_path / "suite", NEEDS_BINARIES, *args, **env, **required)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert "cannot skip the control-plane tests: this run requires them" in proc.stderr
    assert go.calls() == []


# -- nothing left behind when the run is ended from outside -------------------------------------------------
WAITS_WITH_A_PLANE = """
import json
import os
import time
from pathlib import Path

import pytest


@pytest.mark.controlplane
def test_waits(control_plane):
    info = Path(os.environ["PLANE_INFO"])
    info.with_suffix(".tmp").write_text(json.dumps({"pids": control_plane.pids,
                                                    "work_dir": str(control_plane.work_dir)}))
    info.with_suffix(".tmp").rename(info)
    while True:
        time.sleep(0.2)
"""


def start_waiting_plane(folder: Path) -> tuple[subprocess.Popen, dict]:
    """A pytest run in a session of its own whose test holds a control plane up; returns once it is up."""
    folder.mkdir()
    (folder / "conftest.py").write_text('pytest_plugins = ["testing.controlplane.pytest_plugin"]\n')
    (folder / "test_waits.py").write_text(WAITS_WITH_A_PLANE)
    info = folder / "plane.json"
    env = {k: v for k, v in os.environ.items() if k != "KUBESCHED_SKIP_CONTROLPLANE"}
    env.update(PYTHONPATH=str(REPO), PLANE_INFO=str(info))
    with open(folder / "pytest.out", "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=folder,
            start_new_session=True,
        )
    deadline = time.monotonic() + 300
    while not info.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the inner run never brought its plane up:\n" + (folder / "pytest.out").read_text())
        time.sleep(0.2)
    return proc, json.loads(info.read_text())


@pytest.mark.controlplane
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_run_ended_by_a_signal_stops_the_plane_and_removes_its_folder(
    controlplane_bin_dir: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    proc, plane = start_waiting_plane(tmp_path / "suite")
    try:
        assert len(plane["pids"]) == 2 and Path(plane["work_dir"], "tokens.csv").is_file()
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)  # Ctrl-C: the terminal signals the whole foreground group
        else:
            proc.send_signal(sig)
        proc.wait(timeout=120)
        output = (tmp_path / "suite" / "pytest.out").read_text()
        assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
        assert [pid for pid in plane["pids"] if Path(f"/proc/{pid}").exists()] == []
        assert not Path(plane["work_dir"]).exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in plane["pids"]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(plane["work_dir"], ignore_errors=True)
