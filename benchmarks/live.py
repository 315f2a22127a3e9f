"""``python -m benchmarks --live``: kubesched ``run`` and upstream kube-scheduler on a real API server.

For each case and scheduler, on a fresh etcd + kube-apiserver (testing/controlplane): ``initial`` nodes
and pods are created before the scheduler starts, then the scheduler starts and ``nodes`` more nodes
and ``pods`` more pods are created while it runs (16 client threads). "growing" is the issue's case
(1000 nodes and 5000 pods, then 5000 nodes and 10,000 pods); "backlog" has 3000 nodes and 3000 pending
pods before the start and nothing after, so it times scheduling and binding without the object
creator. Both schedulers get the same objects in the same order and the same clientConnection
qps/burst (5000/5000, as scheduler_perf); they run with the credentials of system:kube-scheduler,
leader election off. Measured:

- pods/s: every pod (initial and later) over the time from the scheduler's start to the last binding;
- p50 / p99 creation-to-bound latency of the pods created after the start (creation = the create
  request returned; bound = a watch saw spec.nodeName set);
- the scheduler's peak RSS and the CPU seconds it used up to the last binding (sampled from /proc every
  0.2 s).

Everything (API server, etcd, the object creator, the watcher and the scheduler) shares one machine, so
the figures compare the two schedulers under the same load rather than measure either alone.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubesched.live.cluster import KubeCluster
from kubesched.live.connection import ConnectionOptions, RestClient
from testing.controlplane.fixture import ControlPlane, build_binaries

REPO = Path(__file__).resolve().parent.parent
QPS = 5000
CREATORS = 16


@dataclass(frozen=True)
class LiveCase:
    name: str
    initial_nodes: int
    initial_pods: int
    nodes: int
    pods: int


#: The issue's case (a cluster growing while the scheduler runs), then a backlog: every pod pending
#: before the scheduler starts, which measures scheduling and binding alone, without the object creator.
FULL = (LiveCase("growing", 1000, 5000, 5000, 10_000), LiveCase("backlog", 3000, 3000, 0, 0))
QUICK = (LiveCase("growing", 100, 500, 400, 1000), LiveCase("backlog", 500, 1000, 0, 0))


def node(i: int) -> dict:
    name = f"node-{i:05d}"
    res = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{i % 3}"},
        },
        "status": {"capacity": res, "allocatable": res, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def pod(i: int) -> dict:
    # scheduler_perf's pod-default.yaml: one pause container requesting 100m cpu and 500Mi memory.
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i:05d}", "namespace": "default"},
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


class BindWatcher:
    """Records when each pod is first seen bound, through a watch (the same informer code)."""

    def __init__(self, cluster: KubeCluster) -> None:
        self.bound_at: dict[str, float] = {}
        self._lock = threading.Lock()
        self.watch = cluster.watch(["Pod"], self._on_event)

    def _on_event(self, event: Any) -> None:
        if event.type != "DELETED" and (event.obj.get("spec") or {}).get("nodeName"):
            name = event.obj["metadata"]["name"]
            with self._lock:
                self.bound_at.setdefault(name, time.monotonic())

    def count(self) -> int:
        with self._lock:
            return len(self.bound_at)


def create_all(cluster: KubeCluster, objects: list[dict], created_at: dict[str, float] | None = None) -> None:
    def one(obj: dict) -> None:
        cluster.create(obj)
        if created_at is not None:
            created_at[obj["metadata"]["name"]] = time.monotonic()

    with ThreadPoolExecutor(CREATORS) as pool:
        for future in [pool.submit(one, o) for o in objects]:
            future.result()


def rss_sampler(pid: int, stop: threading.Event, peak: list[int], cpu: list[float]) -> None:
    """Peak RSS (KiB) into ``peak[0]`` and CPU seconds so far (user + system) into ``cpu[0]``."""
    tick = os.sysconf("SC_CLK_TCK")
    while not stop.wait(0.2):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        peak[0] = max(peak[0], int(line.split()[1]))
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu[0] = (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            return


def scheduler_command(which: str, plane: ControlPlane, work: Path) -> list[str]:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(plane.scheduler_kubeconfig), "qps": QPS, "burst": QPS},
        "leaderElection": {"leaderElect": False},
    }
    path = work / f"{which}-config.yaml"
    path.write_text(yaml.safe_dump(config))
    if which == "kubesched":
        return [sys.executable, "-m", "kubesched", "run", "--config", str(path), "--secure-port", "0"]
    return [str(plane.bin_dir / "kube-scheduler"), "--config", str(path), "--secure-port", "0", "--v", "0"]


def measure(which: str, case: LiveCase, bin_dir: Path, timeout: float) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"kubesched-live-{which}-"))
    plane = ControlPlane.start(work_dir=work / "plane", bin_dir=bin_dir)
    proc: subprocess.Popen | None = None
    try:
        cluster = KubeCluster(RestClient(ConnectionOptions(kubeconfig=str(plane.admin_kubeconfig), qps=-1)))
        total_nodes, total_pods = case.initial_nodes + case.nodes, case.initial_pods + case.pods
        print(
            f"[{case.name}/{which}] creating {case.initial_nodes} nodes and {case.initial_pods} pods ...",
            file=sys.stderr,
            flush=True,
        )
        create_all(cluster, [node(i) for i in range(case.initial_nodes)])
        create_all(cluster, [pod(i) for i in range(case.initial_pods)])
        watcher = BindWatcher(cluster)
        watcher.watch.wait_for_sync(120)
        log = open(work / f"{which}.log", "w")  # noqa: SIM115 - closed below
        env = dict(os.environ, PYTHONPATH=str(REPO))
        start = time.monotonic()
        proc = subprocess.Popen(
            scheduler_command(which, plane, work), stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO
        )
        stop, peak, cpu = threading.Event(), [0], [0.0]
        threading.Thread(target=rss_sampler, args=(proc.pid, stop, peak, cpu), daemon=True).start()
        print(
            f"[{case.name}/{which}] started; creating {case.nodes} nodes and {case.pods} pods ...",
            file=sys.stderr,
            flush=True,
        )
        created_at: dict[str, float] = {}
        later_nodes = [node(i) for i in range(case.initial_nodes, total_nodes)]
        later_pods = [pod(i) for i in range(case.initial_pods, total_pods)]
        create_all(cluster, [o for pair in _interleave(later_nodes, later_pods) for o in pair], created_at)
        deadline = time.monotonic() + timeout
        while watcher.count() < total_pods and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        stop.set()
        bound = watcher.count()
        if bound < total_pods:
            raise RuntimeError(f"{which}: only {bound}/{total_pods} pods bound (log: {work / (which + '.log')})")
        last = max(watcher.bound_at.values())
        latencies = sorted(watcher.bound_at[n] - t for n, t in created_at.items() if n.startswith("pod-"))
        watcher.watch.stop()
        return {
            "case": case.name,
            "scheduler": which,
            "nodes": total_nodes,
            "pods": total_pods,
            "pods_per_s": total_pods / (last - start),
            "wall_s": last - start,
            "p50_s": statistics.median(latencies) if latencies else None,
            "p99_s": latencies[int(0.99 * (len(latencies) - 1))] if latencies else None,
            "rss_mib": peak[0] / 1024,
            "cpu_s": cpu[0],
        }
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        plane.stop()


def _interleave(nodes: list[dict], pods: list[dict]) -> list[tuple[dict, ...]]:
    """Nodes and pods in one stream, the nodes spread through it (as a growing cluster would see them)."""
    ratio = max(len(pods) // max(len(nodes), 1), 1)
    out: list[tuple[dict, ...]] = []
    pods_iter = iter(pods)
    for n in nodes:
        out.append((n, *[p for _, p in zip(range(ratio), pods_iter, strict=False)]))
    out.extend((p,) for p in pods_iter)
    return out


COLUMNS = (
    "case",
    "scheduler",
    "nodes",
    "pods",
    "pods/s",
    "start→last bound s",
    "p50 s",
    "p99 s",
    "peak RSS MiB",
    "CPU s",
)


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['scheduler']} | FAILED: {r['error']} |")
            continue
        p50 = "-" if r["p50_s"] is None else f"{r['p50_s']:.2f}"
        p99 = "-" if r["p99_s"] is None else f"{r['p99_s']:.2f}"
        lines.append(
            f"| {r['case']} | {r['scheduler']} | {r['nodes']} | {r['pods']} | {r['pods_per_s']:.1f} "
            f"| {r['wall_s']:.1f} | {p50} | {p99} | {r['rss_mib']:.0f} | {r['cpu_s']:.1f} |"
        )
    return "\n".join(lines)


def compare(rows: list[dict[str, Any]]) -> list[str]:
    """kubesched against kube-scheduler in each round of each case: p50, p99 (lower is better) and pods/s."""
    lines = []
    by_round: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        if "error" not in r:
            by_round.setdefault((r["case"], r.get("round", 1)), {})[r["scheduler"]] = r
    for (case, round_), pair in by_round.items():
        ours, theirs = pair.get("kubesched"), pair.get("kube-scheduler")
        if ours is None or theirs is None or not theirs["p50_s"] or not theirs["p99_s"]:
            continue
        lines.append(
            f"{case} round {round_}: p50 {ours['p50_s'] / theirs['p50_s']:.2f}x, "
            f"p99 {ours['p99_s'] / theirs['p99_s']:.2f}x, "
            f"pods/s {ours['pods_per_s'] / theirs['pods_per_s']:.2f}x kube-scheduler's"
        )
    return lines


def main(quick: bool = False, timeout: float = 1800.0, only: str | None = None, repeat: int = 1) -> int:
    """Every case (or those whose name contains ``only``), ``repeat`` rounds of both schedulers."""
    bin_dir = build_binaries()
    # As an installed package has it: a scheduler started from this tree (with PYTHONDONTWRITEBYTECODE
    # set) would otherwise compile every module it imports at each start, and time that.
    compileall.compile_dir(REPO / "kubesched", quiet=1)
    rows: list[dict[str, Any]] = []
    cases = [c for c in (QUICK if quick else FULL) if only is None or only in c.name]
    for round_ in range(1, repeat + 1):
        for case in cases:
            for which in ("kube-scheduler", "kubesched"):
                try:
                    row = measure(which, case, bin_dir, timeout)
                except Exception as err:
                    print(f"[{case.name}/{which}] failed: {err}", file=sys.stderr)
                    row = {"case": case.name, "scheduler": which, "error": str(err)}
                rows.append({**row, "round": round_})
                print(format_table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(format_table(rows))
    compared = compare(rows)
    if compared:
        print("\nkubesched against kube-scheduler, round by round:")
        print("\n".join(f"  {line}" for line in compared))
    return 0 if all("error" not in r for r in rows) else 1
