"""The fault suite's machinery: an admin client straight to kube-apiserver, ``kubesched run`` behind a
:class:`FaultProxy`, a background churner, and the invariants every fault must leave true.

After each fault, :meth:`FaultEnv.settle` pauses the churn and waits until (1) every pod is bound to a
node that exists, (2) no pod was bound twice (the proxy saw every binding and the API server's answer,
and none is still in flight), and (3) the scheduler's cache equals the API server's state, checked
twice: the scheduler's own cache debugger (SIGUSR2) logs no mismatch against its informers, and the
cache it dumps, put through the debugger's comparer against a fresh list from the API server, has no
difference either.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

from kubesched.cache.debugger import compare_nodes, compare_pod_nodes, compare_pods
from testing.controlplane.faults import Hold
from testing.controlplane.fixture import ControlPlane, write_kubeconfig
from testing.controlplane.proxy import FaultProxy

REPO = Path(__file__).resolve().parents[3]
#: How long one request of the scheduler may take (--request-timeout): slow answers go past it.
REQUEST_TIMEOUT = 4.0
SETTLE_TIMEOUT = 90.0
BINDING = r"/api/v1/namespaces/default/pods/[^/]+/binding"
WORKERS = ("w1", "w2", "w3")
CHURN_TAINT = {"key": "kubesched.io/churn", "value": "true", "effect": "NoSchedule"}
#: Backoff short enough that a pod put back after a failed binding is tried again within seconds.
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 2,
    "leaderElection": {"leaderElect": False},
}


def node(name: str, cpu: str = "64", labels: dict | None = None, taints: list | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints} if taints else {},
    }


NODE_STATUS = {
    "capacity": {"cpu": "64", "memory": "256Gi", "pods": "500"},
    "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "500"},
    "conditions": [{"type": "Ready", "status": "True"}],
}


def pod(name: str, cpu: str = "10m", **spec: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": "16Mi"}},
                }
            ],
            "terminationGracePeriodSeconds": 0,
            **spec,
        },
    }


class Admin:
    """Requests straight to kube-apiserver as the plane's admin (never through the proxy)."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self._tls = ssl.create_default_context(cafile=str(plane.ca_file))

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.plane.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.plane.admin_token}", "Content-Type": content_type},
        )
        with urllib.request.urlopen(req, context=self._tls, timeout=30) as resp:
            return json.loads(resp.read() or b"null")

    def pods(self) -> list[dict]:
        items: list[dict] = self.request("GET", "/api/v1/pods")["items"]
        return items

    def nodes(self) -> list[dict]:
        items: list[dict] = self.request("GET", "/api/v1/nodes")["items"]
        return items

    def pod(self, name: str) -> dict | None:
        try:
            found: dict = self.request("GET", f"/api/v1/namespaces/default/pods/{name}")
            return found
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise

    def create_pod(self, obj: dict) -> dict:
        created: dict = self.request("POST", "/api/v1/namespaces/default/pods", obj)
        return created

    def delete_pod(self, name: str) -> None:
        self._delete(f"/api/v1/namespaces/default/pods/{name}", {"gracePeriodSeconds": 0})

    def create_node(self, obj: dict, status: dict | None = None) -> None:
        self.request("POST", "/api/v1/nodes", obj)
        self.request(
            "PATCH",
            f"/api/v1/nodes/{obj['metadata']['name']}/status",
            {"status": status or NODE_STATUS},
            "application/merge-patch+json",
        )

    def delete_node(self, name: str) -> None:
        self._delete(f"/api/v1/nodes/{name}", {})

    def _delete(self, path: str, options: dict) -> None:
        try:
            self.request("DELETE", path, {"apiVersion": "v1", "kind": "DeleteOptions", **options})
        except urllib.error.HTTPError as err:
            if err.code != 404:
                raise


class SchedulerProcess:
    """``kubesched run`` as a user runs it, reaching the API server through the proxy."""

    def __init__(self, plane: ControlPlane, proxy: FaultProxy, folder: Path) -> None:
        self.folder = folder
        self.kubeconfig = write_kubeconfig(
            folder / "via-proxy.kubeconfig", proxy.url, "system:kube-scheduler", plane.scheduler_token, plane.ca_file
        )
        self.config = folder / "config.yaml"
        self.config.write_text(yaml.safe_dump(CONFIG))
        self.log_path = folder / "kubesched.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        args = [
            sys.executable,
            "-m",
            "kubesched",
            "run",
            "--kubeconfig",
            str(self.kubeconfig),
            "--config",
            str(self.config),
            "--secure-port",
            "0",
            "--v",
            "3",
            "--tie-break",
            "name",
            "--request-timeout",
            f"{REQUEST_TIMEOUT:g}s",
        ]
        log = open(self.log_path, "a")  # noqa: SIM115 - closed with the process
        env = dict(os.environ, PYTHONPATH=str(REPO))
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def log(self, since: int = 0) -> str:
        with open(self.log_path, "rb") as f:
            f.seek(since)
            return f.read().decode(errors="replace")

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def tail(self, lines: int = 80) -> str:
        return "\n".join(self.log().splitlines()[-lines:])

    def wait_log(self, pattern: str, since: int, timeout: float = 30.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.log(since))
            if match:
                return match
            time.sleep(0.1)
        raise AssertionError(f"no log line matching {pattern!r} after {timeout:.0f}s:\n{self.tail()}")

    def debug(self, timeout: float = 30.0) -> DebugReport:
        """Send SIGUSR2 and read what the cache debugger wrote."""
        assert self.proc is not None
        since = self.log_size()
        os.kill(self.proc.pid, signal.SIGUSR2)
        self.wait_log(r'"Dump of scheduling queue" summary="[^"]*" pods=(""|<\n(?:\t.*\n)* >)', since, timeout)
        return DebugReport.parse(self.log(since))


@dataclass
class DebugReport:
    """One SIGUSR2's lines: the mismatches, the cached nodes and their pods' uids, the assumed and
    the queued pods' uids."""

    mismatches: list[str]
    nodes: dict[str, list[str]]
    deleted_nodes: set[str]
    assumed: list[str]
    queued: list[str]

    @classmethod
    def parse(cls, text: str) -> DebugReport:
        mismatches = [line for line in text.splitlines() if '"Cache mismatch"' in line]
        dump = re.search(r'"Dump of cached NodeInfo" nodes=(?:""|<\n((?:\t.*\n)*) >) assumedPods=(\[.*\])', text)
        assert dump is not None, text
        nodes: dict[str, list[str]] = {}
        deleted: set[str] = set()
        current, scheduled = "", False
        for line in (dump.group(1) or "").splitlines():
            line = line.removeprefix("\t")
            if line.startswith("Node name: "):
                current, scheduled = line.removeprefix("Node name: "), False
                nodes[current] = []
            elif line == "Deleted: true":
                deleted.add(current)
            elif line.startswith("Scheduled Pods("):
                scheduled = True
            elif line.startswith("Nominated Pods("):
                scheduled = False
            elif scheduled and line.startswith("name: "):
                nodes[current].append(_uid_of(line))
        queue = re.search(r'"Dump of scheduling queue" summary="[^"]*" pods=(?:""|<\n((?:\t.*\n)*) >)', text)
        assert queue is not None, text
        queued = [_uid_of(line) for line in (queue.group(1) or "").splitlines() if "uid: " in line]
        return cls(mismatches, nodes, deleted, json.loads(dump.group(2)), queued)

    def differences(self, nodes: list[dict], pods: list[dict]) -> list[str]:
        """The debugger's comparer run on this dump against ``nodes`` and ``pods`` (a fresh list)."""
        infos = {
            name: SimpleNamespace(pods=[SimpleNamespace(uid=uid) for uid in uids]) for name, uids in self.nodes.items()
        }
        waiting = [SimpleNamespace(uid=uid) for uid in self.queued]
        found = []
        missed, redundant = compare_nodes(nodes, infos)  # type: ignore[arg-type]
        if missed or redundant:
            found.append(f"missedNodes={missed} redundantNodes={redundant}")
        missed, redundant = compare_pods(pods, waiting, infos)  # type: ignore[arg-type]
        if missed or redundant:
            found.append(f"missedPods={missed} redundantPods={redundant}")
        found += compare_pod_nodes(pods, waiting, infos)  # type: ignore[arg-type]
        return found


def _uid_of(line: str) -> str:
    match = re.search(r"uid: ([^,]+),", line)
    assert match is not None, line
    return match.group(1)


class Churner:
    """Pods and nodes coming and going in the background while faults happen: pods created and deleted
    (bound or pending), tainted spare nodes added and removed (no pod of the suite tolerates them, so
    deleting one never leaves a pod behind)."""

    def __init__(self, admin: Admin, *, seed: int = 7) -> None:
        self.admin = admin
        self.rng = random.Random(seed)
        self.pods: list[str] = []
        self.spares: list[str] = []
        self.errors = 0
        self._count = 0
        self._running = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="churner", daemon=True)

    def start(self) -> None:
        self._running.set()
        self._thread.start()

    def pause(self) -> None:
        """Stop churning and wait for the change in progress to finish."""
        self._running.clear()
        with self._idle:
            pass

    def resume(self) -> None:
        self._running.set()

    def stop(self) -> None:
        self._stop.set()
        self._running.set()
        self._thread.join(10)

    def _loop(self) -> None:
        while not self._stop.wait(0.15):
            self._running.wait()
            if self._stop.is_set():
                return
            with self._idle:
                if not self._running.is_set():
                    continue
                try:
                    self._step()
                except Exception:  # the API server may be restarting: churn on
                    self.errors += 1

    def _step(self) -> None:
        self._count += 1
        if self._count % 12 == 0:
            if len(self.spares) < 2:
                name = f"spare-{self._count}"
                self.admin.create_node(node(name, taints=[CHURN_TAINT]))
                self.spares.append(name)
            else:
                self.admin.delete_node(self.spares.pop(0))
            return
        if len(self.pods) < 10 or self.rng.random() < 0.5:
            name = f"churn-{self._count}"
            self.admin.create_pod(pod(name))
            self.pods.append(name)
        else:
            self.admin.delete_pod(self.pods.pop(self.rng.randrange(len(self.pods))))


@dataclass
class FaultEnv:
    """What every fault test gets: the plane, the proxy, the admin client, the scheduler, the churner."""

    plane: ControlPlane
    proxy: FaultProxy
    admin: Admin
    scheduler: SchedulerProcess
    churner: Churner
    #: Pods the test expects to stay pending (they fit nowhere): left out of "every pod ends bound".
    unschedulable: set[str] = field(default_factory=set)
    last_problems: list[str] = field(default_factory=list)

    def wait(self, pred: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = pred()
            if result:
                return result
            time.sleep(0.2)
        raise AssertionError(
            f"timed out after {timeout:.0f}s waiting for {what}; scheduler log:\n{self.scheduler.tail()}"
        )

    def wait_caught(self, hold: Hold, what: str, since: float, log_since: int, timeout: float = 60.0) -> None:
        """Wait until ``hold`` holds a request; otherwise fail with what the proxy saw of lists and watches
        since ``since`` (time.monotonic()) and the scheduler's log since ``log_since``."""
        if hold.caught.wait(timeout):
            return
        seen = [
            f"{e.started - since:+.2f}s {e.info.verb} {e.info.path} -> {e.status} ({e.action})"
            for e in self.proxy.seen(since=since)
            if e.info.verb in ("list", "watch")
        ]
        raise AssertionError(
            f"no {what} held after {timeout:.0f}s; lists and watches since:\n"
            + "\n".join(seen)
            + f"\nscheduler log since:\n{self.scheduler.log(log_since)[-6000:]}"
        )

    def wait_bound(self, *names: str, timeout: float = 60.0) -> dict[str, str]:
        def bound() -> dict[str, str] | None:
            where = {n: ((self.admin.pod(n) or {}).get("spec") or {}).get("nodeName") for n in names}
            return where if all(where.values()) else None  # type: ignore[return-value]

        found: dict[str, str] = self.wait(bound, timeout, f"{names} to be bound")
        return found

    def bindings(self, name: str | None = None) -> list[Any]:
        """The binding requests the proxy saw (of pod ``name``), in order."""
        path = BINDING if name is None else f"/api/v1/namespaces/default/pods/{name}/binding"
        return self.proxy.seen(method="POST", path=path)

    def settle(self) -> None:
        """Pause the churn, wait until the invariants hold (see the module docstring), resume it."""
        self.churner.pause()
        try:
            self.wait(self._check, SETTLE_TIMEOUT, "the invariants after the fault")
        except AssertionError as err:
            raise AssertionError(f"still wrong: {self.last_problems}\n{err}") from None
        finally:
            self.churner.resume()

    def _check(self) -> bool:
        self.last_problems = self.problems()
        return not self.last_problems

    def problems(self) -> list[str]:
        """What is wrong now ([] when every invariant holds)."""
        assert self.scheduler.alive(), f"kubesched exited:\n{self.scheduler.tail()}"
        if self.proxy.serving():
            return [f"{self.proxy.serving()} requests still being served"]
        nodes, pods = self.admin.nodes(), self.admin.pods()
        names = {n["metadata"]["name"] for n in nodes}
        found = [
            f"pod {p['metadata']['name']} is pending"
            for p in pods
            if not p["spec"].get("nodeName") and p["metadata"]["name"] not in self.unschedulable
        ]
        found += [
            f"pod {p['metadata']['name']} is bound to {p['spec']['nodeName']}, which does not exist"
            for p in pods
            if p["spec"].get("nodeName") and p["spec"]["nodeName"] not in names
        ]
        bound = Counter(e.body["metadata"].get("uid") for e in self.bindings() if 200 <= e.upstream_status < 300)
        found += [f"pod uid {uid} was bound {n} times" for uid, n in bound.items() if n > 1]
        if found:
            return found
        report = self.scheduler.debug()
        found += [f"kubesched's debugger: {line}" for line in report.mismatches]
        found += [f"against a fresh list: {d}" for d in report.differences(nodes, pods)]
        if report.assumed:
            found.append(f"assumed pods left: {report.assumed}")
        return found
