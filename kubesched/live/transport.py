"""Keep-alive HTTP/1.1 for the scheduler's requests: the client's own connections, lighter framing.

A scheduler's traffic is thousands of small JSON requests (a binding and an event per pod, status
patches). Through urllib3 and http.client each costs about 0.9 ms of CPU in Python (header dictionaries,
retry and timeout objects, headers parsed with the email package), more than scheduling the pod; the
interpreter lock that this takes from the scheduling loop is the real price. Here a request is written
in one buffer and its answer read with a line reader, 0.2 ms.

Only the framing is ours. The sockets are opened by the official client's urllib3 pool, so the TLS
settings (CA, client certificate and key, server name, hostname check) and socket options are exactly
the client's. Connections go back to a small pool after each answer and are checked before reuse (a
socket that became readable while idle was closed by the server). A request that fails on a reused
connection before anything could have reached the server (or one that is safe to repeat) is retried
once on a fresh connection, as Go's transport retries; any other failure is the caller's.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass
from typing import Any

#: Seconds to open a connection (TCP and TLS), as RestClient's urllib3 requests use.
CONNECT_TIMEOUT = 10.0
#: Longest status or header line accepted (http.client's limit).
MAX_LINE = 65536
#: Methods Go's transport may send again after a reused connection broke (they change nothing).
REPLAYABLE = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


class TransportError(Exception):
    """The connection failed (refused, reset, closed mid-answer, timed out, bad framing)."""


class _NothingSent(TransportError):
    """Writing the request failed: the server cannot have acted on it."""


class _NoAnswer(TransportError):
    """The connection closed before a status line: the server may or may not have acted."""


@dataclass(slots=True)
class _Connection:
    """One open connection: urllib3's connection object (owner of the socket) and a buffered reader."""

    conn: Any
    sock: Any
    reader: Any
    reused: bool = False

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.reader.close()
        with contextlib.suppress(Exception):
            self.conn.close()


class Transport:
    """Pooled keep-alive connections to one API server; ``request`` is safe from any thread."""

    def __init__(self, pool: Any, netloc: str, *, max_idle: int = 32) -> None:
        """``pool``: the urllib3 connection pool of the client's PoolManager for this server."""
        self._pool = pool
        self._host = netloc.encode("idna")
        self._idle: list[_Connection] = []
        self._max_idle = max_idle
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for c in idle:
            c.close()

    def request(self, method: str, target: str, fields: bytes, body: bytes | None,
                timeout: float) -> tuple[int, bytes]:
        """Send one request and read its whole answer: (status, body).

        ``target`` is the path with its query; ``fields`` are the header lines (each ending CRLF)
        besides Host and Content-Length."""
        head = b"%s %s HTTP/1.1\r\nHost: %s\r\n%s" % (method.encode(), target.encode(), self._host, fields)
        if body is not None:
            head += b"Content-Length: %d\r\n" % len(body)
        message = head + b"\r\n" + (body or b"")
        for attempt in range(2):
            c = self._checkout()
            try:
                status, data, keep = self._exchange(c, message, method, timeout)
            except TransportError as err:
                c.close()
                retry = c.reused and attempt == 0 and (
                    isinstance(err, _NothingSent) or (method in REPLAYABLE and isinstance(err, _NoAnswer)))
                if retry:
                    continue
                raise
            except BaseException:
                c.close()
                raise
            if keep:
                self._checkin(c)
            else:
                c.close()
            return status, data
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    # -- connections -----------------------------------------------------------------------------------
    def _checkout(self) -> _Connection:
        while True:
            with self._lock:
                c = self._idle.pop() if self._idle else None
            if c is None:
                return self._connect()
            if c.conn.is_connected:  # readable while idle means the server closed it
                c.reused = True
                return c
            c.close()

    def _checkin(self, c: _Connection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self._max_idle:
                self._idle.append(c)
                return
        c.close()

    def _connect(self) -> _Connection:
        conn = self._pool._new_conn()  # the client's TLS settings and socket options
        conn.timeout = CONNECT_TIMEOUT
        try:
            conn.connect()
        except Exception as err:
            with contextlib.suppress(Exception):
                conn.close()
            raise TransportError(f"connect to {self._host.decode()}: {err}") from err
        sock = conn.sock
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _Connection(conn, sock, sock.makefile("rb"))

    # -- one exchange ----------------------------------------------------------------------------------
    def _exchange(self, c: _Connection, message: bytes, method: str, timeout: float) -> tuple[int, bytes, bool]:
        try:
            c.sock.settimeout(timeout)
            c.sock.sendall(message)
        except OSError as err:
            raise _NothingSent(f"sending: {err}") from err
        try:
            return _read_response(c.reader, method)
        except TransportError:
            raise
        except (OSError, ValueError) as err:  # timeouts, resets, unparsable numbers
            raise TransportError(f"reading the answer: {err}") from err


def _read_response(reader: Any, method: str) -> tuple[int, bytes, bool]:
    """(status, body, keep the connection) for one answer; informational (1xx) answers are skipped."""
    first = True
    while True:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            if first:
                raise _NoAnswer("the server closed the connection before answering")
            raise TransportError("the server closed the connection mid-answer")
        first = False
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise TransportError(f"bad status line {line[:80]!r}")
        status = int(parts[1])
        length, chunked, close = _read_fields(reader)
        if parts[0] == b"HTTP/1.0":
            close = True
        if 100 <= status < 200:
            continue
        if method == "HEAD" or status in (204, 304):
            return status, b"", not close
        if chunked:
            return status, _read_chunked(reader), not close
        if length is not None:
            data = reader.read(length)
            if len(data) < length:
                raise TransportError("the server closed the connection mid-body")
            return status, data, not close
        return status, reader.read(), False  # delimited by the connection's end


def _read_fields(reader: Any) -> tuple[int | None, bool, bool]:
    """The header fields that frame the body: (Content-Length, chunked, Connection: close)."""
    length: int | None = None
    chunked = close = False
    while True:
        line = reader.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):
            return length, chunked, close
        if not line:
            raise TransportError("the server closed the connection in the headers")
        if len(line) > MAX_LINE:
            raise TransportError("header line too long")
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            close = b"close" in value.lower()


def _read_chunked(reader: Any) -> bytes:
    parts: list[bytes] = []
    while True:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            raise TransportError("the server closed the connection mid-body")
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            break
        chunk = reader.read(size + 2)  # the chunk and its CRLF
        if len(chunk) < size + 2:
            raise TransportError("the server closed the connection mid-body")
        parts.append(chunk[:size])
    while True:  # trailer fields, up to the blank line
        line = reader.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n", b""):
            return b"".join(parts)
