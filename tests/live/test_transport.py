"""The keep-alive transport against a scripted loopback server: framing, reuse, and what is retried."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import urllib3

from kubesched.live.transport import Transport, TransportError


class ScriptedServer:
    """Answers the n-th request it reads with ``script[n]``: (raw bytes to send, close afterwards)."""

    def __init__(self, script: list[tuple[bytes, bool]]) -> None:
        self.script = script
        self.requests: list[bytes] = []
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            self._open.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        try:
            while True:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                self.requests.append(head + reader.read(length))
                raw, close = self.script[len(self.requests) - 1]
                conn.sendall(raw)
                if close:
                    return
        except OSError:
            return
        finally:
            reader.close()
            conn.close()

    def close_idle(self) -> None:
        """The server's idle timeout: every open connection is closed."""
        for conn in self._open:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self._listener.close()
        self.close_idle()


def ok(body: bytes, *extra: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), b"".join(extra), body)


@pytest.fixture
def serve() -> Iterator[object]:
    servers: list[ScriptedServer] = []

    def start(script: list[tuple[bytes, bool]]) -> tuple[ScriptedServer, Transport]:
        server = ScriptedServer(script)
        servers.append(server)
        pool = urllib3.PoolManager().connection_from_url(f"http://127.0.0.1:{server.port}")
        return server, Transport(pool, f"127.0.0.1:{server.port}")

    yield start
    for server in servers:
        server.stop()


def test_answers_with_a_length_reuse_one_connection(serve) -> None:
    server, transport = serve([(ok(b'{"a":1}'), False), (ok(b'{"b":2}'), False)])
    assert transport.request("POST", "/x?y=1", b"Accept: application/json\r\n", b"{}", 5) == (200, b'{"a":1}')
    assert transport.request("GET", "/z", b"", None, 5) == (200, b'{"b":2}')
    assert server.connections == 1
    first = server.requests[0]
    assert first.startswith(b"POST /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"Accept: application/json\r\n" in first and b"Content-Length: 2\r\n" in first
    assert first.endswith(b"\r\n\r\n{}")
    assert b"Content-Length" not in server.requests[1]


def test_chunked_bodies_informational_answers_and_empty_statuses(serve) -> None:
    chunked = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4;ext=1\r\n{"a"\r\n3\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n'
    )
    server, transport = serve([(chunked, False), (b"HTTP/1.1 204 No Content\r\n\r\n", False), (ok(b"x"), False)])
    assert transport.request("POST", "/a", b"", b"{}", 5) == (201, b'{"a":1}')
    assert transport.request("DELETE", "/b", b"", None, 5) == (204, b"")
    assert transport.request("GET", "/c", b"", None, 5) == (200, b"x")
    assert server.connections == 1


def test_connection_close_and_http10_end_the_connection(serve) -> None:
    server, transport = serve(
        [
            (ok(b"one", b"Connection: close\r\n"), True),
            (b"HTTP/1.0 200 OK\r\n\r\nread to the end", True),
            (ok(b"three"), False),
        ]
    )
    assert transport.request("GET", "/1", b"", None, 5) == (200, b"one")
    assert transport.request("GET", "/2", b"", None, 5) == (200, b"read to the end")
    assert transport.request("GET", "/3", b"", None, 5) == (200, b"three")
    assert server.connections == 3


def test_a_connection_the_server_closed_while_idle_is_not_reused(serve) -> None:
    server, transport = serve([(ok(b"1"), False), (ok(b"2"), False)])
    assert transport.request("POST", "/1", b"", b"{}", 5) == (200, b"1")
    server.close_idle()
    time.sleep(0.1)
    # A POST is never sent twice: it must go out on a fresh connection the first time.
    assert transport.request("POST", "/2", b"", b"{}", 5) == (200, b"2")
    assert (server.connections, len(server.requests)) == (2, 2)


def test_only_a_replayable_request_is_retried_after_a_reused_connection_drops_it(serve) -> None:
    server, transport = serve([(ok(b"1"), False), (b"", True), (ok(b"again"), False), (ok(b"3"), False), (b"", True)])
    transport.request("GET", "/1", b"", None, 5)
    # The server reads the GET, then closes without answering (its idle timeout raced the request).
    assert transport.request("GET", "/2", b"", None, 5) == (200, b"again")
    assert [r.split(b" ")[1] for r in server.requests] == [b"/1", b"/2", b"/2"]
    transport.request("GET", "/3", b"", None, 5)
    # A POST the server may have acted on is not sent again: the caller hears of the failure.
    with pytest.raises(TransportError, match="closed the connection before answering"):
        transport.request("POST", "/4", b"", b"{}", 5)
    assert [r.split(b" ")[1] for r in server.requests][3:] == [b"/3", b"/4"]


def test_a_cut_body_and_a_silent_server_fail_within_the_timeout(serve) -> None:
    _, transport = serve([(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", True), (b"", False)])
    with pytest.raises(TransportError, match="mid-body"):
        transport.request("GET", "/cut", b"", None, 5)
    start = time.monotonic()
    with pytest.raises(TransportError, match="timed out"):
        transport.request("POST", "/silent", b"", b"{}", 0.3)
    assert time.monotonic() - start < 3


def test_a_refused_connection_is_a_transport_error() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    transport = Transport(urllib3.PoolManager().connection_from_url(f"http://127.0.0.1:{port}"), f"127.0.0.1:{port}")
    with pytest.raises(TransportError, match="connect"):
        transport.request("GET", "/", b"", None, 1)
