"""``kubesched capacity SCENARIO… --pod TEMPLATE``: how many more replicas of a pod fit."""

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
from kubesched.sim.capacity import capacity, format_capacity


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Simulate the scenario, then schedule copies of the pod template one at a time until "
                          "one does not fit; print how many fit, where, and kube-scheduler's reason for the first "
                          "that did not.")
    add_scenario_arguments(parser)
    parser.add_argument("--pod", required=True, metavar="TEMPLATE.yaml",
                        help="the pod to replicate (one Pod manifest)")
    parser.add_argument("--max", type=int, metavar="N", help="stop after N replicas")
    add_simulation_flags(parser)
    add_output_flag(parser)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    gates = gates_of(args)
    result = capacity(scenario_of(args), args.pod, args.config, max_replicas=args.max, seed=args.seed,
                      tie_break=args.tie_break, validate=field_validation(args), emulated_version=gates.version,
                      feature_gates=dict(gates.overrides))
    if args.output == "json":
        print(json.dumps(result.to_dict(), indent=2), file=out)
    else:
        print(format_capacity(result), file=out)
    return EXIT_OK
