"""The ``kubesched`` command: ``simulate``, ``run``, ``capacity``, ``plan``, ``explain``, ``snapshot``,
``generate`` and ``version``.

Bad input (a manifest, a config, an unknown plugin, a missing file) ends with exit status 2 and
one line, ``kubesched: error: <message>``, whose message names the file, document and field; a
traceback would only hide that. A simulation that ran exits 0 whatever became of the pods: pods
left pending are a result, not an error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TextIO

from kubesched import __version__
from kubesched.api.errors import ObjectError
from kubesched.api.labels import validate_label_key
from kubesched.app import generate as generate_command
from kubesched.config import ConfigError
from kubesched.framework.extension_points import FrameworkError
from kubesched.plugins.registry import PluginLoadError
from kubesched.scenario.generate.openb import TraceError
from kubesched.scenario.manifests import ManifestError
from kubesched.sim.annotations import PREFIX, SIMULATOR_PREFIX, AnnotationRecorder
from kubesched.sim.capacity import capacity, format_capacity
from kubesched.sim.explain import ExplainError, explain
from kubesched.sim.output import write_manifests
from kubesched.sim.plan import DEFAULT_MAX_NODES, format_plan, plan
from kubesched.sim.report import format_summary
from kubesched.sim.simulate import SimulationError, simulate

PROG = "kubesched"
EXIT_OK = 0
EXIT_BAD_INPUT = 2

class OutputPathError(ValueError):
    """An output flag (``--trace``, ``--output-dir``) that cannot be written; the message names the flag."""


class SnapshotError(ValueError):
    """The live cluster could not be read (kubeconfig, connection, permissions)."""


#: Errors that mean "fix your input", reported as one line rather than a traceback.
INPUT_ERRORS: tuple[type[BaseException], ...] = (
    ManifestError, ConfigError, SimulationError, PluginLoadError, FrameworkError, ObjectError, OSError,
    OutputPathError, RecursionError, ExplainError, SnapshotError,
)


GENERATE_ERRORS: tuple[type[BaseException], ...] = (*INPUT_ERRORS, generate_command.GenerateError, TraceError)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, like every other input error (``--help`` shows the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG, description="kube-scheduler rebuilt in Python: a real scheduler and an explainable simulator.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    sim = commands.add_parser(
        "simulate", help="schedule the pending pods of a scenario on an in-memory cluster",
        description="Load Kubernetes manifests (files or folders) into an embedded cluster and schedule "
                    "every pod without spec.nodeName, one at a time, with the real scheduler on a virtual clock.")
    sim.add_argument("scenario", nargs="+", metavar="SCENARIO", help="manifest file or folder of manifests")
    sim.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1) file; default: v1 defaults")
    sim.add_argument("--seed", type=int, default=0, metavar="N", help="seed for tie-breaking and UIDs (default 0)")
    sim.add_argument("--burst", action="store_true",
                     help="create all pending pods at once instead of one after another")
    sim.add_argument("--tie-break", choices=("random", "name"), default="random",
                     help="among nodes with the best score: seeded random (as kube-scheduler) or smallest name")
    sim.add_argument("--timeline", metavar="FILE",
                     help="YAML list of {at, action: create|delete|cordon|uncordon|drain, object} steps run "
                          "on the virtual clock")
    sim.add_argument("--trace", metavar="FILE.jsonl",
                     help="stream one JSON decision record per attempt to FILE (gzip-compressed for .jsonl.gz)")
    sim.add_argument("--output-dir", metavar="DIR",
                     help="write the resulting nodes and pods (with kubesched.io/ result annotations) as YAML")
    sim.add_argument("--annotation-prefix", metavar="PREFIX", default=PREFIX,
                     help=f"prefix of the result annotations in --output-dir (default {PREFIX}); "
                          f"{SIMULATOR_PREFIX} writes kube-scheduler-simulator's keys and shapes")
    sim.add_argument("--report", metavar="FILE.html",
                     help="write a self-contained HTML report (plots, reasons, every pod's decision)")
    sim.add_argument("--report-group-by", metavar="LABEL",
                     help="node label whose values make the report's node pools (default: the first node-pool "
                          "label the nodes carry, else the instance type, else the zone)")
    sim.add_argument("--progress", action="store_true", help="show a progress bar even when stderr is no terminal")
    sim.add_argument("-v", "--verbose", action="store_true", help="also list where each pod went, and log warnings")

    from kubesched.app.run import add_run_parser

    add_run_parser(commands)

    cap = commands.add_parser(
        "capacity", help="how many more replicas of a pod fit (cluster-capacity's question)",
        description="Simulate the scenario, then schedule copies of the pod template one at a time until one "
                    "does not fit; print how many fit, where, and kube-scheduler's reason for the first that did not.")
    cap.add_argument("scenario", nargs="+", metavar="SCENARIO", help="manifest file or folder of manifests")
    cap.add_argument("--pod", required=True, metavar="TEMPLATE.yaml", help="the pod to replicate (one Pod manifest)")
    cap.add_argument("--max", type=int, metavar="N", help="stop after N replicas")
    _common_options(cap)

    plan_cmd = commands.add_parser(
        "plan", help="the fewest copies of a node to add so that every pending pod is scheduled",
        description="Search (bisection, checked by real runs) for the fewest copies of the node template that "
                    "leave no pod of the scenario pending; print that number and the resulting placement.")
    plan_cmd.add_argument("scenario", nargs="+", metavar="SCENARIO", help="manifest file or folder of manifests")
    plan_cmd.add_argument("--node-template", required=True, metavar="NODE.yaml",
                          help="the node to add (one Node manifest)")
    plan_cmd.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES, metavar="N",
                          help=f"give up beyond N added nodes (default {DEFAULT_MAX_NODES})")
    _common_options(plan_cmd)

    exp = commands.add_parser(
        "explain", help="one pod's decision from a trace file: filter verdicts, scores, winner, ties",
        description="Read a trace written by simulate --trace (.jsonl or .jsonl.gz) and print, for one attempt of "
                    "one pod, every node's filter verdict or its raw, normalised and weighted scores.")
    exp.add_argument("trace", metavar="TRACE", help="trace file (.jsonl or .jsonl.gz)")
    exp.add_argument("pod", metavar="POD", help="namespace/name (a bare name means the default namespace)")
    exp.add_argument("--attempt", type=int, metavar="N", help="which attempt (default: the last)")
    exp.add_argument("--node", metavar="NAME", help="only this node, plugin by plugin")

    snap = commands.add_parser(
        "snapshot", help="write a live cluster's nodes, pods and scheduling objects as manifests for simulate",
        description="List nodes, pods, namespaces, PriorityClasses, PodDisruptionBudgets, PersistentVolumes, "
                    "claims, StorageClasses and CSINodes with the official client and write them, without "
                    "server-managed fields, as manifests that simulate reads.")
    snap.add_argument("--kubeconfig", required=True, metavar="FILE", help="kubeconfig of the cluster to read")
    snap.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")
    snap.add_argument("-o", "--output-dir", required=True, metavar="DIR", help="folder to write the manifests to")

    generate_command.add_parser(commands)
    commands.add_parser("version", help="print the kubesched version")
    return parser


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1) file; default: v1 defaults")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed for tie-breaking and UIDs (default 0)")
    parser.add_argument("--tie-break", choices=("random", "name"), default="random",
                        help="among nodes with the best score: seeded random (as kube-scheduler) or smallest name")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text", help="output format")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"{PROG} {__version__}")
        return EXIT_OK
    commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
        "simulate": _simulate, "capacity": _capacity, "plan": _plan, "explain": _explain, "snapshot": _snapshot,
    }
    if args.command in commands:
        # The summary lists the scheduler's warnings itself; the log adds them only with --verbose.
        logging.basicConfig(level=logging.WARNING if getattr(args, "verbose", False) else logging.ERROR,
                            format=f"{PROG}: %(levelname)s: %(message)s", stream=sys.stderr, force=True)
        try:
            return commands[args.command](args, sys.stdout, sys.stderr)
        except INPUT_ERRORS as err:
            print(f"{PROG}: error: {_one_line(err)}", file=sys.stderr)
            return EXIT_BAD_INPUT
    if args.command == "generate":
        try:
            generate_command.run(args, sys.stdout)
        except GENERATE_ERRORS as err:
            print(f"{PROG}: error: {_one_line(err)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return EXIT_OK
    if args.command == "run":
        from kubesched.app.run import main as run_main
        from kubesched.live.connection import ClientConfigError

        run_errors: tuple[type[BaseException], ...] = (*INPUT_ERRORS, ClientConfigError)
        try:
            return run_main(args)
        except run_errors as err:
            print(f"{PROG}: error: {_one_line(err)}", file=sys.stderr)
            return EXIT_BAD_INPUT
    parser.print_help(sys.stderr)
    return EXIT_BAD_INPUT


def _simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_output_paths(args.trace, args.output_dir)
    _check_report_path(args.report, args.report_group_by)
    if not args.annotation_prefix.endswith("/"):
        raise SimulationError(f"--annotation-prefix: must end with '/', got {args.annotation_prefix!r}")
    progress, close = _progress_bar(err, forced=args.progress)
    # The trace is streamed while the run goes; annotations keep per attempt only what they show.
    annotations = AnnotationRecorder() if args.output_dir else None
    try:
        result = simulate(args.scenario, config=args.config, seed=args.seed, burst=args.burst,
                          tie_break=args.tie_break, progress=progress, timeline=args.timeline,
                          trace=args.trace, recorders=[annotations] if annotations is not None else [],
                          # The HTML report shows every attempt's full decision.
                          record="full" if args.report else "summary")
    finally:
        close()
    # The summary comes first: a file that cannot be written after a long run must not cost the result.
    print(format_summary(result, verbose=args.verbose), file=out)
    out.flush()
    if args.trace:
        print(f"\nTrace: {result.attempt_count} attempts written to {args.trace}", file=out)
    if args.output_dir:
        with _naming_flag("--output-dir"):
            write_manifests(result, args.output_dir, annotations, args.annotation_prefix)
        print(f"Manifests written to {args.output_dir}", file=out)
    if args.report:
        from kubesched.sim.html_report import write_report

        with _naming_flag("--report"):
            write_report(result, args.report, group_by=args.report_group_by)
        print(f"Report written to {args.report}", file=out)
    return EXIT_OK


def _check_report_path(report: str | None, group_by: str | None = None) -> None:
    """``--report`` must name a file in an existing folder, ``--report-group-by`` a label key (checked
    before the run, as the others are)."""
    if group_by is not None:
        if report is None:
            raise OutputPathError("--report-group-by: applies to the HTML report; give --report FILE.html too")
        validate_label_key(group_by, "--report-group-by")
    if report is None:
        return
    path = Path(report)
    if not report.strip():
        raise OutputPathError("--report: an empty path names no file")
    if path.is_dir():
        raise OutputPathError(f"--report: {report} is a folder; give a file name such as {path / 'report.html'}")
    if not path.parent.is_dir():
        raise OutputPathError(f"--report: folder {path.parent} does not exist")


def _capacity(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result = capacity(args.scenario, args.pod, args.config, max_replicas=args.max, seed=args.seed,
                      tie_break=args.tie_break)
    if args.output == "json":
        print(json.dumps(result.to_dict(), indent=2), file=out)
    else:
        print(format_capacity(result), file=out)
    return EXIT_OK


def _plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result = plan(args.scenario, args.node_template, args.config, max_nodes=args.max_nodes, seed=args.seed,
                  tie_break=args.tie_break)
    if args.output == "json":
        print(json.dumps(result.to_dict(), indent=2), file=out)
    else:
        print(format_plan(result, args.max_nodes), file=out)
    return EXIT_OK


def _explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    explain(args.trace, args.pod, attempt=args.attempt, node=args.node, out=out)
    return EXIT_OK


def _snapshot(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kubesched.app.snapshot import KubeconfigCluster, write_snapshot

    try:
        cluster = KubeconfigCluster(args.kubeconfig, context=args.context)
        counts = write_snapshot(cluster, args.output_dir)
    except INPUT_ERRORS:
        raise
    except Exception as exc:  # the client's own errors (bad kubeconfig, unreachable server, 403)
        raise SnapshotError(f"{args.kubeconfig}: {type(exc).__name__}: {exc}") from None
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"Snapshot written to {args.output_dir}: {summary}", file=out)
    return EXIT_OK


@contextlib.contextmanager
def _naming_flag(flag: str) -> Iterator[None]:
    """Report an OSError while writing an output as an error of the flag that named it."""
    try:
        yield
    except OSError as error:
        raise OutputPathError(f"{flag}: {_one_line(error)}") from error


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


def _progress_bar(stream: TextIO, *, forced: bool) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
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


def _one_line(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        where = f"{err.filename}: " if err.filename else ""
        return f"{where}{err.strerror}"
    return " ".join(str(err).split()) or type(err).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
