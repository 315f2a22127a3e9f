"""``python -m benchmarks.sweep [--seeds N] [--repeat N]``: what the sweep engines gain over one process.

One sweep (the example cluster with its workloads under the default configuration at two
NodeResourcesFit weights, ``--seeds`` seeds each) runs as a user runs it, ``kubesched sweep`` in a
subprocess, on each engine in turn: ``--workers 1`` (every run in the command's own process, one after
the other), the default local process pool (one process per core), and a dask.distributed cluster on
loopback with one single-threaded worker process per core (started before the timer; the command gets
``--address``). Each engine's wall time is the fastest of ``--repeat`` rounds, and the table sets it
against the sequential run of the same round. The three must print the same comparison: a sweep whose
numbers depend on the engine fails the benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "examples" / "cluster"
GRID = "NodeResourcesFit.weight=1,5"


def _sweep(seeds: int, extra: list[str]) -> tuple[float, Any, int]:
    """Wall seconds, the printed comparison and the number of runs of one ``kubesched sweep`` command."""
    command = [
        sys.executable,
        "-m",
        "kubesched",
        "sweep",
        str(SCENARIO),
        "--grid",
        GRID,
        "--seeds",
        str(seeds),
        "-o",
        "json",
        *extra,
    ]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"benchmarks.sweep: {' '.join(command[2:])} failed:\n{done.stderr}")
    document = json.loads(done.stdout)
    return wall, document["rows"], len(document["runs"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8, help="seeds per (scenario, configuration) (default 8)")
    parser.add_argument("--repeat", type=int, default=2, help="rounds; each engine keeps its fastest (default 2)")
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    distributed: Any
    try:
        import distributed
    except ImportError:  # the distributed extra is not installed: the local engines only
        distributed = None
    best: dict[str, float] = {}
    rows: dict[str, Any] = {}
    runs = 0
    cluster = None
    if distributed is not None:
        cluster = distributed.LocalCluster(
            n_workers=cores,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            protocol="tcp",
        )
    try:
        engines: list[tuple[str, list[str]]] = [
            ("sequential (--workers 1)", ["--workers", "1"]),
            (f"process pool ({cores} processes)", []),
        ]
        if cluster is not None:
            engines.append((f"dask.distributed ({cores} workers)", ["--address", cluster.scheduler_address]))
        for _ in range(args.repeat):
            for name, extra in engines:
                wall, table, runs = _sweep(args.seeds, extra)
                best[name] = min(wall, best.get(name, wall))
                rows.setdefault(name, table)
    finally:
        if cluster is not None:
            cluster.close()
    first = next(iter(rows.values()))
    print(
        f"kubesched sweep {SCENARIO.relative_to(REPO)} --grid {GRID} --seeds {args.seeds}: {runs} runs, "
        f"{cores} cores, fastest of {args.repeat}"
    )
    print("| engine | wall s | runs/s | speed-up |")
    print("|---|---|---|---|")
    sequential = best[engines[0][0]]
    for name, _ in engines:
        print(f"| {name} | {best[name]:.1f} | {runs / best[name]:.2f} | {sequential / best[name]:.2f}x |")
    if any(table != first for table in rows.values()):
        print("benchmarks.sweep: the engines printed different comparisons", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
