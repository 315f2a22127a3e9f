"""``python -m benchmarks.differential --seeds N [--start S] [--report PATH]``: kubesched against upstream.

For each seed, a generated scenario is played on a real etcd + kube-apiserver by upstream kube-scheduler
(testing/controlplane), one pending pod at a time; kubesched then decides on each recorded state through
``kubesched.simulate``, and the two first decisions are compared (testing/differential: bound pods by tie
membership, failures by their FailedScheduling text, preemptions by node and victims). Prints the
agreement per upstream outcome, the catalogue sections that explained the expected v1.30 → v1.34
mismatches, and every disagreement with both verdicts; writes a JSON report holding, for each
disagreement, the state and pod that reproduce it (``kubesched.simulate(state + [pod], ...)``).

About half the seeds also get devices, DeviceClasses, claims and claim templates
(testing/differential/devices.py; ``--no-dra`` leaves them out), and for pods both bound the devices
allocated are compared (up to equivalent devices) with the allocation written.

One control plane, one kube-scheduler and one kube-controller-manager serve every seed; a seed takes a
second or two, almost all of it on the upstream side. ``KUBESCHED_KEEP_CONTROLPLANE=1`` keeps the run's
folder with kube-scheduler's log.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from testing.controlplane.fixture import ControlPlane, build_binaries
from testing.differential import harness, replay
from testing.differential.compare import DISAGREE
from testing.differential.upstream import Oracle

DEFAULT_REPORT = Path("out/differential/report.json")
#: Set to keep the run's folder (the control plane's data and the upstream processes' logs).
KEEP_ENV = "KUBESCHED_KEEP_CONTROLPLANE"


def _progress(result: harness.SeedResult) -> None:
    if result.error:
        print(f"seed {result.seed}: FAILED: {result.error}", file=sys.stderr, flush=True)
        return
    bad = sum(1 for c in result.comparisons if DISAGREE in (c.decision, c.message, c.devices))
    expected = sum(1 for c in result.comparisons if not c.agrees) - bad
    print(
        f"seed {result.seed}: {len(result.comparisons)} pods, {bad} disagreeing, {expected} expected differences "
        f"({result.upstream_seconds:.1f}s upstream, {result.kubesched_seconds:.1f}s kubesched)",
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None, *, plane: ControlPlane | None = None) -> int:
    """``plane``: run on this control plane instead of starting one (the oracle clears it first)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.differential",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seeds", type=int, default=20, metavar="N", help="how many seeds (default 20)")
    parser.add_argument("--start", type=int, default=0, metavar="S", help="first seed (default 0)")
    parser.add_argument(
        "--report",
        type=Path,
        default=DEFAULT_REPORT,
        metavar="PATH",
        help=f"where to write the JSON report (default {DEFAULT_REPORT})",
    )
    parser.add_argument(
        "--no-dra",
        dest="dra",
        action="store_false",
        help="leave out the GPUs published through DRA (and the pods claiming them) that about half the seeds get",
    )
    args = parser.parse_args(argv)
    # A terminated run still stops its control plane and schedulers (the finally clauses below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="kubesched-differential-"))
    own = plane is None
    if plane is None:
        plane = ControlPlane.start(work_dir=work / "plane", bin_dir=build_binaries())
    try:
        with Oracle(plane, work / "oracle") as oracle:
            results = harness.run_seeds(oracle, range(args.start, args.start + args.seeds), _progress, dra=args.dra)
    finally:
        if own:
            plane.stop()
        if os.environ.get(KEEP_ENV):
            print(f"kept {work} (etcd data, kube-scheduler and kube-controller-manager logs)", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    wall = time.monotonic() - started
    report = {**harness.report(results, wall_seconds=wall), "dra": args.dra}
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps(report, indent=1))

    version = replay.EMULATED_VERSION or "kubesched's default (v1.30)"
    print(
        f"{report['pods']} pods over {len(results)} seeds ({args.start}..{args.start + args.seeds - 1}); "
        f"kubesched emulating {version}; {wall:.0f}s wall, per seed {report['timing']['perSeedSeconds']}"
    )
    print(harness.agreement_table(results))
    sizes = ", ".join(f"{n} node{'s' if n > 1 else ''}: {count}" for n, count in harness.tie_sizes(results).items())
    print(f"kubesched's best-score ties for the pods upstream bound ({sizes})")
    tags = harness.tag_counts(results)
    if tags:
        print("\nExpected v1.30 → v1.34 differences (pods explained by each catalogue section):")
        for tag, count in tags.most_common():
            print(f"  {count:5d}  {tag}")
    failed = {r.seed: r.error for r in results if r.error}
    for seed, error in failed.items():
        print(f"\nseed {seed} failed: {error}")
    bad = harness.disagreements(results)
    print(f"\n{len(bad)} disagreement(s)" + (":" if bad else "."))
    for comparison in bad:
        print("  " + comparison.summary())
    print(f"\nreport: {args.report}")
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
