"""Timed simulations at scale: Poisson arrivals with lifetimes, through ``kubesched.simulate`` and the CLI.

``python -m benchmarks.arrivals [--only PATTERN] [--quick]`` runs each case in its own process (so peak
memory is per case) and prints a Markdown table. A case's scenario is generated first (not timed) with
:mod:`kubesched.scenario.generate.poisson`: nodes of 8 cpu / 32Gi, pods of 500m / 1 / 2 cpu (weights 1, 1, 0.5),
lifetimes exponential with a mean of one hour, arriving at the rate that keeps 70 % of the cpu requested
at steady state. What is timed is the whole user call, loading included, with default recording:

* ``api``: ``kubesched.simulate(folder)`` on the generated scenario folder;
* ``cli``: ``kubesched simulate folder`` (the CLI's ``main`` in this process, summary printed);
* ``stream``: ``kubesched.simulate(nodes, arrivals=poisson_pods(...))``, pods read lazily as they arrive.

Targets: 200,000 arrivals on 5000 nodes in at most 5 minutes and 2 GB peak RSS; the 1,000,000-arrival
case (``--only 1m``) is run once, for the record, and is not part of the default set.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import io
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.run import cpu_seconds, peak_rss_mib

_REPO_ROOT = Path(__file__).resolve().parent.parent
COLUMNS = (
    "case",
    "nodes",
    "arrivals",
    "path",
    "wall s",
    "cpu s",
    "arrivals/s",
    "peak MiB",
    "virtual h",
    "cpu mean",
    "cpu peak",
    "p99 bind s",
)
#: Seconds and MiB a row must stay within.
TARGETS = {"arrivals-200k-5000-api": (300.0, 2048.0), "arrivals-200k-5000-cli": (300.0, 2048.0)}


@dataclass(frozen=True)
class ArrivalCase:
    name: str
    nodes: int
    arrivals: int
    path: str  # api | cli | stream
    quick: bool = False
    default: bool = True


CASES = {
    c.name: c
    for c in (
        ArrivalCase("arrivals-quick-api", 200, 3000, "api", quick=True),
        ArrivalCase("arrivals-quick-cli", 200, 3000, "cli", quick=True),
        ArrivalCase("arrivals-quick-stream", 200, 3000, "stream", quick=True),
        ArrivalCase("arrivals-200k-5000-api", 5000, 200_000, "api"),
        ArrivalCase("arrivals-200k-5000-cli", 5000, 200_000, "cli"),
        ArrivalCase("arrivals-1m-5000-stream", 5000, 1_000_000, "stream", default=False),
        # How the cost grows with the number of arrivals on the same 5000 nodes (run when named).
        ArrivalCase("arrivals-20k-5000-stream", 5000, 20_000, "stream", default=False),
        ArrivalCase("arrivals-100k-5000-stream", 5000, 100_000, "stream", default=False),
    )
}


def _shapes() -> tuple[Any, Any, Any]:
    from kubesched.scenario.generate.lifetimes import parse_distribution
    from kubesched.scenario.generate.poisson import NodeShape, PodShape

    return NodeShape, PodShape, parse_distribution


def scenario(case: ArrivalCase, folder: Path, *, pods: bool) -> float:
    """Write the case's nodes (and pods, unless streamed) under ``folder``; returns the arrival rate."""
    from kubesched.scenario.generate.poisson import node_objects, poisson_pods, rate_for
    from kubesched.scenario.generate.scenario import write_scenario

    node_shape, pod_shape, parse_distribution = _shapes()
    nodes = [node_shape(case.nodes, cpu="8", memory="32Gi")]
    shapes = [pod_shape("500m", "1Gi"), pod_shape("1", "2Gi"), pod_shape("2", "4Gi", 0.5)]
    lifetime = parse_distribution("exp:1h")
    rate = rate_for(0.7, nodes, shapes, lifetime)
    objects: Any = node_objects(nodes)
    if pods:
        import itertools

        objects = itertools.chain(objects, poisson_pods(case.arrivals, rate, lifetime, shapes, seed=1))
    write_scenario(folder, objects)
    return rate


def measure(case: ArrivalCase) -> dict[str, Any]:
    """Generate the scenario (untimed), then time the user call; returns the row."""
    from kubesched.app.cli import main as cli_main
    from kubesched.scenario.generate.poisson import poisson_pods
    from kubesched.sim.simulate import simulate

    _, pod_shape, parse_distribution = _shapes()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rate = scenario(case, folder, pods=case.path != "stream")
        start, cpu = time.perf_counter(), cpu_seconds()
        result: Any = None
        if case.path == "api":
            result = simulate(folder)
        elif case.path == "stream":
            shapes = [pod_shape("500m", "1Gi"), pod_shape("1", "2Gi"), pod_shape("2", "4Gi", 0.5)]
            pods = poisson_pods(case.arrivals, rate, parse_distribution("exp:1h"), shapes, seed=1)
            result = simulate(folder, arrivals=_logged(pods, start))
        else:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = cli_main(["simulate", str(folder)])
            if status != 0:
                raise RuntimeError(f"kubesched simulate exited {status}")
        wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    row: dict[str, Any] = {
        "case": case.name,
        "nodes": case.nodes,
        "arrivals": case.arrivals,
        "path": case.path,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mib": peak_rss_mib(),
    }
    if result is not None:
        scheduled = sum(1 for n in result.final.values() if n)
        assert result.series is not None
        row.update(
            virtual_h=result.virtual_seconds / 3600,
            scheduled=scheduled,
            cpu_mean=result.series.utilisation().get("cpu", {}).get("mean", 0.0),
            cpu_peak=result.series.utilisation().get("cpu", {}).get("peak", 0.0),
            p99=result.latency().get("p99", 0.0),
        )
        if scheduled < case.arrivals * 0.99:
            raise RuntimeError(f"{case.name}: only {scheduled} of {case.arrivals} pods were bound")
    return row


def _logged(pods: Any, start: float, every: int = 50_000) -> Any:
    """Pass ``pods`` through, noting progress on stderr (long runs on a busy machine)."""
    for n, pod in enumerate(pods, 1):
        if n % every == 0:
            print(
                f"{n} arrivals read: wall {time.perf_counter() - start:.0f} s, cpu {cpu_seconds():.0f} s, "
                f"peak {peak_rss_mib():.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
        yield pod


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        if "error" in r:
            cells = [r["case"], r["nodes"], r["arrivals"], r["path"], "FAILED", *["-"] * 7]
        else:
            cells = [
                r["case"],
                r["nodes"],
                r["arrivals"],
                r["path"],
                f"{r['wall_s']:.1f}",
                f"{r['cpu_s']:.1f}",
                f"{r['arrivals'] / r['wall_s']:.0f}",
                f"{r['peak_mib']:.0f}",
                f"{r['virtual_h']:.1f}" if "virtual_h" in r else "-",
                f"{r['cpu_mean']:.0%}" if "cpu_mean" in r else "-",
                f"{r['cpu_peak']:.0%}" if "cpu_peak" in r else "-",
                f"{r['p99']:.2f}" if "p99" in r else "-",
            ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    for r in rows:
        if r["case"] in TARGETS and "error" not in r:
            seconds, mib = TARGETS[r["case"]]
            ok = r["wall_s"] <= seconds and r["peak_mib"] <= mib
            lines.append(
                f"\n{r['case']}: {r['wall_s']:.0f} s (target <= {seconds:.0f}), {r['peak_mib']:.0f} MiB "
                f"(target <= {mib:.0f}): {'met' if ok else 'NOT met'}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.arrivals", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", metavar="PATTERN", help="run only cases whose name matches (also non-default)")
    parser.add_argument("--quick", action="store_true", help="run the reduced-size cases")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in this process (JSON out)
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(measure(CASES[args.case])))
        return 0
    if args.only:
        pattern = args.only if any(ch in args.only for ch in "*?[") else f"*{args.only}*"
        chosen = [c for c in CASES.values() if fnmatch.fnmatch(c.name, pattern)]
    else:
        chosen = [c for c in CASES.values() if c.quick == args.quick and c.default]
    rows = []
    failed = False
    for case in chosen:
        print(f"running {case.name} ...", file=sys.stderr, flush=True)
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.arrivals", "--case", case.name],
            capture_output=True,
            text=True,
            check=False,
            cwd=_REPO_ROOT,
        )
        if proc.returncode != 0 or not proc.stdout.strip():
            failed = True
            print(proc.stderr.strip()[-2000:], file=sys.stderr)
            rows.append(
                {
                    "case": case.name,
                    "nodes": case.nodes,
                    "arrivals": case.arrivals,
                    "path": case.path,
                    "error": proc.stderr.strip()[-200:],
                }
            )
            continue
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(format_table(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
