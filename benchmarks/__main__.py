"""``python -m benchmarks [--only PATTERN] [--quick] [--repeat N] [--profile CASE [--measured N]] [--live]``

``--live --soak MINUTES`` churns pods and nodes against kubesched and kube-scheduler for that long
(:mod:`benchmarks.soak`).

Runs each case in its own subprocess (so peak memory is per case) and prints a Markdown table.
``--quick`` runs the reduced cases only; ``--only`` keeps the cases whose name matches PATTERN (a glob,
or a substring when it has no wildcard); ``--repeat N`` runs them N rounds and keeps each case's fastest
run; ``--profile`` runs one case in this process under cProfile and prints the top 30 functions by
cumulative time (``--sort tottime``: by time spent in the function itself).

Rows whose path starts with "simulate" time a whole ``kubesched.simulate()`` call, rows "core+…" the core
loop with a recorder attached (see :mod:`benchmarks.workloads`); after the table, each is set against the
core row of the same workload and size from this run, with the targets the project holds them to.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.dra_workloads import is_dra
from benchmarks.run import ALL_CASES, BenchmarkError, get_case, profile_case, run_in_subprocess
from benchmarks.storage_workloads import SimCase
from benchmarks.workloads import EMULATED_VERSION_ENV, Case, emulated_features
from kubesched.config.features import check_version

COLUMNS = ("workload", "nodes", "existing", "measured", "config", "path", "pods/s", "wall s", "pods/cpu-s", "peak MiB")

#: What a user path must reach: a share of the core loop's pods/s in the same run, and a peak memory (MiB).
TARGETS = {"basic-5000-default-simulate": (0.70, 1024.0), "basic-5000-default-simulate-trace": (0.50, 1024.0)}


def select(cases: Iterable[Case | SimCase], *, only: str | None, quick: bool) -> list[Case | SimCase]:
    """The cases to run: the quick ones or the full-size ones, filtered by name (the cases left out of
    the default set, such as the scale series, only when ``only`` names them)."""
    chosen = [c for c in cases if c.quick == quick]
    if only:
        pattern = only if any(ch in only for ch in "*?[") else f"*{only}*"
        return [c for c in chosen if fnmatch.fnmatch(c.name, pattern)]
    return [c for c in chosen if c.default]


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of results; a failed case shows its error in place of numbers."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        path = r.get("path", "core")
        if "error" in r:
            cells = [
                r["workload"],
                r["nodes"],
                r["existing"],
                r["measured"],
                r["config"],
                path,
                "FAILED",
                "-",
                "-",
                "-",
            ]
        else:
            cells = [
                r["workload"],
                r["nodes"],
                r["existing"],
                r["measured"],
                r["config"],
                path,
                f"{r['pods_per_s']:.1f}",
                f"{r['wall_s']:.2f}",
                f"{r.get('pods_per_cpu_s', 0.0):.1f}",
                f"{r['peak_mib']:.0f}",
            ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def compare_user_paths(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per user-path row: its pods/s as a share of the core row's of the same case in this run."""
    core = {_size(r): r for r in rows if r.get("path", "core") == "core" and "error" not in r}
    # Recording rows (core+...) are set against the plain core loop too: their share is recording's cost.
    lines = []
    for r in rows:
        path = r.get("path", "core")
        if path in ("core", "sim") or "error" in r:
            continue
        base = core.get(_size(r))
        if base is None:
            lines.append(f"{r['case']}: {r['pods_per_s']:.1f} pods/s (no core row of this size in this run)")
            continue
        share = r["pods_per_s"] / base["pods_per_s"]
        line = f"{r['case']}: {share:.0%} of the core loop's {base['pods_per_s']:.1f} pods/s"
        if r.get("cpu_s") and base.get("cpu_s"):
            # On a shared machine wall time swings with the load; cpu seconds much less.
            line += f" [{base['cpu_s'] / r['cpu_s']:.0%} by cpu seconds]"
        if r["case"] in TARGETS:
            target, peak = TARGETS[r["case"]]
            line += (
                f" (target >= {target:.0%}: {_met(share >= target)}); peak {r['peak_mib']:.0f} MiB "
                f"(target <= {peak:.0f}: {_met(r['peak_mib'] <= peak)})"
            )
        lines.append(line)
    return lines


def better(kept: dict[str, Any] | None, row: dict[str, Any]) -> dict[str, Any]:
    """Of two runs of one case, the faster one; a failed run wins over nothing only."""
    if kept is None or "error" in kept:
        return row if kept is None or "error" not in row else kept
    if "error" in row:
        return kept
    return row if row["pods_per_s"] > kept["pods_per_s"] else kept


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _size(row: dict[str, Any]) -> tuple[Any, ...]:
    return row["workload"], row["nodes"], row["existing"], row["measured"], row["config"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", metavar="PATTERN", help="run only cases whose name matches")
    parser.add_argument("--quick", action="store_true", help="run the reduced-size cases")
    parser.add_argument(
        "--profile",
        metavar="CASE",
        choices=sorted(ALL_CASES),
        help="profile one case in-process and print the top 30 functions",
    )
    parser.add_argument(
        "--measured", type=int, default=None, help="override the number of measured pods (with --profile)"
    )
    parser.add_argument(
        "--sort",
        default="cumulative",
        choices=("cumulative", "tottime"),
        help="order of the profile's functions (with --profile)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run the selected cases N times, round after round, and keep each case's fastest run "
        "(steadier figures on a shared machine)",
    )
    parser.add_argument(
        "--emulated-version",
        metavar="VERSION",
        help="the kube-scheduler version every case runs as (default: kubesched's, 1.34)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="kubesched run and upstream kube-scheduler side by side on a real API server "
        "(benchmarks/live.py; with --quick, reduced sizes)",
    )
    parser.add_argument(
        "--soak",
        type=int,
        metavar="MINUTES",
        help="with --live: churn pods and nodes for MINUTES against both schedulers at once and "
        "print per-minute pods/s, p99 latency, RSS and threads (benchmarks/soak.py)",
    )
    args = parser.parse_args(argv)

    if args.soak is not None and not args.live:
        parser.error("--soak runs against a real API server: give --live as well")
    if args.soak is not None:
        if args.soak < 1:
            parser.error("--soak needs at least one minute")
        from benchmarks.soak import main as soak_main

        return soak_main(args.soak)
    if args.live:
        from benchmarks.live import main as live_main

        return live_main(quick=args.quick, only=args.only, repeat=args.repeat)

    if args.profile:
        print(profile_case(get_case(args.profile, args.measured), sort=args.sort))
        return 0

    if args.emulated_version:
        os.environ[EMULATED_VERSION_ENV] = check_version(args.emulated_version)  # each case's subprocess reads it
    # The DRA workloads run beside upstream kube-scheduler: python -m benchmarks.dra.
    cases = select([c for c in ALL_CASES.values() if not is_dra(c)], only=args.only, quick=args.quick)
    if not cases:
        print(f"no case matches {args.only!r}; known: {', '.join(ALL_CASES)}", file=sys.stderr)
        return 2
    best: dict[str, dict[str, Any]] = {}
    failed = False
    for round_ in range(args.repeat):
        for case in cases:
            suffix = f" (round {round_ + 1}/{args.repeat})" if args.repeat > 1 else ""
            print(f"running {case.name}{suffix} ...", file=sys.stderr, flush=True)
            try:
                row = run_in_subprocess(case.name, measured=args.measured)
            except BenchmarkError as err:
                failed = True
                print(str(err), file=sys.stderr)
                row = {
                    "case": case.name,
                    "workload": case.workload,
                    "nodes": case.nodes,
                    "existing": case.existing,
                    "measured": args.measured or case.measured,
                    "config": case.config,
                    "path": getattr(case, "path", "core"),
                    "error": str(err),
                }
            best[case.name] = better(best.get(case.name), row)
    rows = [best[case.name] for case in cases]
    print(f"kube-scheduler v{emulated_features().version} emulated\n")
    print(format_table(rows))
    compared = compare_user_paths(rows)
    if compared:
        print("\nUser paths (the whole kubesched.simulate() call) against the core loop of the same case:")
        print("\n".join(f"  {line}" for line in compared))
    left_out = sorted({p for r in rows for p in r.get("plugins_left_out", ())})
    if left_out:
        print(f"\nDefault plugins not yet in kubesched (not run): {', '.join(left_out)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
