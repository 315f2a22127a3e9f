"""What one scheduling attempt told the recorder, kept in the columnar form the cycle already has.

The scheduling cycle hands over snapshot rows, the Status objects the Filter plugins returned and
the score arrays of the Score plugins; an :class:`Attempt` keeps references to them and nothing
else, so reporting costs a few attribute writes per cycle. A dict per node and plugin is made only
when someone reads the attempt as an :class:`~kubesched.recording.trace.AttemptRecord` (:meth:`Attempt.to_record`)
or streams it as JSON (:mod:`kubesched.recording.jsonl`).

Rows index the node-name array of the snapshot the cycle ran on. The snapshot replaces that array
(never edits it) when the node set changes, so an attempt keeps the names it was decided on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from kubesched.framework.status import Status
from kubesched.recording.trace import SCHEDULED, AttemptRecord

#: The plugin and code the trace shows for nodes a PreFilterResult left out.
PRE_FILTER_RESULT = "PreFilterResult"
SKIPPED_CODE = "Skipped"
PRE_FILTER_RESULT_SKIPPED = "node not in the PreFilterResult node set (not evaluated)"
SKIPPED_ENTRY: dict[str, Any] = {
    "plugin": PRE_FILTER_RESULT,
    "code": SKIPPED_CODE,
    "reasons": [PRE_FILTER_RESULT_SKIPPED],
}

_NO_ROWS = np.zeros(0, dtype=np.int64)


class FilterPart:
    """Nodes rejected at one step of the Filter phase: ``rows`` with one Status each, or one trace
    entry ({"plugin", "code", "reasons"}) that stands for all of them."""

    __slots__ = ("entry", "rows", "statuses")

    def __init__(
        self, rows: np.ndarray, statuses: Sequence[Status] | None, entry: dict[str, Any] | None = None
    ) -> None:
        self.rows = rows
        self.statuses = statuses
        self.entry = entry


class NameOrder:
    """Each node's position in name order, and the names in that order, for the last node-name array
    asked about (a sink keeps one, so ranking the names costs once per node set, not once per attempt)."""

    __slots__ = ("_cached",)

    def __init__(self) -> None:
        # One attribute, so that binding threads reporting at once never pair names with another's ranks.
        self._cached: tuple[np.ndarray | None, np.ndarray, list[str]] = (None, _NO_ROWS, [])

    def rank(self, names: np.ndarray) -> np.ndarray:
        return self.ranked(names)[0]

    def ranked(self, names: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """``names``' ranks, and the names in name order (the name of rank ``r`` is ``in_order[r]``)."""
        cached_names, rank, in_order = self._cached
        if names is not cached_names:
            by_name = np.argsort(names, kind="stable")
            rank = np.empty(len(names), dtype=np.int64)
            rank[by_name] = np.arange(len(names), dtype=np.int64)
            in_order = names[by_name].tolist()
            self._cached = (names, rank, in_order)
        return rank, in_order


#: Above every rank and sort key _minima sees: marks a minimum already taken.
_CEILING = int(np.iinfo(np.int64).max)
#: Up to this many values, sorting them as a Python list costs less than NumPy's per-call overhead.
_FEW = 64
#: Up to this many minima, taking them one by one (:func:`_minima`) costs less than a partition.
_FEW_MINIMA = 8


def _smallest_values(values: np.ndarray, k: int, *, scratch: bool = False) -> list[int]:
    """The ``k`` smallest of ``values`` (int64, all distinct), smallest first. ``scratch``: ``values``
    is the caller's to overwrite, so the minima taken one by one need no copy of it."""
    if len(values) <= _FEW:
        return sorted(values.tolist())[:k]
    if k <= _FEW_MINIMA:
        return _minima(values if scratch else values.copy(), k)[0]
    smallest: list[int] = values[_smallest(values, k)].tolist()
    return smallest


def _smallest(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` smallest of ``values`` (int64, all distinct), smallest first. A few minima
    found one by one cost less than a partition of thousands of values."""
    n = len(values)
    if n <= k:
        return np.argsort(values)
    if n <= _FEW:
        listed = values.tolist()
        return np.array(sorted(range(n), key=listed.__getitem__)[:k], dtype=np.int64)
    if k > _FEW_MINIMA:
        best = np.argpartition(values, k - 1)[:k]
        return best[np.argsort(values[best])]
    return np.array(_minima(values.copy(), k)[1], dtype=np.int64)


def _minima(left: np.ndarray, k: int) -> tuple[list[int], list[int]]:
    """The ``k`` smallest of ``left`` (at least ``k`` values) and their positions, smallest first, by
    ``k`` argmins; each minimum is overwritten with :data:`_CEILING` once read."""
    values: list[int] = []
    positions: list[int] = []
    for _ in range(k):
        i = int(left.argmin())
        values.append(left.item(i))
        positions.append(i)
        left[i] = _CEILING
    return values, positions


class NullAttempt:
    """The attempt of a recorder that keeps nothing: every report is dropped on the floor."""

    __slots__ = ()
    enabled = False
    raw_scores = False

    def rejected_all(self, names: np.ndarray, status: Status) -> None: ...
    def skipped_outside(self, names: np.ndarray, rows: np.ndarray) -> None: ...
    def rejected(self, names: np.ndarray, rows: np.ndarray, statuses: Sequence[Status]) -> None: ...
    def evaluated(self, count: int) -> None: ...
    def feasible(self, names: np.ndarray, rows: np.ndarray) -> None: ...
    def scored(
        self,
        rows: np.ndarray,
        plugin_scores: dict[str, np.ndarray],
        total: np.ndarray,
        raw_scores: dict[str, np.ndarray],
        tie_rows: np.ndarray,
    ) -> None: ...
    def post_filtered(self, plugin: str, message: str, victims: Sequence[str] | None, nominated: str) -> None: ...
    def failed_at(self, point: str, plugin: str, message: str) -> None: ...
    def weighted(self, weights: dict[str, int]) -> None: ...
    def extender_verdicts(self) -> None:
        return None

    def failed(self, result: str, message: str, nominated_node: str | None) -> None: ...
    def scheduled(self, node: str) -> None: ...


NULL_ATTEMPT = NullAttempt()


class AttemptSink(Protocol):
    """Where an attempt goes when it ends (a recorder): the attempt knows no more of its recorder."""

    @property
    def raw_scores(self) -> bool:
        """Whether the cycle should keep every Score plugin's raw scores."""
        ...

    def finished(self, attempt: Attempt) -> None: ...


class Attempt:
    """One attempt as the cycle reported it; :meth:`to_record` turns it into the trace's dicts."""

    __slots__ = (
        "_sink",
        "attempt",
        "cycle",
        "details",
        "evaluated_nodes",
        "feasible_rows",
        "filter_parts",
        "message",
        "names",
        "node",
        "nominated_node",
        "plugin_scores",
        "pod",
        "profile",
        "raw_score_arrays",
        "result",
        "scored_rows",
        "start_nominated_node",
        "tie_rows",
        "total_scores",
        "victims",
    )
    enabled = True

    def __init__(
        self,
        sink: AttemptSink,
        pod: str,
        attempt: int,
        profile: str,
        start_nominated_node: str | None = None,
        cycle: int = 0,
    ) -> None:
        self._sink = sink
        self.pod = pod
        self.attempt = attempt
        self.profile = profile
        #: Order of the scheduling cycle that made the attempt: an attempt ends when its binding cycle
        #: does (which can wait in Permit or PreBind), so sort by this for the order attempts began.
        self.cycle = cycle
        self.start_nominated_node = start_nominated_node
        self.result = ""
        self.node: str | None = None
        self.message: str | None = None
        self.nominated_node: str | None = None
        self.victims: list[str] | None = None
        self.evaluated_nodes = 0
        #: The snapshot's node-name array the rows below index.
        self.names: np.ndarray | None = None
        self.filter_parts: list[FilterPart] = []
        self.feasible_rows: np.ndarray = _NO_ROWS
        self.scored_rows: np.ndarray = _NO_ROWS
        #: Plugin -> weighted score over ``scored_rows``; total over them; raw scores when asked for.
        self.plugin_scores: dict[str, np.ndarray] = {}
        self.total_scores: np.ndarray = _NO_ROWS
        self.raw_score_arrays: dict[str, np.ndarray] = {}
        #: The scored rows sharing the best total (every one of them, whichever the cycle chose).
        self.tie_rows: np.ndarray = _NO_ROWS
        #: "postfilter" / "reserve" / "permit" / "bind" -> {plugin: message}; "extender" -> what the
        #: extenders said (see :meth:`extender_verdicts`).
        self.details: dict[str, dict[str, Any]] = {}

    @property
    def raw_scores(self) -> bool:
        """Whether the cycle should keep the Score plugins' raw scores (only annotations read them)."""
        return self._sink.raw_scores

    # -- reports from the scheduling cycle -----------------------------------------------------------
    def rejected_all(self, names: np.ndarray, status: Status) -> None:
        """PreFilter rejected the pod: the same status stands for every node."""
        self.names = names
        self.filter_parts.append(FilterPart(np.arange(len(names), dtype=np.int64), None, filter_entry(status)))
        self.evaluated_nodes = len(names)

    def skipped_outside(self, names: np.ndarray, rows: np.ndarray) -> None:
        """A PreFilterResult narrowed the candidates to ``rows``: every other node was skipped."""
        self.names = names
        outside = np.setdiff1d(np.arange(len(names), dtype=np.int64), rows, assume_unique=True)
        self.filter_parts.append(FilterPart(outside, None, dict(SKIPPED_ENTRY)))

    def rejected(self, names: np.ndarray, rows: np.ndarray, statuses: Sequence[Status]) -> None:
        """Filter rejected ``rows``, one status each (the first plugin that said no)."""
        if len(rows):
            self.names = names
            self.filter_parts.append(FilterPart(rows, statuses, None))

    def evaluated(self, count: int) -> None:
        self.evaluated_nodes = count

    def feasible(self, names: np.ndarray, rows: np.ndarray) -> None:
        self.names = names
        self.feasible_rows = rows
        self.tie_rows = rows[:1] if len(rows) == 1 else _NO_ROWS

    def scored(
        self,
        rows: np.ndarray,
        plugin_scores: dict[str, np.ndarray],
        total: np.ndarray,
        raw_scores: dict[str, np.ndarray],
        tie_rows: np.ndarray,
    ) -> None:
        """Scores over ``rows``; ``tie_rows`` are all the rows whose total is the best one."""
        self.scored_rows = rows
        self.plugin_scores = plugin_scores
        self.total_scores = total
        self.raw_score_arrays = raw_scores
        self.tie_rows = tie_rows

    def post_filtered(self, plugin: str, message: str, victims: Sequence[str] | None, nominated: str) -> None:
        self.details["postfilter"] = {plugin: message}
        if victims:
            self.victims = sorted(victims)
        if nominated:
            self.nominated_node = nominated

    def failed_at(self, point: str, plugin: str, message: str) -> None:
        """A Reserve, Permit or Bind plugin said no (``point`` is "reserve", "permit" or "bind")."""
        self.details[point] = {plugin: message}

    def weighted(self, weights: dict[str, int]) -> None:
        """The Score plugins' weights, kept beside the raw scores (explain shows raw, normalised, weighted)."""
        self.details["weights"] = weights

    def extender_verdicts(self) -> dict[str, Any]:
        """The map the extenders write their verdicts into (filter, prioritize, preempt, bind)."""
        return self.details.setdefault("extender", {})

    # -- the end of the attempt ------------------------------------------------------------------------
    def failed(self, result: str, message: str, nominated_node: str | None) -> None:
        self.result = result
        self.message = message
        if nominated_node:
            self.nominated_node = nominated_node
        self._sink.finished(self)

    def scheduled(self, node: str) -> None:
        self.result = SCHEDULED
        self.node = node
        self._sink.finished(self)

    # -- reading -----------------------------------------------------------------------------------------
    @property
    def succeeded(self) -> bool:
        return self.result == SCHEDULED

    def feasible_count(self) -> int:
        return len(self.feasible_rows) if self.succeeded else 0

    def feasible_names(self) -> list[str]:
        """Nodes that passed every filter, by name (empty for a failed attempt, as in the trace)."""
        if not self.succeeded or self.names is None:
            return []
        return sorted(self.names[self.feasible_rows].tolist())

    def tie_names(self) -> list[str]:
        if not self.succeeded or self.names is None:
            return []
        return sorted(self.names[self.tie_rows].tolist())

    def filter_entries(self) -> dict[str, dict[str, Any]]:
        """Rejected node -> {"plugin", "code", "reasons"}; a later report on a node replaces an earlier one."""
        out: dict[str, dict[str, Any]] = {}
        if self.names is None:
            return out
        for part in self.filter_parts:
            names = self.names[part.rows].tolist()
            if part.statuses is None:
                for name in names:
                    out[name] = part.entry  # type: ignore[assignment]
            else:
                made: dict[int, dict[str, Any]] = {}
                for name, status in zip(names, part.statuses, strict=True):
                    e = made.get(id(status))
                    if e is None:
                        e = made[id(status)] = filter_entry(status)
                    out[name] = e
        return out

    def top_nodes(self, k: int, order: NameOrder | None = None) -> list[tuple[str, int]]:
        """The ``k`` best (node, total score) pairs of a scheduled attempt, best first, then by name.

        Every scheduled attempt asks, so the pairs are read off the sort keys (the ranks, or the ranks
        and totals as one integer) without the positions :meth:`top_record` needs. The nodes sharing the
        best total are the tie rows the cycle reported (:meth:`scored`), so they are not searched for."""
        names = self.names
        if not self.succeeded or names is None or not len(self.total_scores) or k <= 0:
            return []
        totals = np.asarray(self.total_scores, dtype=np.int64)
        ranks, in_order = (order or NameOrder()).ranked(names)
        if len(self.tie_rows) >= k:  # the k best all share the best total: the first k of them by name
            top = totals.item(totals.argmax())
            return [(in_order[r], top) for r in _smallest_values(ranks[self.tie_rows], k, scratch=True)]
        # Best total first, then name order, as one integer per node: the rank less the total times n
        # (ranks are distinct, below n), so key // n is minus the total and key % n the rank.
        n = len(names)
        keys = ranks[self.scored_rows] - totals * n
        return [(in_order[key % n], -(key // n)) for key in _smallest_values(keys, k, scratch=True)]

    def _top(self, k: int, order: NameOrder | None = None) -> list[tuple[str, int]]:
        """(name, position in the scored rows) of the ``k`` best-scoring nodes, best first, then by name."""
        names = self.names
        if names is None or not len(self.total_scores) or k <= 0:
            return []
        totals = np.asarray(self.total_scores, dtype=np.int64)
        ranks = (order or NameOrder()).rank(names)
        rows = self.scored_rows
        top = totals.max()
        tied = (totals == top).nonzero()[0]
        if len(tied) >= k:  # the k best all share the best total: the first k of them by name
            best = tied[_smallest(ranks[rows[tied]], k)]
        else:
            # Best total first, then name order, as one integer per node (ranks are distinct, below len(names)).
            best = _smallest((int(top) - totals) * len(names) + ranks[rows], k)
        return list(zip(names[rows[best]].tolist(), best.tolist(), strict=True))

    def filter_counts(self) -> dict[tuple[str, str], int]:
        """(plugin, reasons joined by ", " or the code) -> how many nodes it rejected for that, the last
        report on a node counting; what the annotations of a big cluster show instead of every node."""
        if self.names is None or not self.filter_parts:
            return {}
        if len(self.filter_parts) > 1:
            rows = np.concatenate([p.rows for p in self.filter_parts])
            if len(np.unique(rows)) != len(rows):
                counts: dict[tuple[str, str], int] = {}
                for entry in self.filter_entries().values():
                    key = (str(entry["plugin"]), _verdict(entry))
                    counts[key] = counts.get(key, 0) + 1
                return counts
        out: dict[tuple[str, str], int] = {}
        for part in self.filter_parts:
            if part.statuses is None:
                assert part.entry is not None
                key = (str(part.entry["plugin"]), _verdict(part.entry))
                out[key] = out.get(key, 0) + len(part.rows)
                continue
            by_status: dict[int, int] = {}
            first: dict[int, Status] = {}
            for status in part.statuses:
                by_status[id(status)] = by_status.get(id(status), 0) + 1
                first.setdefault(id(status), status)
            for sid, n in by_status.items():
                key = (first[sid].plugin, _verdict(filter_entry(first[sid])))
                out[key] = out.get(key, 0) + n
        return out

    def top_record(self, k: int, order: NameOrder | None = None) -> AttemptRecord:
        """The trace record cut down to the ``k`` best-scoring nodes: scores, totals and raw scores of
        those only, no per-node filter verdicts (see :meth:`filter_counts`), no feasible or tie lists."""
        record = AttemptRecord(
            pod=self.pod,
            attempt=self.attempt,
            profile=self.profile,
            result=self.result,
            node=self.node,
            message=self.message,
            evaluated_nodes=self.evaluated_nodes,
            nominated_node=self.nominated_node,
            victims=list(self.victims) if self.victims else None,
            start_nominated_node=self.start_nominated_node,
            cycle=self.cycle,
        )
        record.details = {key: dict(v) for key, v in self.details.items()}
        top = self._top(k, order)
        if top and self.raw_score_arrays:
            record.details["score"] = {p: {n: int(s[i]) for n, i in top} for p, s in self.raw_score_arrays.items()}
        if self.succeeded and top:
            plugins = sorted(self.plugin_scores)
            record.total = {n: int(self.total_scores[i]) for n, i in top}
            record.scores = {n: {p: int(self.plugin_scores[p][i]) for p in plugins} for n, i in top}
        return record

    def to_record(self) -> AttemptRecord:
        """The trace record of this attempt (the conformance corpus's shape), built now."""
        record = AttemptRecord(
            pod=self.pod,
            attempt=self.attempt,
            profile=self.profile,
            start_nominated_node=self.start_nominated_node,
            cycle=self.cycle,
        )
        record.result = self.result
        record.node = self.node
        record.message = self.message
        record.nominated_node = self.nominated_node
        record.victims = list(self.victims) if self.victims else None
        record.evaluated_nodes = self.evaluated_nodes
        record.filter = self.filter_entries()
        record.details = {k: dict(v) for k, v in self.details.items()}
        names = self.names
        if names is not None and len(self.scored_rows) and self.raw_score_arrays:
            scored = names[self.scored_rows].tolist()
            record.details["score"] = {
                p: dict(zip(scored, s.tolist(), strict=True)) for p, s in self.raw_score_arrays.items()
            }
        if self.succeeded and names is not None:
            record.feasible = self.feasible_names()
            record.ties = self.tie_names()
            if len(self.scored_rows):
                scored = names[self.scored_rows].tolist()
                record.total = dict(zip(scored, self.total_scores.tolist(), strict=True))
                plugins = sorted(self.plugin_scores)
                columns = [self.plugin_scores[p].tolist() for p in plugins]
                record.scores = (
                    {n: dict(zip(plugins, values, strict=True)) for n, *values in zip(scored, *columns, strict=True)}
                    if plugins
                    else {n: {} for n in scored}
                )
        return record


def filter_entry(status: Status) -> dict[str, Any]:
    return {"plugin": status.plugin, "code": status.code.label, "reasons": list(status.reasons)}


def _verdict(entry: dict[str, Any]) -> str:
    """A filter entry as one text: its reasons joined, or its code when it gives none."""
    return ", ".join(str(r) for r in entry.get("reasons") or []) or str(entry.get("code") or "")
