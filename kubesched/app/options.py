"""Flags that several commands share, spelt and explained once."""

from __future__ import annotations

import argparse


def add_simulation_flags(parser: argparse.ArgumentParser) -> None:
    """--config, --seed and --tie-break: what every offline run takes."""
    parser.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1) file; default: v1 defaults")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed for tie-breaking and UIDs (default 0)")
    parser.add_argument("--tie-break", choices=("random", "name"), default="random",
                        help="among nodes with the best score: seeded random (as kube-scheduler) or smallest name")


def add_output_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text", help="output format")
