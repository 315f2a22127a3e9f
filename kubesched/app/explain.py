"""``kubesched explain``: one pod's decision from a trace file, or every pending pod with what would help.

``explain TRACE POD`` prints one attempt of one pod from a trace. Without POD, or given a scenario
(``--scenario PATH``, ``--live``, ``--kubeconfig FILE``) instead of a trace, it explains every pending
pod: grouped by cause, each group with the changes that would let it schedule (checked by simulation,
when there is a scenario to simulate), then each pod's decision.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from kubesched.app.cli import EXIT_OK
from kubesched.app.options import add_live_flags, add_output_flag, add_simulation_flags, field_validation, gates_of
from kubesched.sim.explain import ExplainError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Read a trace written by simulate --trace (.jsonl or .jsonl.gz) and print, for one "
        "attempt of one pod, every node's filter verdict or its raw, normalised and weighted "
        "scores. A POD no pod has exactly is read as a workload (Deployment/ns/name) or a name "
        "prefix: one matching pod is explained, several are listed. Without POD, or with a "
        "scenario (--scenario, --live, --kubeconfig) instead of a trace, every pending pod is "
        "explained: grouped by cause, with the smallest changes that would let each group "
        "schedule, each checked by simulating it."
    )
    parser.add_argument(
        "trace", nargs="?", metavar="TRACE", help="trace file (.jsonl or .jsonl.gz); not given with a scenario"
    )
    parser.add_argument(
        "pod",
        nargs="?",
        metavar="POD",
        help="namespace/name (a bare name means the default namespace), a prefix of it, or "
        "Kind/namespace/name of a Deployment, ReplicaSet, StatefulSet, DaemonSet or Job",
    )
    parser.add_argument("--attempt", type=int, metavar="N", help="which attempt (default: the last)")
    parser.add_argument("--node", metavar="NAME", help="only this node, plugin by plugin")
    parser.add_argument(
        "--width",
        type=int,
        metavar="COLUMNS",
        help="lay out for this many columns (default: the terminal's, or $COLUMNS; unlimited when piped)",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="PATH",
        help="simulate this manifest file or folder (repeatable) and explain its pending pods",
    )
    add_live_flags(parser)
    parser.add_argument(
        "--no-what-if",
        dest="what_if",
        action="store_false",
        help="group the pending pods and show their decisions, without simulating any change",
    )
    parser.add_argument(
        "--max-groups",
        type=int,
        default=10,
        metavar="N",
        help="check what would help for the N largest groups only (default 10)",
    )
    parser.add_argument("--brief", action="store_true", help="the groups only, not every pod's decision")
    add_simulation_flags(parser)
    add_output_flag(parser)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kubesched.app.options import live_source

    live = live_source(args)
    sources = [*([live] if live is not None else []), *args.scenario]
    if sources:
        if args.pod is not None:
            raise ExplainError("with a scenario (--scenario, --live or --kubeconfig), give at most a POD, no TRACE")
        return _pending(args, out, sources, args.trace)
    if args.trace is None:
        raise ExplainError("give a TRACE (and a POD), or a scenario: --scenario PATH, --live or --kubeconfig FILE")
    if args.pod is None or args.output == "json":
        return _pending(args, out, None, args.pod)
    from kubesched.sim.explain import explain

    explain(args.trace, args.pod, attempt=args.attempt, node=args.node, out=out, width=args.width)
    return EXIT_OK


def _pending(args: argparse.Namespace, out: TextIO, sources: list[Any] | None, pod: str | None) -> int:
    from kubesched.sim.explain_pending import explain_pending, explain_trace_pending, print_pending

    if args.max_groups < 0:
        raise ExplainError(f"--max-groups: must be 0 or more, got {args.max_groups}")
    if sources is None:
        report = explain_trace_pending(args.trace, pod=pod)
    else:
        gates = gates_of(args)
        report = explain_pending(
            sources,
            args.config,
            pod=pod,
            what_if=args.what_if,
            max_groups=args.max_groups,
            seed=args.seed,
            tie_break=args.tie_break,
            validate=field_validation(args),
            emulated_version=gates.version,
            feature_gates=dict(gates.overrides),
        )
    if args.output == "json":
        print(json.dumps(report.to_dict(), indent=2), file=out)
    else:
        print_pending(report, out, brief=args.brief, width=args.width)
    return EXIT_OK
