"""``kubesched version``: the installed version, without loading anything else."""

from __future__ import annotations

import argparse
from typing import TextIO

from kubesched import __version__
from kubesched.app.cli import EXIT_OK, PROG


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No flags."""


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    print(f"{PROG} {__version__}", file=out)
    return EXIT_OK
