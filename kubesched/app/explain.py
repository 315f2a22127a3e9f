"""``kubesched explain TRACE POD``: one pod's decision, read back from a trace file."""

from __future__ import annotations

import argparse
from typing import TextIO

from kubesched.app.cli import EXIT_OK
from kubesched.sim.explain import explain


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Read a trace written by simulate --trace (.jsonl or .jsonl.gz) and print, for one "
                          "attempt of one pod, every node's filter verdict or its raw, normalised and weighted "
                          "scores. A POD no pod has exactly is read as a workload (Deployment/ns/name) or a name "
                          "prefix: one matching pod is explained, several are listed.")
    parser.add_argument("trace", metavar="TRACE", help="trace file (.jsonl or .jsonl.gz)")
    parser.add_argument("pod", metavar="POD",
                        help="namespace/name (a bare name means the default namespace), a prefix of it, or "
                             "Kind/namespace/name of a Deployment, ReplicaSet, StatefulSet, DaemonSet or Job")
    parser.add_argument("--attempt", type=int, metavar="N", help="which attempt (default: the last)")
    parser.add_argument("--node", metavar="NAME", help="only this node, plugin by plugin")
    parser.add_argument("--width", type=int, metavar="COLUMNS",
                        help="lay out for this many columns (default: the terminal's, or $COLUMNS; unlimited when "
                             "piped)")


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    explain(args.trace, args.pod, attempt=args.attempt, node=args.node, out=out, width=args.width)
    return EXIT_OK
