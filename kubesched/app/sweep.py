"""``kubesched sweep SCENARIO… [--config FILE]… [--grid PLUGIN.weight=1,2,5]… [--seeds N]``: scenarios x
configurations x seeds, compared with confidence intervals; on local processes or a dask cluster."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import yaml

from kubesched.app.cli import EXIT_OK
from kubesched.app.options import (
    add_output_flag,
    add_validate_flag,
    add_version_flags,
    field_validation,
    gates_of,
)

if TYPE_CHECKING:
    from kubesched.sim.sweep import Variant


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Simulate every scenario under every configuration (and grid point) with every seed, "
        "and compare pods scheduled and pending, utilisation, fragmentation, preemptions and "
        "p99 latency, with 95% confidence intervals over the seeds. Runs go to local processes, "
        "or to a running dask.distributed cluster with --address."
    )
    parser.add_argument(
        "scenario", nargs="+", metavar="SCENARIO", help="one scenario each: a manifest file or a folder of manifests"
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="a KubeSchedulerConfiguration to compare (repeatable; default: the v1 defaults)",
    )
    parser.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="PLUGIN.weight=V,…",
        help="a parameter to vary over every configuration: a Score plugin's weight "
        "(NodeResourcesFit.weight=1,2,5) or a field of its args "
        "(NodeResourcesFit.args.scoringStrategy.type=LeastAllocated,MostAllocated); repeatable "
        "(the cross product)",
    )
    parser.add_argument("--seeds", type=int, default=3, metavar="N", help="seeds 0..N-1 for each run (default 3)")
    parser.add_argument(
        "--tie-break",
        choices=("random", "name"),
        default="random",
        help="among nodes with the best score: seeded random (as kube-scheduler) or smallest name",
    )
    add_validate_flag(parser)
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="local worker processes (default: one per core; 1 runs everything in this process)",
    )
    parser.add_argument(
        "--address", metavar="tcp://HOST:PORT", help="run on the dask.distributed cluster whose scheduler listens there"
    )
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        help="write runs.json, comparison.json, comparison.csv and report.html (plotly) there",
    )
    add_version_flags(parser)
    add_output_flag(parser)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kubesched.scenario.pipeline import SimulationError
    from kubesched.sim.sweep import Variant, compare, grid_variants, parse_grid, scenario_objects, tasks_for
    from kubesched.sim.sweep_engine import run_tasks

    gates = gates_of(args)
    if args.seeds < 1 or (args.workers is not None and args.workers < 1):
        raise SimulationError("--seeds and --workers: 1 or more")
    grid = parse_grid(args.grid)
    bases = [Variant(Path(p).stem, _config(p)) for p in args.config] or [Variant("defaults", None)]
    variants = [v for base in bases for v in grid_variants(base, grid)]
    _check_variants(variants, gates)
    validate = field_validation(args)
    scenarios = {_label(p): scenario_objects([p], validate) for p in args.scenario}
    tasks = tasks_for(scenarios, variants, range(args.seeds), tie_break=args.tie_break, emulated_version=gates.version)
    comparison = compare(run_tasks(tasks, workers=args.workers, address=args.address))
    from kubesched.sim.sweep_report import format_comparison, write_outputs

    if args.output == "json":
        print(json.dumps(comparison.to_dict(), indent=2), file=out)
    else:
        print(format_comparison(comparison), file=out)
    if args.output_dir:
        written = write_outputs(comparison, args.output_dir)
        print(
            f"Wrote {', '.join(p.name for p in written)} to {args.output_dir}",
            file=err if args.output == "json" else out,
        )
    return EXIT_OK


def _config(path: str) -> dict[str, Any]:
    """A configuration file as a dict, checked as simulate checks it."""
    from kubesched.config import load_config
    from kubesched.scenario.pipeline import SimulationError

    load_config(path)
    with open(path, encoding="utf-8") as file:
        data = yaml.safe_load(file)
    if not isinstance(data, dict):
        raise SimulationError(f"{path}: expected a KubeSchedulerConfiguration mapping")
    return data


def _check_variants(variants: list[Variant], features: object) -> None:
    """Every variant's configuration loads (a grid point may name an unknown plugin or field)."""
    from kubesched.config import ConfigError, load_config

    for variant in variants:
        if variant.config is not None:
            try:
                load_config(dict(variant.config), features=features)  # type: ignore[arg-type]
            except ConfigError as error:
                raise ConfigError(f"--grid, variant {variant.label!r}", str(error)) from None


def _label(path: str) -> str:
    return Path(path).name or str(path)
