"""Decision traces streamed to disk as attempts end: JSON Lines, gzip-compressed for ``.gz`` paths.

Each line is the attempt's :meth:`~kubesched.recording.trace.AttemptRecord.to_dict`, the conformance corpus's
shape, but it is written straight from the attempt's arrays rather than through dicts: node names are
quoted once per node set, nodes with the same scores share one formatted score object, and sorting by
name is a gather through a rank array. A writer thread compresses and writes chunks, so the
scheduling loop only formats text. Every chunk ends on a full line and, for gzip, a sync flush: the
file can be read (``zcat``, ``gzip.open``) up to the last chunk while the run goes on.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from kubesched.recording.attempt import Attempt, NameOrder, filter_entry

#: Hand a chunk to the writer thread once this much text is buffered ...
CHUNK_CHARS = 1 << 20
#: ... or this many seconds after the previous chunk.
FLUSH_INTERVAL = 1.0

_quote = json.encoder.encode_basestring_ascii  # what json.dumps uses for str: the output matches it


class NameTable:
    """JSON text of one snapshot's node names (``"name"`` and ``,"name":``) and each name's rank in name order."""

    __slots__ = ("keys", "names", "quoted", "rank")

    def __init__(self, names: np.ndarray) -> None:
        self.names = names
        quoted = [_quote(n) for n in names.tolist()]
        self.quoted = np.array(quoted, dtype=object)
        #: ``,"name":`` — object keys with the separator before them, for :func:`_pairs`.
        self.keys = np.array(["," + q + ":" for q in quoted], dtype=object)
        self.rank = NameOrder().rank(names)

    def by_name(self, rows: np.ndarray) -> list[str]:
        """The quoted names of ``rows``, sorted by name."""
        names: list[str] = self.quoted[rows[self.name_order(rows)]].tolist()
        return names

    def name_order(self, rows: np.ndarray) -> np.ndarray:
        """The positions of ``rows`` that put their nodes in name order."""
        return np.argsort(self.rank[rows], kind="stable")


class AttemptEncoder:
    """Formats attempts as trace lines; keeps the name table of the last node set it saw."""

    def __init__(self) -> None:
        self._table: NameTable | None = None

    def table(self, names: np.ndarray) -> NameTable:
        table = self._table
        if table is None or table.names is not names:
            table = self._table = NameTable(names)
        return table

    def encode(self, attempt: Attempt) -> str:
        """One JSON object, equal to ``json.dumps(attempt.to_record().to_dict(raw_scores=True))`` once parsed."""
        out = [
            '{"pod":',
            _quote(attempt.pod),
            ',"attempt":',
            str(int(attempt.attempt)),
            ',"profile":',
            _quote(attempt.profile),
            ',"result":',
            _quote(attempt.result),
        ]
        if attempt.node is not None:
            out += ',"node":', _quote(attempt.node)
        if attempt.message is not None:
            out += ',"message":', _quote(attempt.message)
        names = attempt.names
        table = self.table(names) if names is not None else None
        scheduled = attempt.succeeded and table is not None
        out.append(',"feasible":[')
        by_name: np.ndarray | None = None  # positions of the feasible rows in name order
        if scheduled:
            assert table is not None
            by_name = table.name_order(attempt.feasible_rows)
            out.append(",".join(table.quoted[attempt.feasible_rows[by_name]].tolist()))
        out.append('],"filter":')
        out.append(self._filter(attempt, table))
        scores = total = ""
        if scheduled and len(attempt.scored_rows):
            assert table is not None
            scores, total = _scores_and_totals(attempt, table)
        out += ',"scores":{', scores, '},"total":{', total, '},"ties":['
        if scheduled:
            assert table is not None
            out.append(",".join(table.by_name(attempt.tie_rows)))
        out += '],"evaluatedNodes":', str(int(attempt.evaluated_nodes))
        if attempt.nominated_node:
            out += ',"nominatedNode":', _quote(attempt.nominated_node)
        if attempt.victims:
            out += ',"victims":', json.dumps(list(attempt.victims), separators=(",", ":"))
        if attempt.start_nominated_node:
            out += ',"startNominatedNode":', _quote(attempt.start_nominated_node)
        extenders = attempt.details.get("extender")
        if extenders:
            out += ',"extenders":', json.dumps(extenders, separators=(",", ":"))
        raw = attempt.raw_score_arrays
        if raw and table is not None and len(attempt.scored_rows):
            # The additive keys of AttemptRecord.to_dict(raw_scores=True): {plugin: [raw per node of
            # "feasible"]} (scored and feasible rows are the same nodes), and the weights.
            if by_name is None or attempt.scored_rows is not attempt.feasible_rows:
                by_name = table.name_order(attempt.scored_rows)
            out.append(',"rawScores":{')
            out.append(_columns(raw, by_name))
            out.append("}")
            weights = attempt.details.get("weights")
            if weights:
                out += ',"weights":', json.dumps(weights, separators=(",", ":"))
        out.append("}")
        return "".join(out)

    @staticmethod
    def _filter(attempt: Attempt, table: NameTable | None) -> str:
        parts = attempt.filter_parts
        if not parts or table is None:
            return "{}"
        if len(parts) > 1:
            rows = np.concatenate([p.rows for p in parts])
            if len(np.unique(rows)) != len(rows):
                # A node reported twice (the nominated node, then the full pass): dict semantics decide.
                return json.dumps(attempt.filter_entries(), separators=(",", ":"))
        chunks = []
        for part in parts:
            if not len(part.rows):
                continue
            keys = table.keys[part.rows].tolist()
            if part.statuses is None:
                text = json.dumps(part.entry, separators=(",", ":"))
                chunks.append(_pairs(keys, [text] * len(keys)))
                continue
            texts: dict[int, str] = {}
            values = []
            for status in part.statuses:
                t = texts.get(id(status))
                if t is None:
                    t = texts[id(status)] = json.dumps(filter_entry(status), separators=(",", ":"))
                values.append(t)
            chunks.append(_pairs(keys, values))
        return "{" + ",".join(chunks) + "}"


def _scores_and_totals(attempt: Attempt, table: NameTable) -> tuple[str, str]:
    """The insides of ``scores`` (``"node":{"Plugin":score,…},…``, plugins by name) and ``total``
    (``"node":sum,…``), nodes in scoring order."""
    keys = table.keys[attempt.scored_rows].tolist()
    return _node_objects(keys, attempt.plugin_scores), _pairs(keys, _int_texts(attempt.total_scores))


def _columns(columns: Mapping[str, np.ndarray], order: np.ndarray) -> str:
    """``"Plugin":[value,…],…`` with plugins by name and each column's values taken in ``order``."""
    plugins = sorted(columns)
    matrix = np.stack([np.asarray(columns[p])[order] for p in plugins])
    texts = _int_texts(matrix)
    return ",".join(_quote(p) + ":[" + ",".join(row) + "]" for p, row in zip(plugins, texts, strict=True))


def _node_objects(keys: list[str], columns: Mapping[str, np.ndarray]) -> str:
    """``"node":{"Plugin":value,…},…`` for :attr:`NameTable.keys` and one integer column per plugin,
    plugins by name. Nodes with the same values share one formatted object."""
    plugins = sorted(columns)
    if not plugins:
        return _pairs(keys, ["{}"] * len(keys))
    values = [np.asarray(columns[p]).astype(np.int64, copy=False) for p in plugins]
    first, inverse = _distinct_rows(values)
    template = "{" + ",".join(_quote(p).replace("%", "%%") + ":%d" for p in plugins) + "}"
    distinct = zip(*(c[first].tolist() for c in values), strict=True)
    texts = np.array([template % row for row in distinct], dtype=object)
    return _pairs(keys, texts[inverse].tolist())


def _pairs(keys: list[str], values: list[str]) -> str:
    """``"k1":v1,"k2":v2…`` from keys that carry their leading comma: one join, no string per pair."""
    if not keys:
        return ""
    parts: list[str] = [""] * (2 * len(keys))
    parts[0::2] = keys
    parts[1::2] = values
    parts[0] = parts[0][1:]  # the first pair has no separator before it
    return "".join(parts)


#: Decimal texts of the integers a score, total or raw score usually is: looked up rather than formatted.
_SMALL_INTS = 1 << 16
_small_int_texts: np.ndarray | None = None


def _int_texts(values: np.ndarray) -> Any:
    """The decimal text of each integer of ``values`` (JSON numbers), as (nested) lists of its shape."""
    global _small_int_texts
    ints = np.asarray(values).astype(np.int64, copy=False)
    if not ints.size or int(ints.min()) < 0 or int(ints.max()) >= _SMALL_INTS:
        return np.vectorize(str, otypes=[object])(ints).tolist() if ints.size else ints.tolist()
    if _small_int_texts is None:
        _small_int_texts = np.array([str(i) for i in range(_SMALL_INTS)], dtype=object)
    return _small_int_texts[ints].tolist()


def _distinct_rows(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For the rows of equal-length integer columns: the index of one row per distinct value, and which
    distinct value each row has. Scores span small ranges, so a row usually packs into one integer."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    scale = 1
    for column in columns:
        low = int(column.min())
        span = int(column.max()) - low + 1
        if scale * span >= 1 << 62:
            matrix = np.ascontiguousarray(np.stack(columns, axis=1), dtype=np.int64)
            packed = matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).reshape(-1)
            _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
            return first, inverse.reshape(-1)
        if span > 1:
            key += (column - low) * scale
            scale *= span
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


class TraceFile:
    """Formats attempts into ``file`` as JSON lines (gzip-compressed when ``path`` ends in ``.gz``).

    Compression defaults to level 1: on trace text it keeps most of level 6's gain (about 12x against
    14x) at nearly three times the speed.
    """

    def __init__(
        self,
        path: Path,
        file: IO[bytes],
        *,
        flush_interval: float = FLUSH_INTERVAL,
        chunk_chars: int = CHUNK_CHARS,
        compresslevel: int = 1,
    ) -> None:
        self.path = path
        self.count = 0
        self._encoder = AttemptEncoder()
        self._flush_interval = flush_interval
        self._chunk_chars = chunk_chars
        self._file = file
        self._compressor = (
            zlib.compressobj(compresslevel, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            if self.path.name.endswith(".gz")
            else None
        )
        self._lines: list[str] = []
        self._buffered = 0
        self._last_flush = time.monotonic()
        self._lock = threading.Lock()
        self._chunks: queue.Queue[bytes | None] = queue.Queue(maxsize=8)
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._write_chunks, name="trace-writer", daemon=True)
        self._thread.start()

    def add(self, attempt: Attempt) -> None:
        self.add_line(self._encoder.encode(attempt))

    def add_line(self, line: str) -> None:
        with self._lock:
            if self._closed:
                raise ValueError(f"trace {self.path} is closed")
            self._lines.append(line)
            self._buffered += len(line) + 1
            self.count += 1
            if self._buffered >= self._chunk_chars or time.monotonic() - self._last_flush >= self._flush_interval:
                self._hand_over()
        if self._error is not None:
            raise self._error

    def sync(self) -> None:
        """Write out everything recorded so far and wait until it is on its way to disk."""
        with self._lock:
            self._hand_over()
        self._chunks.join()
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._hand_over()
            self._closed = True
        self._chunks.put(None)
        self._thread.join()
        try:
            if self._compressor is not None and self._error is None:
                self._file.write(self._compressor.flush(zlib.Z_FINISH))
        finally:
            self._file.close()
        if self._error is not None:
            raise self._error

    def _hand_over(self) -> None:
        """Queue the buffered lines for the writer thread (caller holds the lock)."""
        self._last_flush = time.monotonic()
        if not self._lines:
            return
        data = ("\n".join(self._lines) + "\n").encode("utf-8")
        self._lines = []
        self._buffered = 0
        self._chunks.put(data)

    def _write_chunks(self) -> None:
        while True:
            data = self._chunks.get()
            try:
                if data is None:
                    return
                if self._error is not None:
                    continue
                if self._compressor is not None:
                    data = self._compressor.compress(data) + self._compressor.flush(zlib.Z_SYNC_FLUSH)
                self._file.write(data)
                self._file.flush()
            except BaseException as err:  # reported to the scheduling side on its next call
                self._error = err
            finally:
                self._chunks.task_done()
