"""``python -m benchmarks [--only PATTERN] [--quick] [--profile CASE [--measured N]] [--live]``

Runs each case in its own subprocess (so peak memory is per case) and prints a Markdown table.
``--quick`` runs the reduced cases only; ``--only`` keeps the cases whose name matches PATTERN (a glob,
or a substring when it has no wildcard); ``--profile`` runs one case in this process under cProfile and
prints the top 30 functions by cumulative time.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.run import ALL_CASES, BenchmarkError, get_case, profile_case, run_in_subprocess
from benchmarks.storage_workloads import SimCase
from benchmarks.workloads import Case

COLUMNS = ("workload", "nodes", "existing", "measured", "config", "pods/s", "wall s", "pods/cpu-s", "peak MiB")


def select(cases: Iterable[Case | SimCase], *, only: str | None, quick: bool) -> list[Case | SimCase]:
    """The cases to run: the quick ones or the full-size ones, filtered by name."""
    chosen = [c for c in cases if c.quick == quick]
    if only:
        pattern = only if any(ch in only for ch in "*?[") else f"*{only}*"
        chosen = [c for c in chosen if fnmatch.fnmatch(c.name, pattern)]
    return chosen


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of results; a failed case shows its error in place of numbers."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        if "error" in r:
            cells = [r["workload"], r["nodes"], r["existing"], r["measured"], r["config"], "FAILED", "-", "-", "-"]
        else:
            cells = [r["workload"], r["nodes"], r["existing"], r["measured"], r["config"],
                     f"{r['pods_per_s']:.1f}", f"{r['wall_s']:.2f}", f"{r.get('pods_per_cpu_s', 0.0):.1f}",
                     f"{r['peak_mib']:.0f}"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="PATTERN", help="run only cases whose name matches")
    parser.add_argument("--quick", action="store_true", help="run the reduced-size cases")
    parser.add_argument("--profile", metavar="CASE", choices=sorted(ALL_CASES),
                        help="profile one case in-process and print the top 30 functions")
    parser.add_argument("--measured", type=int, default=None,
                        help="override the number of measured pods (with --profile)")
    parser.add_argument("--live", action="store_true",
                        help="kubesched run and upstream kube-scheduler side by side on a real API server "
                             "(benchmarks/live.py; with --quick, reduced sizes)")
    args = parser.parse_args(argv)

    if args.live:
        from benchmarks.live import main as live_main

        return live_main(quick=args.quick)

    if args.profile:
        print(profile_case(get_case(args.profile, args.measured)))
        return 0

    cases = select(ALL_CASES.values(), only=args.only, quick=args.quick)
    if not cases:
        print(f"no case matches {args.only!r}; known: {', '.join(ALL_CASES)}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    failed = False
    for case in cases:
        print(f"running {case.name} ...", file=sys.stderr, flush=True)
        try:
            row = run_in_subprocess(case.name, measured=args.measured)
        except BenchmarkError as err:
            failed = True
            print(str(err), file=sys.stderr)
            row = {"workload": case.workload, "nodes": case.nodes, "existing": case.existing,
                   "measured": args.measured or case.measured, "config": case.config, "error": str(err)}
        rows.append(row)
    print(format_table(rows))
    left_out = sorted({p for r in rows for p in r.get("plugins_left_out", ())})
    if left_out:
        print(f"\nDefault plugins not yet in kubesched (not run): {', '.join(left_out)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
