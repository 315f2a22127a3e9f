"""``kubesched explain``: one pod's scheduling decision, read back from a trace file.

For each node the attempt evaluated: the Filter verdict (which plugin rejected it, and why) or, for
the feasible nodes, every Score plugin's raw score, its normalised score and the weighted score that
entered the total; nodes sorted best first, then the rejected ones. The winner and the ties close it.
Raw scores and weights come from the trace's ``rawScores`` and ``weights`` keys; traces written
without them show the weighted scores only.

In a terminal the tables are drawn with rich; otherwise (a pipe, a file) as plain aligned text.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO


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
                    raise ExplainError(f"{path}: line {number}: not a decision record (no \"pod\")")
                yield record
    except (OSError, EOFError) as err:
        raise ExplainError(f"{path}: {getattr(err, 'strerror', None) or err}") from None


def find_attempt(records: Iterator[dict[str, Any]], pod: str, attempt: int | None) -> tuple[dict[str, Any], int]:
    """The pod's attempt (the last when ``attempt`` is None) and how many attempts the pod had.

    ``pod`` is ``namespace/name``; a bare name means the default namespace.
    """
    key = pod if "/" in pod else f"default/{pod}"
    mine = [r for r in records if r.get("pod") == key]
    if not mine:
        raise ExplainError(f"pod {key}: no attempt in the trace")
    if attempt is None:
        return mine[-1], len(mine)
    for record in mine:
        if record.get("attempt") == attempt:
            return record, len(mine)
    numbers = ", ".join(str(r.get("attempt")) for r in mine)
    raise ExplainError(f"pod {key}: no attempt {attempt} (attempts: {numbers})")


@dataclass(frozen=True, slots=True)
class PluginScore:
    plugin: str
    raw: int | None
    normalised: int | None
    weight: int | None
    weighted: int


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """One node's outcome: rejected (``plugin`` and ``reason``) or feasible with ``scores`` and ``total``."""

    node: str
    feasible: bool
    plugin: str = ""
    reason: str = ""
    scores: tuple[PluginScore, ...] = ()
    total: int | None = None


def _raw_by_node(record: Mapping[str, Any]) -> Mapping[str, Mapping[str, int]]:
    """``rawScores`` as {node: {plugin: raw}}: traces hold one column per plugin over ``feasible``
    (earlier ones held the node-keyed map itself)."""
    raw = record.get("rawScores") or {}
    if not all(isinstance(column, list) for column in raw.values()):
        return raw
    by_node: dict[str, dict[str, int]] = {}
    for plugin, column in raw.items():
        for node, value in zip(record.get("feasible") or [], column, strict=False):
            if value is not None:
                by_node.setdefault(node, {})[plugin] = value
    return by_node


def node_verdicts(record: Mapping[str, Any]) -> list[NodeVerdict]:
    """Feasible nodes best total first (then by name), then rejected nodes by name."""
    raw = _raw_by_node(record)
    weights: Mapping[str, int] = record.get("weights") or {}
    weighted: Mapping[str, Mapping[str, int]] = record.get("scores") or {}
    totals: Mapping[str, int] = record.get("total") or {}
    feasible = []
    for node in record.get("feasible") or []:
        scores = []
        for plugin, value in sorted((weighted.get(node) or {}).items()):
            weight = weights.get(plugin)
            scores.append(PluginScore(plugin, (raw.get(node) or {}).get(plugin),
                                      value // weight if weight else None, weight, int(value)))
        feasible.append(NodeVerdict(node, True, scores=tuple(scores), total=totals.get(node)))
    feasible.sort(key=lambda v: (-(v.total or 0), v.node))
    rejected = []
    for node, entry in sorted((record.get("filter") or {}).items()):
        reasons = entry.get("reasons") or []
        reason = ", ".join(str(r) for r in reasons) or str(entry.get("code") or "")
        rejected.append(NodeVerdict(node, False, plugin=str(entry.get("plugin") or ""), reason=reason))
    return feasible + rejected


def _score_cell(score: PluginScore) -> str:
    if score.raw is None and score.normalised is None:
        return str(score.weighted)
    raw = "-" if score.raw is None else str(score.raw)
    norm = "-" if score.normalised is None else str(score.normalised)
    return f"{raw}/{norm}/{score.weighted}"


def _rows(verdicts: Sequence[NodeVerdict], winner: str | None,
          ties: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """One row per node: total, one cell per Score plugin, and the verdict last (it may be long)."""
    plugins = sorted({s.plugin for v in verdicts for s in v.scores})
    header = ["NODE", "TOTAL", *plugins, "VERDICT"]
    rows = []
    for v in verdicts:
        if v.feasible:
            mark = "selected" if v.node == winner else ("tie" if v.node in ties else "feasible")
            by_plugin = {s.plugin: _score_cell(s) for s in v.scores}
            rows.append([v.node, "" if v.total is None else str(v.total),
                         *(by_plugin.get(p, "") for p in plugins), mark])
        else:
            rows.append([v.node, "", *("" for _ in plugins), f"rejected by {v.plugin}: {v.reason}"])
    return header, rows


def _summary_lines(record: Mapping[str, Any], count: int) -> list[str]:
    lines = [f"Pod {record.get('pod')}, attempt {record.get('attempt')} of {count} "
             f"(profile {record.get('profile')}): {record.get('result')}"
             + (f" on {record['node']}" if record.get("node") else "")]
    if record.get("message"):
        lines.append(f"  {record['message']}")
    ties = record.get("ties") or []
    if len(record.get("feasible") or []) == 1:
        lines.append("  Only one node passed the filters, so no Score plugin ran (as in kube-scheduler)")
    if len(ties) > 1:
        lines.append(f"  Tied for the best total: {', '.join(ties)} (one chosen at random, as kube-scheduler does)")
    if record.get("nominatedNode"):
        lines.append(f"  Nominated node: {record['nominatedNode']}")
    if record.get("victims"):
        lines.append(f"  Victims: {', '.join(record['victims'])}")
    return lines


def _node_detail(v: NodeVerdict) -> tuple[list[str], list[list[str]]]:
    if not v.feasible:
        return ["NODE", "FILTER PLUGIN", "REASON"], [[v.node, v.plugin, v.reason]]
    header = ["PLUGIN", "RAW", "NORMALISED", "WEIGHT", "WEIGHTED"]
    rows = [[s.plugin, _opt(s.raw), _opt(s.normalised), _opt(s.weight), str(s.weighted)] for s in v.scores]
    rows.append(["total", "", "", "", "" if v.total is None else str(v.total)])
    return header, rows


def _opt(value: int | None) -> str:
    return "-" if value is None else str(value)


def explain(trace: str | Path, pod: str, *, attempt: int | None = None, node: str | None = None,
            out: TextIO, rich_output: bool | None = None) -> None:
    """Print the decision (see the module docstring); ``rich_output`` None means "if ``out`` is a TTY"."""
    record, count = find_attempt(read_trace(trace), pod, attempt)
    verdicts = node_verdicts(record)
    winner, ties = record.get("node"), list(record.get("ties") or [])
    if node is not None:
        verdicts = [v for v in verdicts if v.node == node]
        if not verdicts:
            raise ExplainError(f"node {node}: not evaluated in attempt {record.get('attempt')} of {record.get('pod')}")
        header, rows = _node_detail(verdicts[0])
        title = f"{node}: " + ("selected" if node == winner else "feasible" if verdicts[0].feasible else "rejected")
    else:
        header, rows = _rows(verdicts, winner, ties)
        title = "Scores are raw/normalised/weighted; TOTAL sums the weighted scores"
    summary = _summary_lines(record, count)
    use_rich = out.isatty() if rich_output is None else rich_output
    if use_rich:
        _print_rich(summary, title, header, rows, out)
    else:
        print("\n".join(summary), file=out)
        print(f"\n{title}\n{format_table(header, rows)}", file=out)


def format_table(header: list[str], rows: list[list[str]]) -> str:
    """Plain aligned columns (the last column is not padded)."""
    table = [header, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table)


def _print_rich(summary: list[str], title: str, header: list[str], rows: list[list[str]], out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out)
    for line in summary:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    table = Table(title=title, title_justify="left")
    for i, name in enumerate(header):
        numeric = (0 < i < len(header) - 1 and header[-1] == "VERDICT") or name in (
            "RAW", "NORMALISED", "WEIGHT", "WEIGHTED")
        table.add_column(name, justify="right" if numeric else "left")
    for row in rows:
        verdict = row[-1] if header[-1] == "VERDICT" else ""
        style = "bold green" if verdict == "selected" else ("dim" if verdict.startswith("rejected") else None)
        table.add_row(*row, style=style)
    console.print(table)
