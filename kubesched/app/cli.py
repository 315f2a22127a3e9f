"""The ``kubesched`` command: one registry of subcommands, ``main``, and the one-line error report.

Each subcommand is registered once in :data:`COMMANDS` with the module that holds it; that module
builds its flags (``add_arguments(parser)``) and runs it (``main(args, out, err)``, the exit status).
Only the command being run is imported and given its flags: the others appear by name and help line,
so ``kubesched --help``, ``kubesched version`` and ``kubesched run`` never load the simulator, and a
command's heavy parts (the simulator, the live client, plotly) are imported only when it runs.

Bad input (a manifest, a config, an unknown plugin, a missing file) ends with exit status 2 and
one line, ``kubesched: error: <message>``, whose message names the file, document and field; a
traceback would only hide that. A simulation that ran exits 0 whatever became of the pods: pods
left pending are a result, not an error.

Output piped into a reader that stops early (``kubesched simulate … | head``) ends quietly with
status 0, as Unix tools do: the reader asked for no more. Only a closed standard output is taken so;
any other broken pipe is an error like the rest.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import select
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NoReturn

PROG = "kubesched"
EXIT_OK = 0
EXIT_BAD_INPUT = 2


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand: its name, its line in ``kubesched --help``, and the module that holds it.

    ``quiet_log``: the log shows errors only (warnings with ``--verbose``), and none of kube-scheduler's
    per-pod lines, because the command's own output already lists the warnings and pods that matter.
    """

    name: str
    help: str
    module: str
    quiet_log: bool = False


COMMANDS: tuple[Command, ...] = (
    Command(
        "simulate",
        "schedule the pending pods of a scenario on an in-memory cluster",
        "kubesched.app.simulate",
        quiet_log=True,
    ),
    Command("run", "schedule a live cluster through its API server", "kubesched.app.run"),
    Command(
        "capacity",
        "how many more replicas of a pod fit (cluster-capacity's question)",
        "kubesched.app.capacity",
        quiet_log=True,
    ),
    Command(
        "plan",
        "the fewest copies of a node to add so that every pending pod is scheduled",
        "kubesched.app.plan",
        quiet_log=True,
    ),
    Command(
        "explain",
        "one pod's decision from a trace, or every pending pod grouped by cause with what would help",
        "kubesched.app.explain",
        quiet_log=True,
    ),
    Command(
        "sweep",
        "compare configurations over scenarios and seeds, with confidence intervals, on a pool",
        "kubesched.app.sweep",
        quiet_log=True,
    ),
    Command(
        "snapshot",
        "write a live cluster's nodes, pods and scheduling objects as manifests for simulate",
        "kubesched.app.snapshot",
        quiet_log=True,
    ),
    Command("generate", "write a generated scenario folder", "kubesched.app.generate"),
    Command("version", "print the kubesched version", "kubesched.app.version"),
)
BY_NAME = {command.name: command for command in COMMANDS}

#: Errors that mean "fix your input", reported as one line rather than a traceback, by (module, class).
#: They are looked up only after a command failed, in the modules already loaded (an error whose module
#: was never imported cannot have been raised), so that naming them here imports nothing.
INPUT_ERRORS: tuple[tuple[str, str], ...] = (
    ("builtins", "OSError"),
    ("builtins", "RecursionError"),
    ("kubesched.api.errors", "ObjectError"),
    ("kubesched.config.errors", "ConfigError"),
    ("kubesched.framework.extension_points", "FrameworkError"),
    ("kubesched.plugins.registry", "PluginLoadError"),
    ("kubesched.scenario.manifests", "ManifestError"),
    ("kubesched.scenario.pipeline", "SimulationError"),
    ("kubesched.scenario.live", "LiveReadError"),
    ("kubesched.scenario.generate.openb", "TraceError"),
    ("kubesched.sim.explain", "ExplainError"),
    ("kubesched.live.client_config", "ClientConfigError"),
    ("kubesched.app.generate", "GenerateError"),
    ("kubesched.app.simulate", "OutputPathError"),
    ("kubesched.app.snapshot", "SnapshotError"),
    ("kubesched.util.extras", "MissingExtraError"),
    ("kubesched.config.features", "FeatureGateError"),
)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, like every other input error (``--help`` shows the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the flags of ``commands`` (default: every command) and the others by name only."""
    wanted = set(BY_NAME if commands is None else commands)
    parser = _Parser(
        prog=PROG, description="kube-scheduler rebuilt in Python: a real scheduler and an explainable simulator."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        if command.name in wanted:
            importlib.import_module(command.module).add_arguments(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    # The first word that is no option names the command (the top level has no option taking a value).
    named = next((word for word in args_list if not word.startswith("-")), None)
    parser = build_parser([named] if named in BY_NAME else [])
    args = parser.parse_args(args_list)
    command = BY_NAME.get(args.command or "")
    if command is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    if command.quiet_log:
        logging.basicConfig(
            level=logging.WARNING if getattr(args, "verbose", False) else logging.ERROR,
            format=f"{PROG}: %(levelname)s: %(message)s",
            stream=sys.stderr,
            force=True,
        )
        from kubesched.klog.options import unstructured_only

        logging.root.handlers[0].addFilter(unstructured_only)  # the command's output reports each pod
    try:
        status: int = importlib.import_module(command.module).main(args, sys.stdout, sys.stderr)
        sys.stdout.flush()  # a reader gone shows here when the output was buffered
    except Exception as err:
        if isinstance(err, OSError) and err.errno == errno.EPIPE and stdout_closed():
            silence_stdout()
            return EXIT_OK
        if not is_input_error(err):
            raise
        print(f"{PROG}: error: {one_line(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return status


def stdout_closed() -> bool:
    """Whether standard output is a pipe or socket whose reader has gone (poll reports an error or hang-up
    on it); where that cannot be asked, a broken pipe is taken to be standard output's."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False  # not a file (a test's capture): the broken pipe was something else's
    if not hasattr(select, "poll"):
        return True
    poller = select.poll()
    poller.register(fd, 0)  # errors and hang-ups are always reported
    return any(events for _, events in poller.poll(0))


def silence_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush finds nothing to
    write into the closed pipe (and prints no "Exception ignored" note)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def is_input_error(err: BaseException) -> bool:
    """Whether ``err`` is one of :data:`INPUT_ERRORS` (see there)."""
    for module_name, class_name in INPUT_ERRORS:
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if isinstance(cls, type) and isinstance(err, cls):
            return True
    return False


def one_line(err: BaseException) -> str:
    """The error's message on one line (an OSError as ``file: reason``)."""
    if isinstance(err, OSError) and err.strerror:
        where = f"{err.filename}: " if err.filename else ""
        return f"{where}{err.strerror}"
    return " ".join(str(err).split()) or type(err).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
