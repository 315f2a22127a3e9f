"""How ``kubesched explain`` draws one decision: the layout chosen from the width it may use.

Three layouts, the widest that fits is taken:

- **table**: one row per node (total, one column per Score plugin, the verdict last), the rejected
  nodes' reasons in the verdict column. With no width to respect (output piped, no ``--width``,
  no ``$COLUMNS``) this is always the layout: one line per node suits grep and diff.
- **split**: the same table over the feasible nodes only, then the rejected nodes one per line
  (``node  Plugin: reason``), the reason wrapped under itself.
- **blocks**: one block per node, its name on the first line, then one indented ``Plugin: value``
  line per Score plugin (or the rejecting Filter plugin and its reason), wrapped by whole words.

Lines are wrapped at spaces only, never inside a word or at a hyphen, so a node name is never cut.
In a terminal, rich draws the tables and colours the selected and rejected nodes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

SCORES_TITLE = "Scores are raw/normalised/weighted; TOTAL sums the weighted scores"
BLOCKS_TITLE = "Scores are raw/normalised/weighted; the total sums the weighted scores"
SELECTED_STYLE = "bold green"
REJECTED_STYLE = "dim"
UNBOUNDED = 1_000_000


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
            scores.append(
                PluginScore(
                    plugin, (raw.get(node) or {}).get(plugin), value // weight if weight else None, weight, int(value)
                )
            )
        feasible.append(NodeVerdict(node, True, scores=tuple(scores), total=totals.get(node)))
    feasible.sort(key=lambda v: (-(v.total or 0), v.node))
    rejected = []
    for node, entry in sorted((record.get("filter") or {}).items()):
        reasons = entry.get("reasons") or []
        reason = ", ".join(str(r) for r in reasons) or str(entry.get("code") or "")
        rejected.append(NodeVerdict(node, False, plugin=str(entry.get("plugin") or ""), reason=reason))
    return feasible + rejected


def score_cell(score: PluginScore) -> str:
    """``raw/normalised/weighted``, or the weighted score alone when the trace has no raw scores."""
    if score.raw is None and score.normalised is None:
        return str(score.weighted)
    return f"{_opt(score.raw)}/{_opt(score.normalised)}/{score.weighted}"


def _opt(value: int | None) -> str:
    return "-" if value is None else str(value)


def _mark(v: NodeVerdict, winner: str | None, ties: Sequence[str]) -> str:
    if not v.feasible:
        return "rejected"
    return "selected" if v.node == winner else ("tie" if v.node in ties else "feasible")


# -- the pieces a layout is made of ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """One line of text, already wrapped; ``style`` is rich's (ignored in plain text)."""

    text: str
    style: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """Rows under a header; columns listed in ``numeric`` are right-aligned when drawn."""

    title: str
    header: list[str]
    rows: list[list[str]]
    numeric: frozenset[int] = frozenset()
    styles: tuple[str | None, ...] = ()


Piece = Line | Table


def wrap(text: str, width: int | None, indent: str = "", more: str = "  ", style: str | None = None) -> list[Line]:
    """``text`` wrapped at spaces to ``width`` (no limit when None); continuation lines indented ``more``."""
    if width is None:
        return [Line(indent + text, style)]
    lines = textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + more,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [Line(line, style) for line in lines or [indent]]


def format_table(header: list[str], rows: list[list[str]]) -> str:
    """Plain aligned columns (the last column is not padded)."""
    table = [header, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table)


# -- the layouts -----------------------------------------------------------------------------------


def _score_table(verdicts: Sequence[NodeVerdict], winner: str | None, ties: Sequence[str]) -> Table:
    """One row per node: total, one cell per Score plugin, and the verdict last (it may be long)."""
    plugins = sorted({s.plugin for v in verdicts for s in v.scores})
    rows, styles = [], []
    for v in verdicts:
        mark = _mark(v, winner, ties)
        if v.feasible:
            by_plugin = {s.plugin: score_cell(s) for s in v.scores}
            rows.append(
                [v.node, "" if v.total is None else str(v.total), *(by_plugin.get(p, "") for p in plugins), mark]
            )
        else:
            rows.append([v.node, "", *("" for _ in plugins), f"rejected by {v.plugin}: {v.reason}"])
        styles.append(SELECTED_STYLE if mark == "selected" else REJECTED_STYLE if mark == "rejected" else None)
    return Table(
        SCORES_TITLE,
        ["NODE", "TOTAL", *plugins, "VERDICT"],
        rows,
        numeric=frozenset(range(1, len(plugins) + 2)),
        styles=tuple(styles),
    )


def table_layout(
    verdicts: Sequence[NodeVerdict], winner: str | None, ties: Sequence[str], width: int | None
) -> list[Piece]:
    return [Line(""), _score_table(verdicts, winner, ties)]


def split_layout(
    verdicts: Sequence[NodeVerdict], winner: str | None, ties: Sequence[str], width: int | None
) -> list[Piece]:
    """The feasible nodes' table, then the rejected nodes one per line with their reasons wrapped."""
    feasible = [v for v in verdicts if v.feasible]
    rejected = [v for v in verdicts if not v.feasible]
    pieces: list[Piece] = [Line(""), _score_table(feasible, winner, ties)] if feasible else []
    if rejected:
        pieces.append(Line(""))
        pieces.append(Line("Rejected by a Filter plugin:"))
        name_width = max(len(v.node) for v in rejected)
        # Reasons continue under themselves while that leaves them room, else under the node.
        hang = " " * (name_width + 2) if width is None or width - name_width - 4 >= 30 else "  "
        for v in rejected:
            pieces.extend(
                wrap(f"{v.node.ljust(name_width)}  {v.plugin}: {v.reason}", width, "  ", hang, REJECTED_STYLE)
            )
    return pieces


def blocks_layout(
    verdicts: Sequence[NodeVerdict], winner: str | None, ties: Sequence[str], width: int | None
) -> list[Piece]:
    """One block per node: the name and verdict, then one ``Plugin: value`` line per plugin."""
    pieces: list[Piece] = [Line("")]
    if any(v.scores for v in verdicts):
        pieces.extend(wrap(BLOCKS_TITLE, width))
    plugin_width = max((len(s.plugin) for v in verdicts for s in v.scores), default=0) + 1
    for v in verdicts:
        mark = _mark(v, winner, ties)
        if not v.feasible:
            pieces.extend(wrap(f"{v.node}  rejected", width, style=REJECTED_STYLE))
            pieces.extend(wrap(f"{v.plugin}: {v.reason}", width, "  ", style=REJECTED_STYLE))
            continue
        total = "" if v.total is None else f", total {v.total}"
        pieces.extend(wrap(f"{v.node}  {mark}{total}", width, style=SELECTED_STYLE if mark == "selected" else "bold"))
        for s in v.scores:
            pieces.extend(wrap(f"{(s.plugin + ':').ljust(plugin_width)} {score_cell(s)}", width, "  "))
    return pieces


def node_layouts(v: NodeVerdict, winner: str | None, width: int | None) -> list[list[Piece]]:
    """``--node``: the node's table, or (narrow) the same facts one plugin a line."""
    mark = "selected" if v.node == winner else ("feasible" if v.feasible else "rejected")
    title = f"{v.node}: {mark}"
    narrow: list[Piece] = [Line(""), *wrap(title, width)]
    if not v.feasible:
        table = Table(title, ["NODE", "FILTER PLUGIN", "REASON"], [[v.node, v.plugin, v.reason]])
        narrow.extend(wrap(f"{v.plugin}: {v.reason}", width, "  "))
        return [[Line(""), table], narrow]
    rows = [[s.plugin, _opt(s.raw), _opt(s.normalised), _opt(s.weight), str(s.weighted)] for s in v.scores]
    rows.append(["total", "", "", "", "" if v.total is None else str(v.total)])
    table = Table(title, ["PLUGIN", "RAW", "NORMALISED", "WEIGHT", "WEIGHTED"], rows, numeric=frozenset(range(1, 5)))
    for s in v.scores:
        narrow.extend(
            wrap(
                f"{s.plugin}: raw {_opt(s.raw)}, normalised {_opt(s.normalised)}, "
                f"weight {_opt(s.weight)}, weighted {s.weighted}",
                width,
                "  ",
            )
        )
    narrow.extend(wrap(f"total: {_opt(v.total)}", width, "  "))
    return [[Line(""), table], narrow]


Layout = Callable[[Sequence[NodeVerdict], str | None, Sequence[str], int | None], list[Piece]]
#: Widest first: the first that fits the width is drawn (the last one always is).
LAYOUTS: tuple[Layout, ...] = (table_layout, split_layout, blocks_layout)


# -- drawing -------------------------------------------------------------------------------------


class Printer:
    """Draws lines and tables on ``out``: with rich (tables with borders, colours) or as plain text.

    ``width`` None means no limit (plain text only): tables are aligned, lines never wrapped.
    """

    def __init__(self, out: TextIO, width: int | None, use_rich: bool) -> None:
        self.width = width
        self._console: Any = None
        if use_rich:
            from rich.console import Console

            self._console = Console(file=out, width=width, highlight=False)
            self.width = self._console.width
        self._out = out

    def fits(self, pieces: Sequence[Piece]) -> bool:
        """Whether every line and table of ``pieces`` is within the width."""
        if self.width is None:
            return True
        return all(self._measure(p) <= self.width for p in pieces)

    def _measure(self, piece: Piece) -> int:
        if isinstance(piece, Line):
            return len(piece.text)
        if self._console is not None:
            # Measured without the console's width, which would cap what is measured.
            unbounded = self._console.options.update_width(UNBOUNDED)
            return int(self._console.measure(self._rich_table(piece), options=unbounded).maximum)
        return max(len(piece.title), *(len(line) for line in format_table(piece.header, piece.rows).splitlines()))

    def draw(self, pieces: Sequence[Piece]) -> None:
        for piece in pieces:
            if isinstance(piece, Table):
                self._draw_table(piece)
            elif self._console is not None:
                from rich.text import Text

                self._console.print(Text(piece.text, style=piece.style or ""), soft_wrap=True)
            else:
                print(piece.text, file=self._out)

    def _draw_table(self, table: Table) -> None:
        if self._console is not None:
            self._console.print(self._rich_table(table))
        else:
            print(f"{table.title}\n{format_table(table.header, table.rows)}", file=self._out)

    def _rich_table(self, table: Table) -> Any:
        from rich.table import Table as RichTable
        from rich.text import Text

        # Text, not str: a reason may hold brackets that rich would read as markup.
        drawn = RichTable(title=Text(table.title), title_justify="left")
        for i, name in enumerate(table.header):
            drawn.add_column(Text(name), justify="right" if i in table.numeric else "left", no_wrap=i == 0)
        for i, row in enumerate(table.rows):
            drawn.add_row(*map(Text, row), style=table.styles[i] if i < len(table.styles) else None)
        return drawn
