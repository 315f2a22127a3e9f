"""Flags that several commands share, spelt and explained once."""

from __future__ import annotations

import argparse
import logging


def add_simulation_flags(parser: argparse.ArgumentParser) -> None:
    """--config, --seed, --tie-break and --validate: what every offline run takes."""
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
