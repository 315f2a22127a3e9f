"""``kubesched version``: the installed version, without loading anything else."""

from __future__ import annotations

import argparse
from typing import TextIO

from kubesched import __version__
from kubesched.app.cli import EXIT_OK, PROG
from kubesched.config.features import DEFAULT_EMULATED_VERSION, EMULATED_VERSIONS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No flags."""


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    print(f"{PROG} {__version__}", file=out)
    versions = ", ".join(f"v{v}" for v in EMULATED_VERSIONS)
    print(f"emulates kube-scheduler {versions} (--emulated-version; default v{DEFAULT_EMULATED_VERSION})", file=out)
    return EXIT_OK
