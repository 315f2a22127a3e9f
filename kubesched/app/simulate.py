"""``kubesched simulate SCENARIO…``: schedule a scenario's pending pods on the embedded cluster.

This module is imported only for this command, so it imports the simulator at once; the HTML report
(plotly) only when one is asked for.

Output paths (``--trace``, ``--output-dir``, ``--report``) are checked before the run, and the summary
is printed before any file is written: a file that cannot be written after a long run must not cost
the result.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from kubesched.app.cli import EXIT_OK, one_line
from kubesched.app.options import add_simulation_flags, field_validation
from kubesched.sim.annotations import PREFIX, SIMULATOR_PREFIX, AnnotationRecorder
from kubesched.sim.output import write_manifests
from kubesched.sim.report import format_summary
from kubesched.sim.simulate import SimulationError, simulate


class OutputPathError(ValueError):
    """An output flag (``--trace``, ``--output-dir``) that cannot be written; the message names the flag."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Load Kubernetes manifests (files or folders) into an embedded cluster and schedule "
                          "every pod without spec.nodeName, one at a time, with the real scheduler on a virtual "
                          "clock.")
    parser.add_argument("scenario", nargs="+", metavar="SCENARIO", help="manifest file or folder of manifests")
    add_simulation_flags(parser)
    parser.add_argument("--burst", action="store_true",
                        help="create all pending pods at once instead of one after another")
    parser.add_argument("--timeline", metavar="FILE",
                        help="YAML list of {at, action: create|delete|cordon|uncordon|drain, object} steps run "
                             "on the virtual clock")
    parser.add_argument("--trace", metavar="FILE.jsonl",
                        help="stream one JSON decision record per attempt to FILE (gzip-compressed for .jsonl.gz)")
    parser.add_argument("--output-dir", metavar="DIR",
                        help="write the resulting nodes and pods (with kubesched.io/ result annotations) as YAML")
    parser.add_argument("--annotation-prefix", metavar="PREFIX", default=PREFIX,
                        help=f"prefix of the result annotations in --output-dir (default {PREFIX}); "
                             f"{SIMULATOR_PREFIX} writes kube-scheduler-simulator's keys and shapes")
    parser.add_argument("--report", metavar="FILE.html",
                        help="write a self-contained HTML report (plots, reasons, every pod's decision)")
    parser.add_argument("--progress", action="store_true",
                        help="show a progress bar even when stderr is no terminal")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also list where each pod went, and log warnings")


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_output_paths(args.trace, args.output_dir)
    check_report_path(args.report)
    if not args.annotation_prefix.endswith("/"):
        raise SimulationError(f"--annotation-prefix: must end with '/', got {args.annotation_prefix!r}")
    progress, close = progress_bar(err, forced=args.progress)
    # The trace is streamed while the run goes; annotations keep per attempt only what they show.
    annotations = AnnotationRecorder() if args.output_dir else None
    try:
        result = simulate(args.scenario, config=args.config, seed=args.seed, burst=args.burst,
                          tie_break=args.tie_break, progress=progress, timeline=args.timeline,
                          trace=args.trace, recorders=[annotations] if annotations is not None else [],
                          validate=field_validation(args),
                          # The HTML report shows every attempt's full decision.
                          record="full" if args.report else "summary")
    finally:
        close()
    print(format_summary(result, verbose=args.verbose), file=out)
    out.flush()
    if args.trace:
        print(f"\nTrace: {result.attempt_count} attempts written to {args.trace}", file=out)
    if args.output_dir:
        with naming_flag("--output-dir"):
            write_manifests(result, args.output_dir, annotations, args.annotation_prefix)
        print(f"Manifests written to {args.output_dir}", file=out)
    if args.report:
        from kubesched.sim.html_report import write_report

        with naming_flag("--report"):
            write_report(result, args.report)
        print(f"Report written to {args.report}", file=out)
    return EXIT_OK


def check_output_paths(trace: str | None, output_dir: str | None) -> None:
    """Refuse output paths that cannot work before the run, not after it."""
    if trace is not None:
        path = Path(trace)
        if not trace.strip():
            raise OutputPathError("--trace: an empty path names no file")
        if path.is_dir():
            raise OutputPathError(f"--trace: {trace} is a folder; give a file name such as {path / 'trace.jsonl'}")
        parent = path.parent
        if not parent.is_dir():
            raise OutputPathError(f"--trace: folder {parent} does not exist")
    if output_dir is not None:
        path = Path(output_dir)
        if not output_dir.strip():
            raise OutputPathError("--output-dir: an empty path names no folder")
        if path.exists() and not path.is_dir():
            raise OutputPathError(f"--output-dir: {output_dir} is a file, not a folder")
        ancestor = next((p for p in path.parents if p.exists()), None)
        if ancestor is not None and not ancestor.is_dir():
            raise OutputPathError(f"--output-dir: {ancestor} is a file, not a folder")


def check_report_path(report: str | None) -> None:
    """``--report`` must name a file in an existing folder (checked before the run, as the others are)."""
    if report is None:
        return
    path = Path(report)
    if not report.strip():
        raise OutputPathError("--report: an empty path names no file")
    if path.is_dir():
        raise OutputPathError(f"--report: {report} is a folder; give a file name such as {path / 'report.html'}")
    if not path.parent.is_dir():
        raise OutputPathError(f"--report: folder {path.parent} does not exist")


@contextlib.contextmanager
def naming_flag(flag: str) -> Iterator[None]:
    """Report an OSError while writing an output as an error of the flag that named it."""
    try:
        yield
    except OSError as error:
        raise OutputPathError(f"{flag}: {one_line(error)}") from error


def progress_bar(stream: TextIO, *, forced: bool) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A ``simulate(progress=…)`` callback drawing a tqdm bar on ``stream`` (a TTY, or when forced)."""
    if not (forced or stream.isatty()):
        return None, lambda: None
    from tqdm import tqdm

    bar: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc="scheduling", unit="pod", file=stream, leave=False)
        bar["bar"].update(done - bar["bar"].n)

    def close() -> None:
        if "bar" in bar:
            bar["bar"].close()

    return update, close
