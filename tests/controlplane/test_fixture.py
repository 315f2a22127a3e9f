"""The control plane's lifecycle: the build seen as it goes and stopped when interrupted, a stop that
finishes even when interrupted itself, and planes nobody stopped ended at interpreter exit."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from testing.controlplane.fixture import ControlPlane, ControlPlaneError, build_binaries
from tests.controlplane.fake_go import REPO, FakeGo


def alive(pid: int) -> bool:
    """Running, not merely a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def fake_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeGo:
    go = FakeGo(tmp_path)
    for name, value in go.env().items():
        monkeypatch.setenv(name, value)
    return go


def test_the_build_progress_is_handed_over_line_by_line(fake_go: FakeGo) -> None:
    lines: list[str] = []
    bin_dir = build_binaries(progress=lines.append)
    assert (bin_dir / "kube-apiserver").is_file()
    assert all(line.startswith("controlplane: ") for line in lines)
    assert [line.split()[2] for line in lines if line.startswith("controlplane: building ")][1:] == [
        "etcd",
        "kube-apiserver",
        "kubectl",
        "kube-scheduler",
        "kube-controller-manager",
    ]
    assert build_binaries(progress=lines.append) == bin_dir


def test_a_failed_build_raises_with_the_compiler_message(fake_go: FakeGo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GO_FAIL", "1")
    with pytest.raises(ControlPlaneError, match="compile: something went wrong"):
        build_binaries(progress=lambda line: None)


def test_an_interrupted_build_leaves_no_compiler_running(
    fake_go: FakeGo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pidfile = tmp_path / "go.pid"
    monkeypatch.setenv("FAKE_GO_HANG", str(pidfile))

    def interrupt_once_go_runs(line: str) -> None:
        if "fake go hangs" in line:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_binaries(progress=interrupt_once_go_runs)
    go = int(pidfile.read_text())
    try:
        assert not alive(go)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(go, signal.SIGKILL)


class WaitInterrupted(subprocess.Popen):
    """A process whose first wait is interrupted, as by a second Ctrl-C during teardown."""

    interrupted = False

    def wait(self, timeout: float | None = None) -> int:
        if not self.interrupted:
            self.interrupted = True
            raise KeyboardInterrupt
        return super().wait(timeout)


def test_an_interrupted_stop_still_stops_everything_then_raises(tmp_path: Path) -> None:
    work = tmp_path / "plane"
    work.mkdir()
    sleep = ["sleep", "600"]
    etcd = subprocess.Popen(sleep, start_new_session=True)
    apiserver = WaitInterrupted(sleep, start_new_session=True)
    plane = ControlPlane(
        bin_dir=tmp_path,
        work_dir=work,
        etcd_port=0,
        apiserver_port=0,
        admin_token="",
        scheduler_token="",
        log_dir=work,
        _etcd=etcd,
        _apiserver=apiserver,
        _own_work_dir=True,
    )
    try:
        with pytest.raises(KeyboardInterrupt):
            plane.stop()
        assert (alive(etcd.pid), alive(apiserver.pid), work.exists()) == (False, False, False)
    finally:
        for proc in (etcd, apiserver):
            proc.kill()
            subprocess.Popen.wait(proc)


LEFT_RUNNING = """
import json
from testing.controlplane.fixture import ControlPlane
plane = ControlPlane.start()
print(json.dumps({"pids": plane.pids, "work_dir": str(plane.work_dir)}))
"""


@pytest.mark.controlplane
def test_a_plane_nobody_stopped_is_stopped_at_exit(controlplane_bin_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", LEFT_RUNNING], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    plane = json.loads(proc.stdout)
    try:
        assert len(plane["pids"]) == 2
        assert [pid for pid in plane["pids"] if alive(pid)] == []
        assert not Path(plane["work_dir"]).exists()
    finally:
        for pid in plane["pids"]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(plane["work_dir"], ignore_errors=True)
