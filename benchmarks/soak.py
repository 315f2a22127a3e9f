"""``python -m benchmarks --live --soak MINUTES``: churn for a long while, against kubesched and kube-scheduler.

Each scheduler runs on a control plane of its own (a fresh etcd + kube-apiserver, testing/controlplane),
both at the same time so that whatever else loads the machine loads both alike, with the flags and
credentials of the live benchmark (:mod:`benchmarks.live`: system:kube-scheduler, clientConnection
qps/burst 5000, leader election off). On each plane, for MINUTES minutes:

- pods are created at a steady rate (10 a second) and each is deleted 60 s after its creation, bound or
  not, so about 600 exist at any time;
- the cluster keeps 100 nodes, one of which leaves every 30 s (the oldest, deleted) while a new one joins.

Every minute it records, per scheduler: the pods bound in that minute per second, the p99 of their
creation-to-bound latency (creation: the create request returned; bound: a watch saw spec.nodeName),
the scheduler's RSS and thread count at the minute's end (/proc), and how many pods were deleted still
pending. It prints the series as a table, then one verdict line per scheduler: the growth of RSS and of
threads after the warm-up (the median of the first three minutes after it against the median of the
last three; steady when both stay under 5 %) and the drift of the p99 latency (all pods bound in the
first half after the warm-up against the second half).
"""

from __future__ import annotations

import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.live import REPO, BindWatcher, node, scheduler_command
from kubesched.live.cluster import KubeCluster
from kubesched.live.connection import ConnectionOptions, RestClient
from testing.controlplane.fixture import ControlPlane, build_binaries

SCHEDULERS = ("kube-scheduler", "kubesched")
#: RSS and threads may grow by less than this after the warm-up (percent).
STEADY_GROWTH = 5.0
#: The minutes whose medians are compared at both ends of the series.
ENDS = 3


@dataclass(frozen=True)
class Churn:
    """How the cluster churns."""

    nodes: int = 100
    pods_per_s: float = 10.0
    pod_lifetime_s: float = 60.0
    node_period_s: float = 30.0


@dataclass
class Minute:
    """One minute of one scheduler's run."""

    minute: int
    bound: int
    p99_s: float | None
    rss_mib: float
    threads: int
    deleted_pending: int
    latencies: list[float] = field(default_factory=list, repr=False)

    @property
    def pods_per_s(self) -> float:
        return self.bound / 60.0


def soak_pod(i: int) -> dict:
    """The live benchmark's pod (scheduler_perf's pod-default), with a name of its own."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"soak-{i:07d}", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "500Mi"},
                        "limits": {"cpu": "100m", "memory": "500Mi"},
                    },
                }
            ]
        },
    }


def proc_status(pid: int) -> tuple[float, int]:
    """(RSS in MiB, thread count) of a process, from /proc; (0, 0) once it is gone."""
    rss, threads = 0.0, 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
    except OSError:
        pass
    return rss, threads


def p99(values: Sequence[float]) -> float | None:
    ordered = sorted(values)
    return ordered[int(0.99 * (len(ordered) - 1))] if ordered else None


class ChurnDriver:
    """Creates, deletes and replaces objects on one plane at the churn's pace, from one thread."""

    def __init__(self, cluster: KubeCluster, churn: Churn) -> None:
        self.cluster = cluster
        self.churn = churn
        self.created_at: dict[str, float] = {}
        self.deleted_pending: list[float] = []  # when a pod was deleted before it was seen bound
        self._pool = ThreadPoolExecutor(4, thread_name_prefix="churn")
        self._pods: deque[tuple[float, str]] = deque()
        self._nodes: deque[int] = deque(range(churn.nodes))
        self._next_node = churn.nodes

    def create_nodes(self) -> None:
        list(self._pool.map(self.cluster.create, [node(i) for i in self._nodes]))

    def run(self, stop: threading.Event, bound: BindWatcher) -> None:
        start = time.monotonic()
        pod_numbers = itertools.count()
        next_pod = start
        next_node = start + self.churn.node_period_s
        while not stop.is_set():
            now = time.monotonic()
            while next_pod <= now:
                self._pool.submit(self._create_pod, next(pod_numbers))
                next_pod += 1.0 / self.churn.pods_per_s
            while self._pods and self._pods[0][0] <= now:
                _, name = self._pods.popleft()
                if name not in bound.bound_at:
                    self.deleted_pending.append(now)
                self._pool.submit(self._delete, "Pod", "default", name)
            if next_node <= now:
                self._replace_node()
                next_node += self.churn.node_period_s
            stop.wait(
                max(0.0, min(next_pod, next_node, self._pods[0][0] if self._pods else next_pod) - time.monotonic())
            )
        self._pool.shutdown(wait=True)

    def _create_pod(self, i: int) -> None:
        obj = soak_pod(i)
        try:
            self.cluster.create(obj)
        except Exception as err:
            print(f"creating {obj['metadata']['name']} failed: {err}", file=sys.stderr)
            return
        created = time.monotonic()
        self.created_at[obj["metadata"]["name"]] = created
        self._pods.append((created + self.churn.pod_lifetime_s, obj["metadata"]["name"]))

    def _replace_node(self) -> None:
        gone = self._nodes.popleft()
        self._pool.submit(self._delete, "Node", None, str(node(gone)["metadata"]["name"]))
        self._nodes.append(self._next_node)
        self._pool.submit(self.cluster.create, node(self._next_node))
        self._next_node += 1

    def _delete(self, kind: str, namespace: str | None, name: str) -> None:
        try:
            self.cluster.delete(kind, namespace, name)
        except Exception as err:
            print(f"deleting {kind} {name} failed: {err}", file=sys.stderr)


def soak_one(which: str, minutes: int, churn: Churn, bin_dir: Path, series: list[Minute]) -> None:
    """Run one scheduler under churn for ``minutes``, appending a :class:`Minute` to ``series`` as each ends."""
    work = Path(tempfile.mkdtemp(prefix=f"kubesched-soak-{which}-"))
    plane = ControlPlane.start(work_dir=work / "plane", bin_dir=bin_dir)
    proc: subprocess.Popen | None = None
    stop = threading.Event()
    try:
        cluster = KubeCluster(
            RestClient(ConnectionOptions(kubeconfig=str(plane.admin_kubeconfig), qps=-1)), delete_grace_period=0
        )
        driver = ChurnDriver(cluster, churn)
        driver.create_nodes()
        watcher = BindWatcher(cluster)
        watcher.watch.wait_for_sync(120)
        with open(work / f"{which}.log", "w") as log:
            proc = subprocess.Popen(
                scheduler_command(which, plane, work),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, PYTHONPATH=str(REPO)),
                cwd=REPO,
            )
        churner = threading.Thread(target=driver.run, args=(stop, watcher), name=f"churn-{which}", daemon=True)
        start = time.monotonic()
        churner.start()
        for minute in range(minutes):
            end = start + 60.0 * (minute + 1)
            while time.monotonic() < end and proc.poll() is None:
                time.sleep(min(1.0, max(0.0, end - time.monotonic())))
            if proc.poll() is not None:
                raise RuntimeError(f"{which} exited with {proc.returncode} (log: {work / (which + '.log')})")
            series.append(minute_of(minute, start, watcher, driver, proc.pid))
            m = series[-1]
            print(
                f"[soak/{which}] minute {minute + 1}: {m.pods_per_s:.1f} pods/s, p99 {_s(m.p99_s)} s, "
                f"RSS {m.rss_mib:.0f} MiB, {m.threads} threads",
                file=sys.stderr,
                flush=True,
            )
        stop.set()
        churner.join(60)
        watcher.watch.stop()
    finally:
        stop.set()
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        plane.stop()


def minute_of(minute: int, start: float, watcher: BindWatcher, driver: ChurnDriver, pid: int) -> Minute:
    """What happened in ``minute`` (0-based, from ``start``), read from the watcher and the churn."""
    lo, hi = start + 60.0 * minute, start + 60.0 * (minute + 1)
    with watcher._lock:
        bound = [(name, at) for name, at in watcher.bound_at.items() if lo <= at < hi]
    latencies = [at - driver.created_at[name] for name, at in bound if name in driver.created_at]
    rss, threads = proc_status(pid)
    return Minute(
        minute + 1,
        len(bound),
        p99(latencies),
        rss,
        threads,
        sum(1 for at in list(driver.deleted_pending) if lo <= at < hi),
        latencies,
    )


# -- the verdict -------------------------------------------------------------------------------------------
def warmup_minutes(minutes: int) -> int:
    """The minutes left out of the verdict: a sixth of the run, at most five."""
    return min(5, minutes // 6)


def growth(values: Sequence[float]) -> tuple[float, float, float]:
    """(first, last, percent): the median of the first and of the last :data:`ENDS` values, and the growth."""
    n = max(1, min(ENDS, len(values) // 2))
    first, last = statistics.median(values[:n]), statistics.median(values[-n:])
    return first, last, (last - first) / first * 100.0 if first else 0.0


def verdict(which: str, series: Sequence[Minute]) -> str:
    """One line: RSS and thread growth after the warm-up, and the drift of the p99 latency."""
    if not series:
        return f"{which}: no minute measured"
    steady = list(series[warmup_minutes(len(series)) :])
    rss0, rss1, rss_growth = growth([m.rss_mib for m in steady])
    thr0, thr1, thr_growth = growth([float(m.threads) for m in steady])
    half = max(1, len(steady) // 2)
    early = p99([v for m in steady[:half] for v in m.latencies])
    late = p99([v for m in steady[half:] for v in m.latencies]) if len(steady) > 1 else early
    drift = f"{(late / early - 1) * 100:+.0f} %" if early and late else "n/a"
    ok = rss_growth < STEADY_GROWTH and thr_growth < STEADY_GROWTH
    pending = sum(m.deleted_pending for m in steady)
    return (
        f"{which}: RSS {rss0:.0f} -> {rss1:.0f} MiB ({rss_growth:+.1f} %), threads {thr0:.0f} -> {thr1:.0f} "
        f"({thr_growth:+.1f} %) after {len(series) - len(steady)} min of warm-up: "
        f"{'steady' if ok else 'GROWING'} (threshold {STEADY_GROWTH:.0f} %); "
        f"p99 latency {_s(early)} s -> {_s(late)} s ({drift}); {pending} pods deleted before they were bound"
    )


def format_series(runs: dict[str, list[Minute]]) -> str:
    names = [w for w in SCHEDULERS if w in runs]
    header = ["minute"] + [f"{w} {col}" for w in names for col in ("pods/s", "p99 s", "RSS MiB", "threads")]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for minute in range(max((len(runs[w]) for w in names), default=0)):
        cells = [str(minute + 1)]
        for w in names:
            m = runs[w][minute] if minute < len(runs[w]) else None
            cells += (
                ["-"] * 4 if m is None else [f"{m.pods_per_s:.1f}", _s(m.p99_s), f"{m.rss_mib:.0f}", str(m.threads)]
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(minutes: int, churn: Churn | None = None) -> int:
    churn = churn or Churn()
    bin_dir = build_binaries()
    runs: dict[str, list[Minute]] = {which: [] for which in SCHEDULERS}
    errors: dict[str, str] = {}

    def one(which: str) -> None:
        try:
            soak_one(which, minutes, churn, bin_dir, runs[which])
        except Exception as err:
            errors[which] = str(err)
            print(f"[soak/{which}] failed: {err}", file=sys.stderr, flush=True)

    threads = [threading.Thread(target=one, args=(which,), name=f"soak-{which}") for which in SCHEDULERS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(
        f"Soak: {minutes} min, {churn.pods_per_s:g} pods/s created, each deleted after {churn.pod_lifetime_s:g} s, "
        f"{churn.nodes} nodes, one replaced every {churn.node_period_s:g} s\n"
    )
    print(format_series(runs))
    print()
    for which in SCHEDULERS:
        print(
            f"verdict {which}: FAILED: {errors[which]}" if which in errors else f"verdict {verdict(which, runs[which])}"
        )
    return 1 if errors else 0
