"""``kubesched plan SCENARIO… --node-template NODE``: the fewest nodes to add so that no pod stays pending."""

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
from kubesched.sim.plan import DEFAULT_MAX_NODES, format_plan, plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Search (bisection, checked by real runs) for the fewest copies of the node template "
                          "that leave no pod of the scenario pending; print that number and the resulting "
                          "placement.")
    add_scenario_arguments(parser)
    parser.add_argument("--node-template", required=True, metavar="NODE.yaml",
                        help="the node to add (one Node manifest)")
    parser.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES, metavar="N",
                        help=f"give up beyond N added nodes (default {DEFAULT_MAX_NODES})")
    add_simulation_flags(parser)
    add_output_flag(parser)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    gates = gates_of(args)
    result = plan(scenario_of(args), args.node_template, args.config, max_nodes=args.max_nodes, seed=args.seed,
                  tie_break=args.tie_break, validate=field_validation(args), emulated_version=gates.version,
                  feature_gates=dict(gates.overrides))
    if args.output == "json":
        print(json.dumps(result.to_dict(), indent=2), file=out)
    else:
        print(format_plan(result, args.max_nodes), file=out)
    return EXIT_OK
