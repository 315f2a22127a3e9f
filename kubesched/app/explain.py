"""``kubesched explain TRACE POD``: one pod's decision, read back from a trace file."""

from __future__ import annotations

import argparse
from typing import TextIO

from kubesched.app.cli import EXIT_OK
from kubesched.sim.explain import explain


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Read a trace written by simulate --trace (.jsonl or .jsonl.gz) and print, for one "
                          "attempt of one pod, every node's filter verdict or its raw, normalised and weighted "
                          "scores.")
    parser.add_argument("trace", metavar="TRACE", help="trace file (.jsonl or .jsonl.gz)")
    parser.add_argument("pod", metavar="POD", help="namespace/name (a bare name means the default namespace)")
    parser.add_argument("--attempt", type=int, metavar="N", help="which attempt (default: the last)")
    parser.add_argument("--node", metavar="NAME", help="only this node, plugin by plugin")


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    explain(args.trace, args.pod, attempt=args.attempt, node=args.node, out=out)
    return EXIT_OK
