"""Flags that several commands share, spelt and explained once."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING, Any

from kubesched.config.features import (
    DEFAULT_EMULATED_VERSION,
    EMULATED_VERSIONS,
    FeatureGateError,
    FeatureGates,
    check_version,
    feature_gates,
)

if TYPE_CHECKING:
    from kubesched.scenario.live import LiveSource


def add_version_flags(parser: argparse.ArgumentParser) -> None:
    """--emulated-version and --feature-gates: which kube-scheduler decides, spelt as its own flags."""
    parser.add_argument(
        "--emulated-version",
        metavar="VERSION",
        default=DEFAULT_EMULATED_VERSION,
        help=f"the kube-scheduler version whose default behaviour to reproduce: "
        f"{' or '.join(EMULATED_VERSIONS)} (default {DEFAULT_EMULATED_VERSION})",
    )
    parser.add_argument(
        "--feature-gates",
        metavar="NAME=BOOL,...",
        action="append",
        default=[],
        help="feature gates to set on top of the version's defaults, as kube-scheduler's "
        "(e.g. SchedulerAsyncPreemption=false); may be repeated",
    )


def gates_of(args: argparse.Namespace) -> FeatureGates:
    """The version and gates the flags ask for; a FeatureGateError names the flag, as kube-scheduler's do."""
    try:
        version = check_version(args.emulated_version)
    except FeatureGateError as err:
        raise FeatureGateError(
            f'invalid argument "{args.emulated_version}" for "--emulated-version" flag: {err}'
        ) from None
    try:
        return feature_gates(version, args.feature_gates)
    except FeatureGateError as err:
        raise FeatureGateError(
            f'invalid argument "{",".join(args.feature_gates)}" for "--feature-gates" flag: {err}'
        ) from None


def add_simulation_flags(parser: argparse.ArgumentParser) -> None:
    """--config, --seed, --tie-break, --validate and the version flags: what every offline run takes."""
    add_version_flags(parser)
    parser.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1) file; default: v1 defaults")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed for tie-breaking and UIDs (default 0)")
    parser.add_argument(
        "--tie-break",
        choices=("random", "name"),
        default="random",
        help="among nodes with the best score: seeded random (as kube-scheduler) or smallest name",
    )
    add_validate_flag(parser)


def add_validate_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--validate",
        type=_validate_mode,
        default="strict",
        metavar="strict|warn|ignore",
        help="unknown and duplicate fields in manifests: refused (strict or true, the default), "
        "dropped with a warning each (warn) or dropped (ignore or false), as kubectl's --validate",
    )


def _validate_mode(value: str) -> str:
    from kubesched.scenario.field_validation import validate_mode

    try:
        return validate_mode(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected strict, warn or ignore (or true, false), got {value!r}") from None


def field_validation(args: argparse.Namespace) -> str:
    """The ``--validate`` mode, with its warnings shown on stderr even where the log shows errors only."""
    if args.validate == "warn":
        logging.getLogger("kubesched.scenario.field_validation").setLevel(logging.WARNING)
    return str(args.validate)


def add_output_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text", help="output format")


def add_scenario_arguments(parser: argparse.ArgumentParser) -> None:
    """SCENARIO... and the live-cluster flags: what a command simulates (files, a live cluster, or both)."""
    parser.add_argument(
        "scenario",
        nargs="*",
        metavar="SCENARIO",
        help="manifest file or folder of manifests (with --live, added to the cluster's objects)",
    )
    add_live_flags(parser)


def add_live_flags(parser: argparse.ArgumentParser) -> None:
    """--live, --kubeconfig and --context: a live cluster, read once and never written, as the scenario."""
    group = parser.add_argument_group(
        "a live cluster as the scenario",
        "read once (one list per kind, nothing watched or written; list "
        "permission is all it needs), then simulated like manifest files",
    )
    group.add_argument(
        "--live",
        action="store_true",
        help="read the cluster kubectl would talk to: $KUBECONFIG, ~/.kube/config, then the in-cluster service account",
    )
    group.add_argument(
        "--kubeconfig", metavar="FILE", default="", help="read the cluster of this kubeconfig (implies --live)"
    )
    group.add_argument(
        "--context", metavar="NAME", help="kubeconfig context (implies --live; default: the current one)"
    )


def live_source(args: argparse.Namespace) -> LiveSource | None:
    """The live cluster the flags name, or None when they name none."""
    from kubesched.scenario.live import LiveSource

    if not (args.live or args.kubeconfig or args.context):
        return None
    return LiveSource(kubeconfig=args.kubeconfig, context=args.context)


def scenario_of(args: argparse.Namespace) -> list[Any]:
    """What to simulate: the live cluster (when asked for) first, then the SCENARIO paths."""
    live = live_source(args)
    if live is None and not args.scenario:
        from kubesched.scenario.pipeline import SimulationError

        raise SimulationError(
            "no scenario: give manifest files or folders (SCENARIO...), or read a live cluster "
            "with --live or --kubeconfig FILE"
        )
    return [*([live] if live is not None else []), *args.scenario]
