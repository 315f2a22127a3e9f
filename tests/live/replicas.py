"""Helpers for the tests where several schedulers contend for one Lease (test_failover, test_interop):
replicas under ServiceAccounts of their own, a steady stream of pods, and the Lease's holder as the
API server's audit log tells it."""

from __future__ import annotations

import functools
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from testing.controlplane.audit import AuditReader, LeaseWrite, lease_writes
from testing.controlplane.components import start_kube_scheduler
from testing.differential.client import Client
from tests.live.conftest import Live, pod

LEASE = ("kube-system", "kube-scheduler")
UPSTREAM_USER = "system:kube-scheduler"


def election_flags(lease_duration: float, renew_deadline: float, retry_period: float) -> tuple[str, ...]:
    """The ``--leader-elect-*`` flags, which kubesched and kube-scheduler both take."""
    return (
        "--leader-elect=true",
        f"--leader-elect-lease-duration={lease_duration:g}s",
        f"--leader-elect-renew-deadline={renew_deadline:g}s",
        f"--leader-elect-retry-period={retry_period:g}s",
    )


@dataclass
class Replica:
    name: str
    user: str  # who the API server (and its audit log) sees
    proc: subprocess.Popen
    started_line: str  # the log line that says it has joined the election
    signalled: bool = False

    @property
    def log_path(self) -> Path:
        path: Path = self.proc.log_path  # type: ignore[attr-defined]
        return path


def joined(replica: Replica) -> bool:
    return replica.started_line in replica.log_path.read_text(errors="replace")


class Replicas:
    """Scheduler processes on one Lease. Each ``kubesched run`` gets a new ServiceAccount in ``namespace``
    (bound to kube-scheduler's two ClusterRoles), so its bindings and Lease writes name it; upstream
    kube-scheduler runs as the user system:kube-scheduler."""

    def __init__(self, live: Live, namespace: str, flags: tuple[str, ...]) -> None:
        self.live = live
        self.namespace = namespace
        self.flags = flags
        self.all: list[Replica] = []
        live.kubectl("create", "namespace", namespace)
        for role in ("kube-scheduler", "volume-scheduler"):
            live.kubectl(
                "create",
                "clusterrolebinding",
                f"{namespace}-{role}",
                f"--clusterrole=system:{role}",
                f"--group=system:serviceaccounts:{namespace}",
            )

    def start(self) -> Replica:
        name = f"kubesched-{len(self.all)}"
        self.live.kubectl("create", "serviceaccount", name, "-n", self.namespace)
        kubeconfig = self.live.plane.service_account_kubeconfig(self.namespace, name)
        proc = self.live.start_scheduler(*self.flags, kubeconfig=kubeconfig, name=name)
        return self._add(
            Replica(name, f"system:serviceaccount:{self.namespace}:{name}", proc, "joining leader election")
        )

    def start_upstream(self) -> Replica:
        name = f"kube-scheduler-{len(self.all)}"
        proc = start_kube_scheduler(self.live.plane, self.live.tmp, name=name, args=self.flags)
        self.live.procs.append(proc)  # stopped with the test's other processes
        return self._add(Replica(name, UPSTREAM_USER, proc, "attempting to acquire leader lease"))

    def _add(self, replica: Replica) -> Replica:
        self.all.append(replica)
        return replica

    def running(self, user: str) -> Replica:
        """The replica of ``user`` not yet signalled (one at a time per user)."""
        [replica] = [r for r in self.all if r.user == user and not r.signalled]
        return replica

    def signal(self, replica: Replica, sig: signal.Signals) -> None:
        replica.signalled = True
        replica.proc.send_signal(sig)

    def wait_started(self) -> None:
        """Until every replica not signalled has joined the election (a SIGTERM before kubesched installs
        its handlers would end an importing interpreter with no word)."""
        for r in self.all:
            if not r.signalled:
                self.live.wait(functools.partial(joined, r), 60, f"{r.name} to join the election")

    def stop_all(self) -> dict[str, int]:
        """SIGTERM every replica not signalled yet; the exit status of each (also of those that ended alone)."""
        self.wait_started()
        codes = {}
        for r in self.all:
            if not r.signalled:
                if r.proc.poll() is None:
                    self.signal(r, signal.SIGTERM)
                codes[r.name] = r.proc.wait(30)
        return codes

    def remove_accounts(self) -> None:
        self.live.kubectl("delete", "namespace", self.namespace, "--wait=false", check=False)
        for role in ("kube-scheduler", "volume-scheduler"):
            self.live.kubectl("delete", "clusterrolebinding", f"{self.namespace}-{role}", check=False)


class PodStream:
    """Creates a small pod every ``interval`` seconds from a thread of its own until stopped."""

    def __init__(self, live: Live, interval: float, prefix: str = "w") -> None:
        plane = live.plane
        self.client = Client(plane.url, plane.admin_token, str(plane.ca_file))
        self.interval = interval
        self.prefix = prefix
        self.names: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pod-stream", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            name = f"{self.prefix}{len(self.names):04d}"
            self.client.create(pod(name, cpu="50m", memory="32Mi"))
            self.names.append(name)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


def current_holder(audit: AuditReader) -> LeaseWrite | None:
    """The Lease's last write, when it names a holder."""
    writes = lease_writes(audit.requests(), *LEASE)
    return writes[-1] if writes and writes[-1].holder else None


def wait_for_a_leader_that_binds(live: Live, audit: AuditReader, stream: PodStream, previous: str) -> LeaseWrite:
    """Until the Lease names a holder other than ``previous`` and a pod created after that is bound; the
    holder's write."""
    live.wait(
        lambda: (w := current_holder(audit)) is not None and w.holder != previous,
        30,
        f"a leader other than {previous or 'none'}",
    )
    index = len(stream.names) + 1
    live.wait(lambda: len(stream.names) > index, 10, "the pod stream")
    live.wait_bound(f"{stream.prefix}{index:04d}", timeout=30)
    write = current_holder(audit)
    assert write is not None
    return write
