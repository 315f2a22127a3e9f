"""Every attempt in the compact form the HTML report's pod picker reads.

Thousands of pods on a thousand nodes must fit in a few megabytes and be ready in a second, so each
attempt is read from its columnar :class:`~kubesched.recording.attempt.Attempt` (no per-node dicts)
and written with numbers in place of repeated texts:

- node names are positions in one list of every node, in natural order (``node-2`` before ``node-10``),
  so the page sorts by position; plugin names, profiles and filter reasons are positions in a list
  of texts;
- a set of nodes (the feasible ones, the ties, the nodes one filter verdict rejected) is a list of
  runs ``[gap, length, gap, length, ...]`` over those positions (:func:`ranges`), complete but small;
- scores are kept for the ``keep`` best nodes only (and the chosen node, when it is a tied one further
  down): raw and weighted per Score plugin, and the total.

One attempt, as :func:`encode` writes it: ``a`` attempt number, ``p`` profile (text), ``r`` result,
``n`` chosen node, ``m`` message, ``nn`` nominated node name, ``v`` victims, ``e`` nodes evaluated,
``f`` feasible nodes and ``t`` ties (runs), ``sp`` the Score plugins (texts) with ``w`` their weights
and ``s`` rows ``[node, total, [raw...], [weighted...]]`` best first (``k``: how many of them are the best,
when the chosen node's row follows them), ``x`` the rejected nodes by verdict
``[plugin (text), reason (text), runs]``, most nodes first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.status import Status
from kubesched.recording.attempt import Attempt
from kubesched.sim.node_pools import natural_sorted
from kubesched.sim.pools import natural_key

#: Scored nodes kept per attempt, best first (all nodes stay listed by name in the runs).
KEEP_SCORED = 10


class Texts:
    """Repeated texts (plugins, profiles, reasons) as positions in one list."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def id(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.items)
            self.items.append(text)
        return found


class NodeIndex:
    """Every node name the page shows, in natural order; a node is known by its position here."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = natural_sorted(set(names))
        self._index = {n: i for i, n in enumerate(self.names)}
        self._rows: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @classmethod
    def of_attempts(cls, nodes: Iterable[str], attempts: Sequence[Attempt]) -> NodeIndex:
        """The nodes of the cluster and every node an attempt names (some may be gone by the end)."""
        seen: dict[int, np.ndarray] = {}
        extra: set[str] = set(nodes)
        for attempt in attempts:
            if attempt.names is not None:
                seen.setdefault(id(attempt.names), attempt.names)
            extra.update(n for n in (attempt.node, attempt.nominated_node) if n)
        for names in seen.values():
            extra.update(names.tolist())
        return cls(extra)

    def get(self, name: str | None) -> int | None:
        return self._index.get(name) if name else None

    def positions(self, names: np.ndarray) -> np.ndarray:
        """Position of each entry of a snapshot's node-name array (worked out once per array)."""
        cached = self._rows.get(id(names))
        if cached is None or cached[0] is not names:
            cached = (names, np.array([self._index[n] for n in names.tolist()], dtype=np.int64))
            self._rows[id(names)] = cached
        return cached[1]


def ranges(positions: np.ndarray | Sequence[int]) -> list[int]:
    """A set of distinct positions as runs: ``[gap, length, ...]``, each run starting ``gap`` after the last
    one ended.

    ``[3, 4, 5, 9]`` is ``[3, 3, 4, 1]``: three from 3, then one from 9 (3 after 6, where the first run ended)."""
    p = np.sort(np.asarray(positions, dtype=np.int64))
    if not len(p):
        return []
    last = np.flatnonzero(np.diff(p) != 1)  # the last position of each run but the final one
    starts = np.concatenate((p[:1], p[last + 1]))
    ends = np.concatenate((p[last], p[-1:])) + 1
    gaps = starts - np.concatenate(([0], ends[:-1]))
    return np.column_stack((gaps, ends - starts)).ravel().tolist()


def expand(runs: Sequence[int]) -> list[int]:
    """The positions :func:`ranges` encoded, in order."""
    out: list[int] = []
    at = 0
    for gap, length in zip(runs[::2], runs[1::2], strict=True):
        at += gap
        out.extend(range(at, at + length))
        at += length
    return out


def encode(attempt: Attempt, nodes: NodeIndex, texts: Texts, keep: int = KEEP_SCORED) -> dict[str, Any]:
    """One attempt in the page's form (see the module docstring)."""
    out: dict[str, Any] = {
        "a": attempt.attempt,
        "p": texts.id(attempt.profile),
        "r": attempt.result,
        "e": attempt.evaluated_nodes,
    }
    for key, value in (
        ("n", nodes.get(attempt.node)),
        ("m", attempt.message),
        ("nn", attempt.nominated_node),
        ("v", natural_sorted(attempt.victims or ())),
    ):
        if value is not None and value != [] and value != "":
            out[key] = value
    if attempt.names is None:
        return out
    positions = nodes.positions(attempt.names)
    if attempt.succeeded:
        out["f"] = ranges(positions[attempt.feasible_rows])
        out["t"] = ranges(positions[attempt.tie_rows])
        out.update(_scored(attempt, positions[attempt.scored_rows], nodes.get(attempt.node), texts, keep))
    rejected = _rejected(attempt, positions, texts)
    if rejected:
        out["x"] = rejected
    return out


def _scored(attempt: Attempt, positions: np.ndarray, chosen: int | None, texts: Texts, keep: int) -> dict[str, Any]:
    """The ``keep`` best scored nodes, best total first, then natural order; and the chosen node, when
    it is a tied one further down."""
    totals = np.asarray(attempt.total_scores, dtype=np.int64)
    if not len(totals) or keep <= 0:
        return {}
    key = (int(totals.max()) - totals) * (int(positions.max()) + 1) + positions
    best = np.argpartition(key, keep - 1)[:keep] if len(key) > keep else np.arange(len(key))
    out: dict[str, Any] = {}
    winner = np.flatnonzero(positions == chosen)
    if len(winner) and winner[0] not in best:
        out["k"] = len(best)  # the best rows; the chosen node's row comes after them
        best = np.append(best, winner[:1])
    best = best[np.argsort(key[best])]
    plugins = sorted(attempt.plugin_scores)
    weights: Mapping[str, int] = attempt.details.get("weights") or {}
    missing = [None] * len(best)
    raw_arrays = attempt.raw_score_arrays
    raw = [raw_arrays[p][best].tolist() if p in raw_arrays else missing for p in plugins]
    weighted = (
        np.stack([attempt.plugin_scores[p][best] for p in plugins], axis=1).tolist() if plugins else [[] for _ in best]
    )
    rows = [
        [node, total, [r[i] for r in raw], weighted[i]]
        for i, (node, total) in enumerate(zip(positions[best].tolist(), totals[best].tolist(), strict=True))
    ]
    out.update(sp=[texts.id(p) for p in plugins], w=[weights.get(p) for p in plugins], s=rows)
    return out


def _verdict(status: Status | Mapping[str, Any]) -> tuple[str, str]:
    """(plugin, reasons joined or the code) of a Filter status or of a trace entry standing for many."""
    if isinstance(status, Status):
        return status.plugin, status.message or status.code.label
    reasons = ", ".join(str(r) for r in status.get("reasons") or [])
    return str(status.get("plugin")), reasons or str(status.get("code") or "")


def _rejected(attempt: Attempt, positions: np.ndarray, texts: Texts) -> list[list[Any]]:
    """The rejected nodes by verdict, a later report on a node replacing an earlier one."""
    if attempt.names is None or not attempt.filter_parts:
        return []
    verdicts: dict[tuple[str, str], int] = {}
    of_row = np.full(len(attempt.names), -1, dtype=np.int64)
    for part in attempt.filter_parts:
        if part.statuses is None:
            assert part.entry is not None
            of_row[part.rows] = verdicts.setdefault(_verdict(part.entry), len(verdicts))
            continue
        # Nodes rejected alike often share one Status object: work out each distinct one once.
        ids = np.fromiter(map(id, part.statuses), dtype=np.int64, count=len(part.statuses))
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        known = [verdicts.setdefault(_verdict(part.statuses[i]), len(verdicts)) for i in first.tolist()]
        of_row[part.rows] = np.asarray(known, dtype=np.int64)[inverse]
    rejected = np.flatnonzero(of_row >= 0)
    keys, where = of_row[rejected], positions[rejected]
    out = []
    for (plugin, reason), k in verdicts.items():
        members = where[keys == k]
        if len(members):
            out.append((len(members), [texts.id(plugin), texts.id(reason), ranges(members)]))
    out.sort(key=lambda c: -c[0])
    return [entry for _, entry in out]


def page_decisions(
    attempts: Sequence[Attempt], nodes: NodeIndex, texts: Texts, keep: int = KEEP_SCORED
) -> list[list[Any]]:
    """``[[pod, [attempt, ...]], ...]``: every pod's attempts in the order they ran, pods in natural order."""
    by_pod: dict[str, list[dict[str, Any]]] = {}
    for attempt in attempts:
        by_pod.setdefault(attempt.pod, []).append(encode(attempt, nodes, texts, keep))
    return [[pod, by_pod[pod]] for pod in sorted(by_pod, key=natural_key)]
