"""Upstream components beside a :class:`~testing.controlplane.fixture.ControlPlane`, as processes a test
starts, signals and stops (the binaries are the ones build.sh made for the plane)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from testing.controlplane.fixture import ControlPlane


def start_kube_scheduler(
    plane: ControlPlane,
    work_dir: Path,
    *,
    name: str = "kube-scheduler",
    config: dict[str, Any] | None = None,
    args: tuple[str, ...] = (),
    kubeconfig: Path | None = None,
    verbosity: int = 2,
) -> subprocess.Popen:
    """kube-scheduler v1.34 with ``config`` (a KubeSchedulerConfiguration's fields; the kubeconfig defaults
    to the user system:kube-scheduler) and ``args`` after it (``--leader-elect-*`` flags override the
    file, as they do upstream). Serving is off. Its log is ``work_dir/<name>.log``, also on the returned
    process as ``log_path``."""
    document = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **(config or {})}
    document.setdefault("clientConnection", {})["kubeconfig"] = str(kubeconfig or plane.scheduler_kubeconfig)
    path = work_dir / f"{name}-config.json"
    path.write_text(json.dumps(document, indent=2))  # JSON is YAML: kube-scheduler reads it as it is
    log_path = work_dir / f"{name}.log"
    cmd = [str(plane.bin_dir / "kube-scheduler"), "--config", str(path), "--secure-port=0", f"--v={verbosity}", *args]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    proc.log_path = log_path  # type: ignore[attr-defined]
    return proc


def start_kube_controller_manager(
    plane: ControlPlane,
    work_dir: Path,
    *,
    controllers: tuple[str, ...],
    qps: int = 20,
    name: str = "kube-controller-manager",
) -> subprocess.Popen:
    """kube-controller-manager v1.34 running only ``controllers`` (e.g. ``resourceclaim-controller``,
    ``deployment-controller``) with the admin credentials, no leader election and no serving; ``qps``
    sets its client's rate (and burst). Its log is ``work_dir/<name>.log``, also on the process as
    ``log_path``."""
    log_path = work_dir / f"{name}.log"
    cmd = [
        str(plane.bin_dir / "kube-controller-manager"),
        f"--kubeconfig={plane.admin_kubeconfig}",
        f"--controllers={','.join(controllers)}",
        "--leader-elect=false",
        "--use-service-account-credentials=false",
        "--secure-port=0",
        f"--kube-api-qps={qps}",
        f"--kube-api-burst={qps}",
        "--v=1",
    ]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    proc.log_path = log_path  # type: ignore[attr-defined]
    return proc
