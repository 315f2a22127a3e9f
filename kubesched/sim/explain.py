"""``kubesched explain``: one pod's scheduling decision, read back from a trace file.

For each node the attempt evaluated: the Filter verdict (which plugin rejected it, and why) or, for
the feasible nodes, every Score plugin's raw score, its normalised score and the weighted score that
entered the total; nodes sorted best first, then the rejected ones. The winner and the ties close it.
Raw scores and weights come from the trace's ``rawScores`` and ``weights`` keys; traces written
without them show the weighted scores only.

The pod is named ``namespace/name``. A name no pod of the trace has exactly is read as a workload
or a prefix (:mod:`kubesched.sim.explain_names`): one matching pod is explained, several are listed
with their outcomes, none gives an error suggesting the closest names.

The layout follows the width (:mod:`kubesched.sim.explain_layout`): a table where it fits, one
block per node where it does not. In a terminal rich draws it; otherwise (a pipe, a file) it is
plain text, as wide as it needs unless ``$COLUMNS`` or ``--width`` says otherwise.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from kubesched.sim.explain_layout import (
    LAYOUTS,
    Line,
    NodeVerdict,
    Piece,
    PluginScore,
    Printer,
    format_table,
    node_layouts,
    node_verdicts,
    wrap,
)
from kubesched.sim.explain_names import matching_pods, parse_workload, pod_key, suggestions

__all__ = [
    "ExplainError",
    "NodeVerdict",
    "PluginScore",
    "PodOutcome",
    "decision",
    "explain",
    "format_table",
    "make_printer",
    "node_verdicts",
    "read_trace",
]

#: Below this, not even a node name and its verdict fit on a line.
MIN_WIDTH = 20


class ExplainError(ValueError):
    """The trace cannot be read, or holds no such pod or attempt; the message says which."""


def read_trace(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a JSON Lines trace (``.jsonl`` or ``.jsonl.gz``), one dict per attempt."""
    path = Path(path)
    opener: Any = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ExplainError(f"{path}: line {number}: not JSON: {err.msg}") from None
                if not isinstance(record, dict) or "pod" not in record:
                    raise ExplainError(f'{path}: line {number}: not a decision record (no "pod")')
                yield record
    except (OSError, EOFError) as err:
        raise ExplainError(f"{path}: {getattr(err, 'strerror', None) or err}") from None


@dataclass(frozen=True, slots=True)
class PodOutcome:
    """Where a pod of the trace ended up: its last attempt's result, node and message."""

    pod: str
    attempts: int
    result: str
    node: str
    message: str

    def describe(self) -> str:
        """``Scheduled on node-1``, or ``Unschedulable after 3 attempts: 0/3 nodes are available: …``."""
        if self.result == "Scheduled" and self.node:
            return f"Scheduled on {self.node}"
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.result}{tries}" + (f": {self.message}" if self.message else "")


def scan(trace: str | Path, key: str) -> tuple[list[dict[str, Any]], dict[str, PodOutcome]]:
    """One pass over the trace: every attempt of pod ``key``, and every pod's outcome (in trace order).

    Only the one pod's records are kept whole, so a large trace costs one small entry per pod.
    """
    mine: list[dict[str, Any]] = []
    outcomes: dict[str, PodOutcome] = {}
    for record in read_trace(trace):
        pod = str(record.get("pod"))
        if pod == key:
            mine.append(record)
        earlier = outcomes.pop(pod, None)  # re-inserted: the order is the pods' first attempts
        outcomes[pod] = PodOutcome(
            pod,
            (earlier.attempts if earlier else 0) + 1,
            str(record.get("result") or ""),
            str(record.get("node") or ""),
            " ".join(str(record.get("message") or "").split()),
        )
    return mine, outcomes


def pick_attempt(records: Sequence[dict[str, Any]], key: str, attempt: int | None) -> dict[str, Any]:
    """The pod's attempt number ``attempt``, or its last when None."""
    if attempt is None:
        return records[-1]
    for record in records:
        if record.get("attempt") == attempt:
            return record
    numbers = ", ".join(str(r.get("attempt")) for r in records)
    raise ExplainError(f"pod {key}: no attempt {attempt} (attempts: {numbers})")


def explain(
    trace: str | Path,
    pod: str,
    *,
    attempt: int | None = None,
    node: str | None = None,
    out: TextIO,
    rich_output: bool | None = None,
    width: int | None = None,
) -> None:
    """Print the decision (see the module docstring), or the pods ``pod`` names when it names several.

    ``rich_output`` None means "if ``out`` is a TTY"; ``width`` None means the terminal's width
    (``$COLUMNS`` when set), or no limit when ``out`` is no terminal and ``$COLUMNS`` is unset.
    """
    printer = make_printer(out, rich_output=rich_output, width=width)
    key = pod_key(pod)
    records, outcomes = scan(trace, key)
    if not records:
        read_as, matches = matching_pods(pod, outcomes)
        if not matches:
            raise ExplainError(_no_attempt(pod, trace, outcomes))
        if len(matches) > 1:
            printer.draw(_listing(read_as, [outcomes[m] for m in matches], trace, printer.width))
            return
        key = matches[0]
        records = [r for r in read_trace(trace) if r.get("pod") == key]
    record = pick_attempt(records, key, attempt)
    printer.draw(_decision(record, len(records), node, printer))


def make_printer(out: TextIO, *, rich_output: bool | None = None, width: int | None = None) -> Printer:
    """The printer :func:`explain` draws with (see there for ``rich_output`` and ``width``)."""
    if width is not None and width < MIN_WIDTH:
        raise ExplainError(f"width {width}: too narrow (at least {MIN_WIDTH} columns)")
    use_rich = _rich_available() and (out.isatty() if rich_output is None else rich_output)
    return Printer(out, width if width is not None else _terminal_width(out, use_rich), use_rich)


def decision(record: Mapping[str, Any], count: int, printer: Printer) -> list[Piece]:
    """One attempt's decision as :func:`explain` prints it (``count``: the pod's attempts)."""
    return _decision(record, count, None, printer)


def _decision(record: Mapping[str, Any], count: int, node: str | None, printer: Printer) -> list[Piece]:
    """The summary, then the widest layout of the nodes that fits the printer's width."""
    summary = _summary(record, count, printer.width)
    verdicts = node_verdicts(record)
    winner, ties = record.get("node"), list(record.get("ties") or [])
    if node is not None:
        mine = [v for v in verdicts if v.node == node]
        if not mine:
            raise ExplainError(f"node {node}: not evaluated in attempt {record.get('attempt')} of {record.get('pod')}")
        layouts = node_layouts(mine[0], winner, printer.width)
    else:
        layouts = [layout(verdicts, winner, ties, printer.width) for layout in LAYOUTS]
    body = next((pieces for pieces in layouts if printer.fits(pieces)), layouts[-1])
    return [*summary, *body]


def _summary(record: Mapping[str, Any], count: int, width: int | None) -> list[Line]:
    head = (
        f"Pod {record.get('pod')}, attempt {record.get('attempt')} of {count} "
        f"(profile {record.get('profile')}): {record.get('result')}"
        + (f" on {record['node']}" if record.get("node") else "")
    )
    notes = []
    if record.get("message"):
        notes.append(str(record["message"]))
    ties = record.get("ties") or []
    if len(record.get("feasible") or []) == 1:
        notes.append("Only one node passed the filters, so no Score plugin ran (as in kube-scheduler)")
    if len(ties) > 1:
        notes.append(f"Tied for the best total: {', '.join(ties)} (one chosen at random, as kube-scheduler does)")
    if record.get("nominatedNode"):
        notes.append(f"Nominated node: {record['nominatedNode']}")
    if record.get("victims"):
        notes.append(f"Victims: {', '.join(record['victims'])}")
    return [*wrap(head, width), *(line for note in notes for line in wrap(note, width, "  "))]


def _listing(read_as: str, outcomes: Sequence[PodOutcome], trace: str | Path, width: int | None) -> list[Line]:
    """Several pods match: one line each (the name whole, the outcome cut to the width), and how to pick."""
    lines = [*wrap(f"{read_as} matches {len(outcomes)} pods in {trace}:", width)]
    name_width = max(len(o.pod) for o in outcomes)
    for outcome in outcomes:
        line = f"  {outcome.pod.ljust(name_width)}  {outcome.describe()}"
        if width is not None and len(line) > width:
            line = line[: max(width - 1, len(outcome.pod) + 2)].rstrip() + "…"
        lines.append(Line(line))
    lines.extend(wrap(f"Name one to see its decision: kubesched explain {trace} {outcomes[0].pod}", width))
    return lines


def _no_attempt(pod: str, trace: str | Path, outcomes: Mapping[str, PodOutcome]) -> str:
    workload = parse_workload(pod)
    if workload is not None:
        message = f"no pod of {workload} in {trace} (its pods are named {workload.pod_shape()})"
    else:
        message = f"no attempt for pod {pod_key(pod)} in {trace}"
    close = suggestions(pod, outcomes)
    return message + (f"; did you mean {', '.join(close)}?" if close else "")


def _terminal_width(out: TextIO, use_rich: bool) -> int | None:
    """The width to lay out for: the terminal's (rich reads ``$COLUMNS`` first), else ``$COLUMNS``, else none."""
    if use_rich:
        from rich.console import Console

        return max(int(Console(file=out).width), MIN_WIDTH)
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(int(columns), MIN_WIDTH)
    return shutil.get_terminal_size().columns if out.isatty() else None


def _rich_available() -> bool:
    """rich comes with the ``sim`` extra; without it, terminals get the plain layouts."""
    return importlib.util.find_spec("rich") is not None
