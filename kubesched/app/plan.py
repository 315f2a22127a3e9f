"""``kubesched plan SCENARIO… --node-template NODE…``: the fewest nodes (or the cheapest mix of several node
templates) to add so that no pod stays pending."""

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
from kubesched.sim.plan import DEFAULT_MAX_NODES
from kubesched.sim.plan_mix import COST_ANNOTATION, DEFAULT_MAX_SIMULATIONS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Search (bisection, checked by real runs) for the fewest copies of the node template "
        "that leave no pod of the scenario pending; print that number and the resulting "
        "placement. With several templates, the cheapest mix (by their "
        f"{COST_ANNOTATION} annotation, per node-hour) or, unpriced, the fewest nodes."
    )
    add_scenario_arguments(parser)
    parser.add_argument(
        "--node-template",
        required=True,
        action="append",
        metavar="NODE.yaml",
        help="the node to add (one Node manifest, with the ResourceSlices of its devices if it "
        "has any); repeat for a mix of several",
    )
    parser.add_argument(
        "--max-nodes",
        type=int,
        default=DEFAULT_MAX_NODES,
        metavar="N",
        help=f"give up beyond N added nodes (of each template; default {DEFAULT_MAX_NODES})",
    )
    parser.add_argument(
        "--max-simulations",
        type=int,
        default=DEFAULT_MAX_SIMULATIONS,
        metavar="N",
        help=f"with several templates, stop the search for cheaper mixes after N simulations "
        f"(default {DEFAULT_MAX_SIMULATIONS})",
    )
    add_simulation_flags(parser)
    add_output_flag(parser)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    gates = gates_of(args)
    options = {
        "seed": args.seed,
        "tie_break": args.tie_break,
        "validate": field_validation(args),
        "emulated_version": gates.version,
        "feature_gates": dict(gates.overrides),
    }
    if len(args.node_template) == 1:
        from kubesched.sim.plan import format_plan, plan

        result = plan(scenario_of(args), args.node_template[0], args.config, max_nodes=args.max_nodes, **options)
        text, document = format_plan(result, args.max_nodes), result.to_dict()
    else:
        from kubesched.sim.plan_mix import format_mix, plan_mix

        mixed = plan_mix(
            scenario_of(args),
            args.node_template,
            args.config,
            max_nodes=args.max_nodes,
            max_simulations=args.max_simulations,
            **options,
        )
        text, document = format_mix(mixed), mixed.to_dict()
    print(json.dumps(document, indent=2) if args.output == "json" else text, file=out)
    return EXIT_OK
