"""Flags that several commands share, spelt and explained once."""

from __future__ import annotations

import argparse
import logging

from kubesched.config.features import (
    DEFAULT_EMULATED_VERSION,
    EMULATED_VERSIONS,
    FeatureGateError,
    FeatureGates,
    check_version,
    feature_gates,
)


def add_version_flags(parser: argparse.ArgumentParser) -> None:
    """--emulated-version and --feature-gates: which kube-scheduler decides, spelt as its own flags."""
    parser.add_argument("--emulated-version", metavar="VERSION", default=DEFAULT_EMULATED_VERSION,
                        help=f"the kube-scheduler version whose default behaviour to reproduce: "
                             f"{' or '.join(EMULATED_VERSIONS)} (default {DEFAULT_EMULATED_VERSION})")
    parser.add_argument("--feature-gates", metavar="NAME=BOOL,...", action="append", default=[],
                        help="feature gates to set on top of the version's defaults, as kube-scheduler's "
                             "(e.g. SchedulerAsyncPreemption=false); may be repeated")


def gates_of(args: argparse.Namespace) -> FeatureGates:
    """The version and gates the flags ask for; a FeatureGateError names the flag, as kube-scheduler's do."""
    try:
        version = check_version(args.emulated_version)
    except FeatureGateError as err:
        raise FeatureGateError(f'invalid argument "{args.emulated_version}" for "--emulated-version" flag: '
                               f"{err}") from None
    try:
        return feature_gates(version, args.feature_gates)
    except FeatureGateError as err:
        raise FeatureGateError(f'invalid argument "{",".join(args.feature_gates)}" for "--feature-gates" flag: '
                               f"{err}") from None


def add_simulation_flags(parser: argparse.ArgumentParser) -> None:
    """--config, --seed, --tie-break, --validate and the version flags: what every offline run takes."""
    add_version_flags(parser)
    parser.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1) file; default: v1 defaults")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed for tie-breaking and UIDs (default 0)")
    parser.add_argument("--tie-break", choices=("random", "name"), default="random",
                        help="among nodes with the best score: seeded random (as kube-scheduler) or smallest name")
    parser.add_argument("--validate", type=_validate_mode, default="strict", metavar="strict|warn|ignore",
                        help="unknown and duplicate fields in manifests: refused (strict or true, the default), "
                             "dropped with a warning each (warn) or dropped (ignore or false), as kubectl's --validate")


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
