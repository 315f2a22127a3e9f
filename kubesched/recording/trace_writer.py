"""The trace recorder: every finished attempt streamed to a JSON Lines file, formatted off the scheduling loop.

Formatting a trace line costs about a tenth of a millisecond at 5000 nodes, a third of what the
scheduling cycle itself costs, and CPython runs one thread at a time. So where the platform can fork,
:class:`TraceWriter` forks a writer process when it is made: each finished attempt's arrays go to it
over a pipe (pickled as they are, in a few microseconds) and the child formats, compresses and writes
them (:class:`~kubesched.recording.jsonl.TraceFile`) on another core while the loop goes on. Elsewhere,
or with ``in_process=True``, the same :class:`TraceFile` runs in this process.

The child shares nothing with the parent after the fork but the file and the pipe; it ignores SIGINT
(the parent decides when the trace ends) and leaves when the pipe closes. An error in the child (a full
disk, say) is sent back and raised by the parent's next call.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import signal
import struct
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import IO, Any

import numpy as np

from kubesched.framework.status import Status
from kubesched.recording.attempt import Attempt, FilterPart
from kubesched.recording.jsonl import CHUNK_CHARS, FLUSH_INTERVAL, AttemptEncoder, TraceFile
from kubesched.recording.recorder import Recorder

# Messages to the child start with one of these bytes.
_ATTEMPT, _LINE, _SYNC, _CLOSE = b"A", b"L", b"S", b"C"
#: Replies: done, or the child's error text.
_OK, _ERROR = b"K", b"E"
#: The length of an attempt message's pickled part.
_LENGTH = struct.Struct("<Q")
#: How often (in attempts) the parent looks for an error the child reported.
_POLL_EVERY = 64


class TraceWriter(Recorder):
    """Streams every finished attempt to ``path`` as one JSON line (gzip when the name ends in ``.gz``),
    in the shape of :meth:`~kubesched.recording.trace.AttemptRecord.to_dict` with raw scores."""

    enabled = True
    #: Trace files carry the raw Score results and the weights, so ``kubesched explain`` can show raw,
    #: normalised and weighted scores.
    raw_scores = True

    def __init__(
        self,
        path: str | Path,
        *,
        flush_interval: float = FLUSH_INTERVAL,
        chunk_chars: int = CHUNK_CHARS,
        compresslevel: int = 1,
        in_process: bool | None = None,
    ) -> None:
        self.path = Path(path)
        self.count = 0
        file: IO[bytes] = self.path.open("wb")  # a bad path fails here, in the caller's process
        options: dict[str, Any] = {
            "flush_interval": flush_interval,
            "chunk_chars": chunk_chars,
            "compresslevel": compresslevel,
        }
        self._local: TraceFile | None = None
        self._conn: Connection | None = None
        self._pid = 0
        self._closed = False
        self._names: np.ndarray | None = None
        if in_process or (in_process is None and not hasattr(os, "fork")):
            self._local = TraceFile(self.path, file, **options)
            return
        parent, child = Pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            parent.close()
            _child_main(child, self.path, file, options)
        child.close()
        file.close()  # the child has its own descriptor
        self._conn, self._pid = parent, pid

    def finished(self, attempt: Attempt) -> None:
        if self._closed:
            raise ValueError(f"trace {self.path} is closed")
        self.count += 1
        if self._local is not None:
            self._local.add(attempt)
            return
        names = attempt.names
        body = _pack(attempt, names if names is not self._names else None)
        if body is None:  # something in it would not pickle: format it here instead
            self._send(_LINE + AttemptEncoder().encode(attempt).encode("utf-8"))
        else:
            self._names = names
            self._send(_ATTEMPT + body)
        if self.count % _POLL_EVERY == 0 and self._conn is not None and self._conn.poll():
            self._reply()

    def sync(self) -> None:
        """Write out everything recorded so far and wait until it is on its way to disk."""
        if self._local is not None:
            self._local.sync()
            return
        self._send(_SYNC)
        self._reply()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._local is not None:
            self._local.close()
            return
        assert self._conn is not None
        try:
            self._send(_CLOSE)
            self._reply()
        finally:
            self._conn.close()
            os.waitpid(self._pid, 0)

    def _send(self, message: bytes) -> None:
        assert self._conn is not None
        try:
            self._conn.send_bytes(message)
        except OSError:  # the child is gone: say why, if it could
            self._reply()
            raise

    def _reply(self) -> None:
        assert self._conn is not None
        try:
            answer = self._conn.recv_bytes()
        except EOFError:
            raise OSError(f"trace {self.path}: the writer process ended unexpectedly") from None
        if answer.startswith(_ERROR):
            raise OSError(f"trace {self.path}: {answer[1:].decode('utf-8', 'replace')}")


def _pack(attempt: Attempt, names: np.ndarray | None) -> bytes | None:
    """``attempt`` as one message body: a pickle of everything but the arrays, then the arrays' bytes
    (pickling each array through NumPy's reducer costs more than the rest together). ``names`` goes
    along only when the node set changed since the last attempt sent. None if something will not pickle."""
    arrays: list[np.ndarray] = []

    def ref(array: np.ndarray) -> int:
        arrays.append(np.ascontiguousarray(array))
        return len(arrays) - 1

    state = (
        attempt.pod,
        attempt.attempt,
        attempt.profile,
        attempt.cycle,
        attempt.start_nominated_node,
        attempt.result,
        attempt.node,
        attempt.message,
        attempt.nominated_node,
        attempt.victims,
        attempt.evaluated_nodes,
        None if names is None else names.tolist(),
        attempt.names is None,
        [(ref(p.rows), p.statuses, p.entry) for p in attempt.filter_parts],
        ref(attempt.feasible_rows),
        ref(attempt.scored_rows),
        {k: ref(v) for k, v in attempt.plugin_scores.items()},
        ref(attempt.total_scores),
        {k: ref(v) for k, v in attempt.raw_score_arrays.items()},
        ref(attempt.tie_rows),
        attempt.details,
    )
    layout = [(a.dtype.str, a.shape) for a in arrays]
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((state, layout))
    except Exception:
        return None
    head = buffer.getvalue()
    return _LENGTH.pack(len(head)) + head + b"".join(a.tobytes() for a in arrays)


def _unpack(body: bytes, names: np.ndarray | None) -> tuple[Attempt, np.ndarray | None]:
    """The attempt :func:`_pack` sent, and the node names it and later attempts index."""
    (length,) = _LENGTH.unpack_from(body)
    state, layout = pickle.loads(body[_LENGTH.size : _LENGTH.size + length])
    blob, offset = memoryview(body), _LENGTH.size + length
    arrays = []
    for dtype, shape in layout:
        count = int(np.prod(shape)) if shape else 1
        arrays.append(np.frombuffer(blob, dtype=dtype, count=count, offset=offset).reshape(shape))
        offset += count * np.dtype(dtype).itemsize
    (
        pod,
        number,
        profile,
        cycle,
        start_nominated,
        result,
        node,
        message,
        nominated,
        victims,
        evaluated,
        sent_names,
        no_names,
        parts,
        feasible,
        scored,
        plugin_scores,
        totals,
        raw,
        ties,
        details,
    ) = state
    if sent_names is not None:
        names = np.array(sent_names, dtype=object)
    attempt = Attempt(Recorder(), pod, number, profile, start_nominated, cycle)
    attempt.result, attempt.node, attempt.message = result, node, message
    attempt.nominated_node, attempt.victims, attempt.evaluated_nodes = nominated, victims, evaluated
    attempt.names = None if no_names else names
    attempt.filter_parts = [FilterPart(arrays[rows], statuses, entry) for rows, statuses, entry in parts]
    attempt.feasible_rows, attempt.scored_rows, attempt.tie_rows = arrays[feasible], arrays[scored], arrays[ties]
    attempt.plugin_scores = {k: arrays[i] for k, i in plugin_scores.items()}
    attempt.total_scores = arrays[totals]
    attempt.raw_score_arrays = {k: arrays[i] for k, i in raw.items()}
    attempt.details = details
    return attempt, names


class _Pickler(pickle.Pickler):
    """Statuses travel without the exception they may carry (the trace shows code, reasons and plugin)."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is Status:
            return Status, (obj.code, obj.reasons, obj.plugin)
        return NotImplemented


def _child_main(conn: Connection, path: Path, file: IO[bytes], options: dict[str, Any]) -> None:
    """The writer process: format and write what the parent sends until it says close; never returns."""
    code = 0
    sink: TraceFile | None = None
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sink = TraceFile(path, file, **options)
        names: np.ndarray | None = None
        while True:
            try:
                message = conn.recv_bytes()
            except EOFError:  # the parent went away: keep what it sent
                sink.close()
                code = 1
                return
            kind, body = message[:1], message[1:]
            if kind == _ATTEMPT:
                attempt, names = _unpack(body, names)
                sink.add(attempt)
            elif kind == _LINE:
                sink.add_line(body.decode("utf-8"))
            elif kind == _SYNC:
                sink.sync()
                conn.send_bytes(_OK)
            elif kind == _CLOSE:
                sink.close()
                conn.send_bytes(_OK)
                return
    except BaseException as err:
        code = 1
        with contextlib.suppress(OSError):
            conn.send_bytes(_ERROR + f"{type(err).__name__}: {err}".encode())
    finally:
        os._exit(code)
