"""``kubesched simulate SCENARIO…``: schedule a scenario's pending pods on the embedded cluster.

This module is imported only for this command, so it imports the simulator at once; the HTML report
(plotly) only when one is asked for.

Output paths (``--trace``, ``--output-dir``, ``--report``) are checked before the run, and the summary
is printed before any file is written: a file that cannot be written after a long run must not cost
the result. With ``-o json`` standard output holds the JSON document alone (the lines naming written
files go to standard error); ``-q`` prints nothing but errors.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from kubesched.api.labels import validate_label_key
from kubesched.app.cli import EXIT_OK, one_line
from kubesched.app.options import (
    add_output_flag,
    add_scenario_arguments,
    add_simulation_flags,
    field_validation,
    gates_of,
    scenario_of,
)
from kubesched.sim.annotations import PREFIX, SIMULATOR_PREFIX, AnnotationRecorder
from kubesched.sim.output import write_manifests
from kubesched.sim.report import format_summary
from kubesched.sim.simulate import SimulationError, SimulationResult, simulate
from kubesched.sim.usage import DEFAULT_SHOWN, LIST_ALL_UP_TO, NodesShown
from kubesched.util.extras import missing, require_extra


class OutputPathError(ValueError):
    """An output flag (``--trace``, ``--output-dir``) that cannot be written; the message names the flag."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Load Kubernetes manifests (files or folders) into an embedded cluster and schedule "
        "every pod without spec.nodeName, one at a time, with the real scheduler on a virtual "
        "clock."
    )
    add_scenario_arguments(parser)
    add_simulation_flags(parser)
    _add_arrival_flags(parser)
    _add_output_file_flags(parser)
    _add_summary_flags(parser)


def _add_arrival_flags(parser: argparse.ArgumentParser) -> None:
    """When the pending pods arrive, and what else happens to the cluster while they are scheduled."""
    parser.add_argument(
        "--burst", action="store_true", help="create all pending pods at once instead of one after another"
    )
    parser.add_argument(
        "--timeline",
        metavar="FILE",
        help="YAML list of {at, action: create|delete|cordon|uncordon|drain, object} steps run on the virtual clock",
    )


def _add_output_file_flags(parser: argparse.ArgumentParser) -> None:
    """The files a run writes: the decision trace, the resulting objects and the HTML report."""
    parser.add_argument(
        "--trace",
        metavar="FILE.jsonl",
        help="stream one JSON decision record per attempt to FILE (gzip-compressed for .jsonl.gz)",
    )
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write the resulting nodes and pods (with kubesched.io/ result annotations) as YAML",
    )
    parser.add_argument(
        "--annotation-prefix",
        metavar="PREFIX",
        default=PREFIX,
        help=f"prefix of the result annotations in --output-dir (default {PREFIX}); "
        f"{SIMULATOR_PREFIX} writes kube-scheduler-simulator's keys and shapes",
    )
    parser.add_argument(
        "--report",
        metavar="FILE.html",
        help="write a self-contained HTML report (plots, reasons, every pod's decision)",
    )


def _add_summary_flags(parser: argparse.ArgumentParser) -> None:
    """What the terminal shows: progress, the summary's nodes and pools, its format and loudness."""
    parser.add_argument(
        "--progress", action="store_true", help="show a progress bar even when stderr is no terminal (or with -q)"
    )
    parser.add_argument(
        "--nodes",
        type=nodes_shown,
        metavar="all|N",
        help=f"nodes the summary lists: all, or the N most and N least used (default: all up to "
        f"{LIST_ALL_UP_TO} nodes, else {DEFAULT_SHOWN} of each, with the pools' totals)",
    )
    parser.add_argument(
        "--group-by",
        metavar="LABEL",
        help="node label whose values are the pools the summary and the HTML report group nodes "
        "into (default: the first node-pool label the nodes carry, else the instance type, "
        "else the zone)",
    )
    add_output_flag(parser)
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also list where each pod went and every deletion, and log warnings",
    )
    loudness.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing but errors (the exit status tells the rest)"
    )


def nodes_shown(text: str) -> int | str:
    """``--nodes``: "all" or a count of nodes (0 or more)."""
    if text == "all":
        return text
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected all or a number of nodes, got {text!r}") from None
    if count < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {count}")
    return count


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    gates = gates_of(args)  # before anything runs, like the output paths
    check_output_paths(args.trace, args.output_dir)
    check_report_path(args.report)
    if args.group_by is not None:
        validate_label_key(args.group_by, "--group-by")
    if not args.annotation_prefix.endswith("/"):
        raise SimulationError(f"--annotation-prefix: must end with '/', got {args.annotation_prefix!r}")
    progress, close = progress_bar(err, forced=args.progress, quiet=args.quiet)
    # The trace is streamed while the run goes; annotations keep per attempt only what they show.
    annotations = AnnotationRecorder() if args.output_dir else None
    try:
        result = simulate(
            scenario_of(args),
            config=args.config,
            seed=args.seed,
            burst=args.burst,
            emulated_version=gates.version,
            feature_gates=dict(gates.overrides),
            tie_break=args.tie_break,
            progress=progress,
            timeline=args.timeline,
            trace=args.trace,
            recorders=[annotations] if annotations is not None else [],
            validate=field_validation(args),
            # The HTML report shows every attempt's full decision.
            record="full" if args.report else "summary",
        )
    finally:
        close()
    try:
        print_summary(result, args, out)
    except BrokenPipeError as closed:
        # The reader has gone (``| head``): the files are written all the same, then the command ends.
        write_files(result, args, annotations, None)
        raise closed from None
    # What was written is said after the summary; JSON keeps standard output to itself.
    write_files(result, args, annotations, None if args.quiet else err if args.output == "json" else out)
    return EXIT_OK


def write_files(
    result: SimulationResult, args: argparse.Namespace, annotations: AnnotationRecorder | None, said: TextIO | None
) -> None:
    """Write ``--output-dir`` and ``--report``, and say what was written (the trace too) on ``said``."""
    if args.trace and said is not None:
        print(f"\nTrace: {result.attempt_count} attempts written to {args.trace}", file=said)
    if args.output_dir:
        with naming_flag("--output-dir"):
            write_manifests(result, args.output_dir, annotations, args.annotation_prefix)
        if said is not None:
            print(f"Manifests written to {args.output_dir}", file=said)
    if args.report:
        from kubesched.sim.html_report import write_report

        with naming_flag("--report"):
            write_report(result, args.report, group_by=args.group_by)
        if said is not None:
            print(f"Report written to {args.report}", file=said)


def print_summary(result: SimulationResult, args: argparse.Namespace, out: TextIO) -> None:
    """The summary as text or JSON (nothing with ``--quiet``), flushed before any file is written."""
    if args.quiet:
        return
    if args.output == "json":
        from kubesched.sim.summary_json import summary_document

        json.dump(summary_document(result, group_by=args.group_by), out, indent=2)
        out.write("\n")
    else:
        shown: NodesShown = args.nodes
        print(format_summary(result, verbose=args.verbose, nodes=shown, group_by=args.group_by), file=out)
    out.flush()


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
    """``--report`` must name a file in an existing folder (checked before the run, as the others are),
    and the HTML report's extra must be there."""
    if report is not None:
        require_extra("sim", "--report", ("plotly",))
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


def progress_bar(
    stream: TextIO, *, forced: bool, quiet: bool = False
) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A ``simulate(progress=…)`` callback drawing a tqdm bar on ``stream`` (a TTY unless ``quiet``, or
    when forced). The total grows as workload controllers create pods; the bar follows it."""
    if not (forced or (stream.isatty() and not quiet)):
        return None, lambda: None
    if missing("sim", ("tqdm",)):
        if forced:
            require_extra("sim", "--progress", ("tqdm",))
        return None, lambda: None  # a terminal without tqdm: no bar, as when piped
    from tqdm import tqdm

    bar: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc="scheduling", unit="pod", file=stream, leave=False)
        if bar["bar"].total != total:
            bar["bar"].total = total  # drawn with the next update (tqdm limits how often it draws)
        if done != bar["bar"].n:
            bar["bar"].update(done - bar["bar"].n)

    def close() -> None:
        if "bar" in bar:
            bar["bar"].close()

    return update, close
