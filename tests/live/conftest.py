"""Helpers for tests against the real control plane: objects made with kubectl, ``kubesched run`` as a
process (as the user runs it), and a kubelet stand-in that finishes graceful pod deletions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing.controlplane.fixture import ControlPlane, write_kubeconfig

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical", "system-node-critical"}


def node(
    name: str,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict | None = None,
    taints: list | None = None,
) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints} if taints else {},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", **spec: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
            **spec,
        },
    }


class Live:
    """One test's view of the shared control plane, cleaned before the test."""

    def __init__(self, plane: ControlPlane, tmp: Path) -> None:
        self.plane = plane
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        self._kubelet_stop = threading.Event()

    # -- objects ----------------------------------------------------------------------------------
    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return self.plane.kubectl(*args, input=input, check=check)

    def apply(self, *objects: dict) -> None:
        """Create with ``kubectl create``; nodes then get their status (there is no kubelet to report it)."""
        docs = [{k: v for k, v in o.items() if not (o["kind"] == "Node" and k == "status")} for o in objects]
        self.kubectl("create", "-f", "-", input=yaml.safe_dump_all(docs))
        for o in objects:
            if o["kind"] == "Node":
                self.kubectl(
                    "patch",
                    "node",
                    o["metadata"]["name"],
                    "--subresource=status",
                    "--type=merge",
                    "-p",
                    json.dumps({"status": o["status"]}),
                )

    def get(self, kind: str, name: str = "", namespace: str = "default") -> Any:
        args = ["get", kind, *([name] if name else []), "-o", "json"]
        if kind not in ("nodes", "priorityclasses", "node"):
            args += ["-n", namespace]
        return json.loads(self.kubectl(*args).stdout)

    def pods(self) -> dict[str, dict]:
        return {p["metadata"]["name"]: p for p in self.get("pods")["items"]}

    def node_of(self, name: str) -> str | None:
        p = self.pods().get(name)
        return None if p is None else p["spec"].get("nodeName")

    def events(self, name: str) -> list[dict]:
        """events.k8s.io/v1 events about pod ``name`` (the scheduler writes that group when served)."""
        items = json.loads(self.kubectl("get", "events.v1.events.k8s.io", "-n", "default", "-o", "json").stdout)
        return [e for e in items["items"] if (e.get("regarding") or {}).get("name") == name]

    def wait(self, pred: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = pred()
            if result:
                return result
            time.sleep(0.3)
        raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; scheduler log:\n{self.log_tail()}")

    def wait_bound(self, *names: str, timeout: float = 60.0) -> dict[str, str]:
        def bound() -> dict[str, str] | None:
            pods = self.pods()
            where = {n: pods[n]["spec"].get("nodeName") for n in names if n in pods}
            return where if len(where) == len(names) and all(where.values()) else None

        result: dict[str, str] = self.wait(bound, timeout, f"pods {names} to be bound")
        return result

    # -- the scheduler ----------------------------------------------------------------------------
    def start_scheduler(
        self, *extra: str, config: dict | None = None, kubeconfig: Path | None = None, name: str = "kubesched"
    ) -> subprocess.Popen:
        args = [
            sys.executable,
            "-m",
            "kubesched",
            "run",
            "--kubeconfig",
            str(kubeconfig or self.plane.scheduler_kubeconfig),
            "--secure-port",
            "0",
            "--v",
            "2",
            "--tie-break",
            "name",
        ]
        if config is not None:
            path = self.tmp / f"{name}-config.yaml"
            path.write_text(yaml.safe_dump(config))
            args += ["--config", str(path)]
        log = open(self.tmp / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.Popen([*args, *extra], stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        proc.log_path = self.tmp / f"{name}.log"  # type: ignore[attr-defined]
        self.procs.append(proc)
        return proc

    def log_tail(self, lines: int = 40) -> str:
        out = []
        for proc in self.procs:
            path: Path = proc.log_path  # type: ignore[attr-defined]
            out.append("\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n---\n".join(out)

    def kubeconfig_via(self, url: str) -> Path:
        """The scheduler's credentials, pointed at another address (a proxy)."""
        return write_kubeconfig(
            self.tmp / "via.kubeconfig", url, "system:kube-scheduler", self.plane.scheduler_token, self.plane.ca_file
        )

    def run_kubelet_standin(self) -> None:
        """Finish graceful deletions as a kubelet would (force-delete pods that have a deletionTimestamp)."""

        def loop() -> None:
            while not self._kubelet_stop.wait(0.3):
                try:
                    for name, p in self.pods().items():
                        if p["metadata"].get("deletionTimestamp"):
                            self.kubectl("delete", "pod", name, "--grace-period=0", "--force", check=False)
                except Exception:  # the API server may be restarting: try again
                    continue

        threading.Thread(target=loop, daemon=True).start()

    # -- cleanup ----------------------------------------------------------------------------------
    def reset(self) -> None:
        # Every namespace: other suites (the contract tests) leave pods of their own behind.
        self.kubectl(
            "delete", "pods", "--all", "--all-namespaces", "--grace-period=0", "--force", "--wait=false", check=False
        )
        # No controller manager runs to remove the finalizers a Job's pods carry (a test that ran one left
        # them): free them, or they would stay deleting for ever.
        for p in json.loads(self.kubectl("get", "pods", "-A", "-o", "json").stdout)["items"]:
            if p["metadata"].get("finalizers"):
                self.kubectl(
                    "patch",
                    "pod",
                    p["metadata"]["name"],
                    "-n",
                    p["metadata"]["namespace"],
                    "--type=merge",
                    "-p",
                    '{"metadata":{"finalizers":null}}',
                    check=False,
                )
        self.kubectl("delete", "nodes", "--all", "--wait=false", check=False)
        self.kubectl("delete", "events", "--all", "-n", "default", check=False)
        self.kubectl("delete", "lease", "kube-scheduler", "-n", "kube-system", "--ignore-not-found", check=False)
        for pc in self.get("priorityclasses")["items"]:
            if pc["metadata"]["name"] not in SYSTEM_PRIORITY_CLASSES:
                self.kubectl("delete", "priorityclass", pc["metadata"]["name"], check=False)
        self.wait(
            lambda: (
                not json.loads(self.kubectl("get", "pods", "-A", "-o", "json").stdout)["items"]
                and not self.get("nodes")["items"]
            ),
            60,
            "a clean cluster",
        )

    def stop(self) -> None:
        self._kubelet_stop.set()
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()


@pytest.fixture
def live(control_plane: ControlPlane, tmp_path: Path) -> Iterator[Live]:
    helper = Live(control_plane, tmp_path)
    helper.reset()
    yield helper
    helper.stop()


@pytest.fixture
def audited_live(audited_control_plane: ControlPlane, tmp_path: Path) -> Iterator[Live]:
    """The same helper on the plane that keeps an audit log (testing.controlplane.audit)."""
    helper = Live(audited_control_plane, tmp_path)
    helper.reset()
    yield helper
    helper.stop()
