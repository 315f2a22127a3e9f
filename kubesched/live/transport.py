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
once on a fresh connection, as Go's transport retries; any other failure is the caller's, told apart as
client-go tells them apart: a connection lost once open (reset, closed early: :class:`ConnectionLost`)
from a timeout, a refused connection or bad framing.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
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


class ConnectionLost(TransportError):
    """An open connection broke: reset by the peer, or closed before the answer was complete (what
    client-go calls a connection reset or a probable EOF, after which it may send a GET again)."""


class ConnectionRefused(TransportError):
    """Nobody listens at the server's address (kube-scheduler retries a status patch after this)."""


class _NothingSent(ConnectionLost):
    """Writing the request failed: the server cannot have acted on it."""


class _NoAnswer(ConnectionLost):
    """The connection closed before a status line: the server may or may not have acted."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer: its status, its body, and its Retry-After field (None when absent)."""

    status: int
    body: bytes
    retry_after: str | None = None


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

    def request(self, method: str, target: str, fields: bytes, body: bytes | None, timeout: float) -> tuple[int, bytes]:
        """Send one request and read its whole answer: (status, body). See :meth:`exchange`."""
        answer = self.exchange(method, target, fields, body, timeout)
        return answer.status, answer.body

    def exchange(self, method: str, target: str, fields: bytes, body: bytes | None, timeout: float | None) -> Answer:
        """Send one request and read its whole answer.

        ``target`` is the path with its query; ``fields`` are the header lines (each ending CRLF)
        besides Host and Content-Length; ``timeout`` (None: none) bounds each wait on the socket."""
        head = b"%s %s HTTP/1.1\r\nHost: %s\r\n%s" % (method.encode(), target.encode(), self._host, fields)
        if body is not None:
            head += b"Content-Length: %d\r\n" % len(body)
        message = head + b"\r\n" + (body or b"")
        for attempt in range(2):
            c = self._checkout()
            try:
                answer, keep = self._exchange(c, message, method, timeout)
            except TransportError as err:
                c.close()
                retry = (
                    c.reused
                    and attempt == 0
                    and (isinstance(err, _NothingSent) or (method in REPLAYABLE and isinstance(err, _NoAnswer)))
                )
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
            return answer
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
            raise _connect_error(err, f"connect to {self._host.decode()}: {err}") from err
        sock = conn.sock
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _Connection(conn, sock, sock.makefile("rb"))

    # -- one exchange ----------------------------------------------------------------------------------
    def _exchange(self, c: _Connection, message: bytes, method: str, timeout: float | None) -> tuple[Answer, bool]:
        try:
            c.sock.settimeout(timeout)
            c.sock.sendall(message)
        except TimeoutError as err:
            raise TransportError(f"sending: {err}") from err
        except OSError as err:
            raise _NothingSent(f"sending: {err}") from err
        try:
            return _read_response(c.reader, method)
        except TransportError:
            raise
        except TimeoutError as err:
            raise TransportError(f"reading the answer: {err}") from err
        except OSError as err:  # reset, or TLS cut short
            raise ConnectionLost(f"reading the answer: {err}") from err
        except ValueError as err:  # unparsable numbers
            raise TransportError(f"reading the answer: {err}") from err


def _connect_error(err: BaseException, message: str) -> TransportError:
    """A failed connect as Go tells it apart: refused; reset or cut short during the handshake (lost);
    anything else (a timeout, a bad certificate)."""
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return ConnectionRefused(message)
        if isinstance(cause, ConnectionResetError | ConnectionAbortedError | ssl.SSLEOFError):
            return ConnectionLost(message)
        cause = cause.__cause__ or cause.__context__
    return TransportError(message)


def _read_response(reader: Any, method: str) -> tuple[Answer, bool]:
    """The answer and whether to keep the connection; informational (1xx) answers are skipped."""
    first = True
    while True:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            if first:
                raise _NoAnswer("the server closed the connection before answering")
            raise ConnectionLost("the server closed the connection mid-answer")
        first = False
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise TransportError(f"bad status line {line[:80]!r}")
        status = int(parts[1])
        length, chunked, close, retry_after = _read_fields(reader)
        if parts[0] == b"HTTP/1.0":
            close = True
        if 100 <= status < 200:
            continue
        if method == "HEAD" or status in (204, 304):
            return Answer(status, b"", retry_after), not close
        if chunked:
            return Answer(status, _read_chunked(reader), retry_after), not close
        if length is not None:
            data = reader.read(length)
            if len(data) < length:
                raise ConnectionLost("the server closed the connection mid-body")
            return Answer(status, data, retry_after), not close
        return Answer(status, reader.read(), retry_after), False  # delimited by the connection's end


def _read_fields(reader: Any) -> tuple[int | None, bool, bool, str | None]:
    """The fields that frame the body (Content-Length, chunked, Connection: close), and Retry-After."""
    length: int | None = None
    chunked = close = False
    retry_after: str | None = None
    while True:
        line = reader.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):
            return length, chunked, close, retry_after
        if not line:
            raise ConnectionLost("the server closed the connection in the headers")
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
        elif name == b"retry-after":
            retry_after = value.strip().decode("latin-1")


def _read_chunked(reader: Any) -> bytes:
    parts: list[bytes] = []
    while True:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            raise ConnectionLost("the server closed the connection mid-body")
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            break
        chunk = reader.read(size + 2)  # the chunk and its CRLF
        if len(chunk) < size + 2:
            raise ConnectionLost("the server closed the connection mid-body")
        parts.append(chunk[:size])
    while True:  # trailer fields, up to the blank line
        line = reader.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n", b""):
            return b"".join(parts)
