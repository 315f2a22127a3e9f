"""``kubesched capacity SCENARIO… --pod TEMPLATE[=N]…``: how many more replicas of a pod, or whole sets of
several pod shapes, fit."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from kubesched.app.cli import EXIT_OK
from kubesched.app.options import (
    add_output_flag,
    add_scenario_arguments,
    add_simulation_flags,
    field_validation,
    gates_of,
    scenario_of,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Simulate the scenario, then schedule copies of the pod template one at a time until "
        "one does not fit; print how many fit, where, and kube-scheduler's reason for the first "
        "that did not. Several --pod TEMPLATE=N shapes make a set (N of each, in order): how many "
        "whole sets fit, and each shape alone."
    )
    add_scenario_arguments(parser)
    parser.add_argument(
        "--pod",
        required=True,
        action="append",
        type=pod_shape,
        metavar="TEMPLATE.yaml[=N]",
        help="the pod to replicate (one Pod manifest); repeat with =N counts for a set of shapes",
    )
    parser.add_argument("--max", type=int, metavar="N", help="stop after N replicas (N sets with several shapes)")
    add_simulation_flags(parser)
    add_output_flag(parser)


def pod_shape(text: str) -> tuple[str, int | None]:
    """``TEMPLATE.yaml`` or ``TEMPLATE.yaml=N`` (N, a count of 1 or more, after the last ``=``)."""
    path, sep, count = text.rpartition("=")
    if not sep:
        return text, None
    if not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"expected TEMPLATE.yaml=N with N a count of 1 or more, got {text!r}")
    return path, int(count)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    gates = gates_of(args)
    options = {
        "seed": args.seed,
        "tie_break": args.tie_break,
        "validate": field_validation(args),
        "emulated_version": gates.version,
        "feature_gates": dict(gates.overrides),
    }
    if len(args.pod) == 1 and args.pod[0][1] is None:
        from kubesched.sim.capacity import capacity, format_capacity

        result = capacity(scenario_of(args), args.pod[0][0], args.config, max_replicas=args.max, **options)
        text, document = format_capacity(result), result.to_dict()
    else:
        from kubesched.sim.capacity_sets import capacity_sets, format_sets

        sets = capacity_sets(
            scenario_of(args),
            [(path, count or 1) for path, count in args.pod],
            args.config,
            max_sets=args.max,
            **options,
        )
        text, document = format_sets(sets), sets.to_dict()
    print(json.dumps(document, indent=2) if args.output == "json" else text, file=out)
    return EXIT_OK
