"""``python -m benchmarks.dra [--quick] [--only PATTERN] [--skip-kubesched] [--skip-upstream]``: scheduler_perf's
DRA workloads, kubesched and upstream kube-scheduler v1.34 in one run on one machine.

For each case (:mod:`benchmarks.dra_workloads`), on the same objects:

- **kubesched**: in a process of its own, ``kubesched.simulate`` with the measured pods in a burst
  (:mod:`benchmarks.run`: the scenario loaded untimed, then the run timed; the measured pods are created
  as the run starts, so the embedded resourceclaim controller makes their template claims in the timed
  part).
- **kube-scheduler**: a fresh etcd + kube-apiserver (testing/controlplane); the nodes, their slices, the
  class, the init load (claims allocated through the status subresource, pods bound) and the measured
  pods are created, and kube-controller-manager's resourceclaim controller makes the measured pods'
  claims and reserves the init ones; once every measured pod has its claims, kube-scheduler starts
  (clientConnection qps/burst 5000, as scheduler_perf) and the rate is the measured pods over the time
  from its start to the last binding, start-up included (as ``python -m benchmarks --live``).

The API server, etcd and the controller share the machine with kube-scheduler, so its row measures it
under that load; kubesched's row has no API server at all. Compare rows of one run only.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.dra_workloads import DRA_CASES, dra_objects, is_measured
from benchmarks.live import BindWatcher, create_all, rss_sampler, scheduler_command
from benchmarks.run import BenchmarkError, run_in_subprocess
from benchmarks.storage_workloads import SimCase
from kubesched.live.cluster import KubeCluster
from kubesched.live.connection import ConnectionOptions, RestClient
from kubesched.scenario.generate.perf_dra import INIT_NS, TEST_NS
from testing.controlplane.components import start_kube_controller_manager
from testing.controlplane.fixture import ControlPlane, build_binaries

COLUMNS = ("case", "scheduler", "nodes", "existing", "measured", "pods/s", "wall s", "CPU s", "peak MiB")
QPS = 5000


def measure_kubesched(case: SimCase, timeout: float) -> dict[str, Any]:
    row = run_in_subprocess(case.name, timeout=timeout)
    return {**row, "scheduler": "kubesched (simulate)", "rss_mib": row["peak_mib"]}


def _setup(cluster: KubeCluster, objects: list[dict[str, Any]]) -> None:
    """Everything but the measured pods, in an order the API server accepts; statuses (nodes aside,
    which keep theirs on create) through the status subresource."""
    create_all(
        cluster, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in (INIT_NS, TEST_NS)]
    )
    for kinds in (("Node", "ResourceSlice", "DeviceClass"), ("ResourceClaim", "ResourceClaimTemplate"), ("Pod",)):
        batch = [o for o in objects if o["kind"] in kinds and not is_measured(o)]
        create_all(cluster, [{k: v for k, v in o.items() if k != "status" or o["kind"] == "Node"} for o in batch])
        for claim in (o for o in batch if o["kind"] == "ResourceClaim" and o.get("status")):
            meta = claim["metadata"]
            current = cluster.get("ResourceClaim", meta["namespace"], meta["name"])
            cluster.update_status({**current, "status": claim["status"]})


def _wait_for_claims(cluster: KubeCluster, pods: list[dict[str, Any]], timeout: float) -> None:
    """Until the resourceclaim controller has made every template claim of the measured pods and reserved
    every init claim for its bound pods, so that none of its writes falls in the measured time."""
    wanted = {
        p["metadata"]["name"]
        for p in pods
        if any("resourceClaimTemplateName" in e for e in p["spec"]["resourceClaims"])
    }
    deadline = time.monotonic() + timeout
    while True:
        listed = cluster.list("Pod", TEST_NS)[0]
        wanted -= {p["metadata"]["name"] for p in listed if (p.get("status") or {}).get("resourceClaimStatuses")}
        unreserved = [
            c for c in cluster.list("ResourceClaim", INIT_NS)[0] if not (c.get("status") or {}).get("reservedFor")
        ]
        if not wanted and not unreserved:
            return
        if time.monotonic() > deadline:
            raise BenchmarkError(
                f"after {timeout:.0f}s, {len(wanted)} measured pods are without their claims and "
                f"{len(unreserved)} init claims unreserved"
            )
        time.sleep(0.5)


def measure_upstream(case: SimCase, bin_dir: Path, timeout: float) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="kubesched-dra-"))
    plane = ControlPlane.start(work_dir=work / "plane", bin_dir=bin_dir)
    procs: list[subprocess.Popen] = []
    try:
        cluster = KubeCluster(RestClient(ConnectionOptions(kubeconfig=str(plane.admin_kubeconfig), qps=-1)))
        objects = list(dra_objects(case))
        measured = [o for o in objects if is_measured(o)]
        print(f"[{case.name}/kube-scheduler] creating {len(objects)} objects ...", file=sys.stderr, flush=True)
        _setup(cluster, objects)
        procs.append(start_kube_controller_manager(plane, work, controllers=("resourceclaim-controller",), qps=QPS))
        create_all(cluster, measured)
        _wait_for_claims(cluster, measured, timeout)
        watcher = BindWatcher(cluster)
        watcher.watch.wait_for_sync(120)
        log = open(work / "kube-scheduler.log", "w")  # noqa: SIM115 - closed with the process
        start = time.monotonic()
        proc = subprocess.Popen(scheduler_command("kube-scheduler", plane, work), stdout=log, stderr=subprocess.STDOUT)
        procs.append(proc)
        stop, peak, cpu = threading.Event(), [0], [0.0]
        threading.Thread(target=rss_sampler, args=(proc.pid, stop, peak, cpu), daemon=True).start()
        names = [p["metadata"]["name"] for p in measured]
        deadline = time.monotonic() + timeout
        while (missing := [n for n in names if n not in watcher.bound_at]) and time.monotonic() < deadline:
            time.sleep(0.2)
        stop.set()
        watcher.watch.stop()
        if missing:
            raise BenchmarkError(
                f"{len(missing)} of {len(names)} measured pods not bound by kube-scheduler "
                f"(log: {work / 'kube-scheduler.log'})"
            )
        wall = max(watcher.bound_at[n] for n in names) - start
        return {
            "case": case.name,
            "scheduler": "kube-scheduler",
            "nodes": case.nodes,
            "existing": case.existing,
            "measured": case.measured,
            "pods_per_s": case.measured / wall,
            "wall_s": wall,
            "cpu_s": cpu[0],
            "rss_mib": peak[0] / 1024,
        }
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        plane.stop()


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['scheduler']} | FAILED: {r['error']} |")
            continue
        lines.append(
            f"| {r['case']} | {r['scheduler']} | {r['nodes']} | {r['existing']} | {r['measured']} "
            f"| {r['pods_per_s']:.1f} | {r['wall_s']:.2f} | {r.get('cpu_s', 0.0):.1f} | {r['rss_mib']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.dra", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="the reduced sizes")
    parser.add_argument("--only", metavar="PATTERN", help="cases whose name matches (a glob, or a substring)")
    parser.add_argument("--skip-kubesched", action="store_true", help="run upstream only")
    parser.add_argument("--skip-upstream", action="store_true", help="run kubesched only")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per case and scheduler")
    args = parser.parse_args(argv)
    pattern = args.only if args.only and any(ch in args.only for ch in "*?[") else f"*{args.only or ''}*"
    cases = [c for c in DRA_CASES.values() if c.quick == args.quick and fnmatch.fnmatch(c.name, pattern)]
    if not cases:
        print(f"no case matches {args.only!r}; known: {', '.join(DRA_CASES)}", file=sys.stderr)
        return 2
    bin_dir = None if args.skip_upstream else build_binaries()
    rows: list[dict[str, Any]] = []
    for case in cases:
        runs: list[tuple[str, Callable[[], dict[str, Any]]]] = []
        if not args.skip_kubesched:
            runs.append(("kubesched (simulate)", partial(measure_kubesched, case, args.timeout)))
        if bin_dir is not None:
            runs.append(("kube-scheduler", partial(measure_upstream, case, bin_dir, args.timeout)))
        for which, run in runs:
            print(f"running {case.name} with {which} ...", file=sys.stderr, flush=True)
            try:
                rows.append(run())
            except (BenchmarkError, subprocess.TimeoutExpired) as err:
                print(f"[{case.name}/{which}] failed: {err}", file=sys.stderr)
                rows.append({"case": case.name, "scheduler": which, "error": str(err).splitlines()[0][:200]})
    print(format_table(rows))
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
