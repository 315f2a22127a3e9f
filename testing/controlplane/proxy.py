"""Proxies in front of kube-apiserver for tests that break the way to it.

:class:`CuttableProxy` copies TCP bytes (TLS passes through untouched, so the scheduler talks to the real
API server with its real credentials); ``cut()`` resets every open connection at once, as a flaky network
or a load balancer dropping long watches would.

:class:`FaultProxy` reads HTTP: it terminates TLS with the API server's own certificate and applies
per-request rules (:mod:`testing.controlplane.faults`): error answers as kube-apiserver writes them,
Retry-After, delays, resets, watches cut mid-event, requests held until the test lets them go.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testing.controlplane.faults import (
    PHRASES,
    Action,
    CutWatch,
    Delay,
    Exchange,
    Forward,
    Hold,
    RequestInfo,
    Reset,
    Respond,
    Rule,
    Rules,
    SlowAnswer,
    WatchError,
    decode_body,
    status_body,
)

if TYPE_CHECKING:
    from testing.controlplane.fixture import ControlPlane


class CuttableProxy:
    """Copies bytes both ways; :meth:`cut` resets every open connection."""

    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (host, target_port)
        self._listener = socket.create_server((host, 0))
        self.port = int(self._listener.getsockname()[1])
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        self.cuts = 0
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    @property
    def url(self) -> str:
        return f"https://{self.target[0]}:{self.port}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> int:
        """Reset every open connection (new ones are accepted as before); how many were cut."""
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            # shutdown first: close alone would not wake the pipe thread blocked in recv on the socket,
            # and the kernel would keep the connection open until it returns.
            with contextlib.suppress(OSError):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()
        self.cuts += 1
        return len(conns) // 2

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut()


class FaultProxy:
    """An HTTPS proxy in front of kube-apiserver that reads each request and applies rules to it.

    It serves the API server's own certificate (signed by the plane's CA, valid for 127.0.0.1), so a
    client verifies it as it would verify kube-apiserver, and it passes the client's credentials on;
    HTTP/1.1 only (a Go client falls back to it). Without a rule a request is forwarded and its answer
    passed back, watches event by event. :mod:`testing.controlplane.faults` has the rules and keeps what
    the proxy saw; :meth:`cut` resets every open connection at once, as :class:`CuttableProxy` does.
    """

    def __init__(
        self, target_port: int, *, cert_file: Path, key_file: Path, ca_file: Path, host: str = "127.0.0.1"
    ) -> None:
        self.target = (host, target_port)
        self.rules = Rules()
        self.exchanges: list[Exchange] = []
        self._server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._server_tls.load_cert_chain(str(cert_file), str(key_file))
        self._server_tls.set_alpn_protocols(["http/1.1"])
        self._upstream_tls = ssl.create_default_context(cafile=str(ca_file))
        self._listener = socket.create_server((host, 0))
        self.port = int(self._listener.getsockname()[1])
        self._sockets: set[socket.socket] = set()
        self._serving = 0
        self._lock = threading.Lock()
        self._closed = False
        self.cuts = 0
        threading.Thread(target=self._accept, name="fault-proxy-accept", daemon=True).start()

    @classmethod
    def in_front_of(cls, plane: ControlPlane) -> FaultProxy:
        return cls(
            plane.apiserver_port,
            cert_file=plane.serving_cert_file,
            key_file=plane.serving_key_file,
            ca_file=plane.ca_file,
        )

    @property
    def url(self) -> str:
        return f"https://{self.target[0]}:{self.port}"

    # -- rules and what was seen -----------------------------------------------------------------------
    def add(
        self,
        action: Action,
        *,
        method: str | None = None,
        path: str | None = None,
        verb: str | None = None,
        times: int | None = 1,
    ) -> Rule:
        """A rule catching the requests that match every given criterion (see :class:`Rule`)."""
        return self.rules.add(Rule(action, method=method, path=path, verb=verb, times=times))

    def remove(self, rule: Rule) -> None:
        self.rules.remove(rule)

    def seen(
        self, *, verb: str | None = None, path: str | None = None, method: str | None = None, since: float = 0.0
    ) -> list[Exchange]:
        """The exchanges that started after ``since`` and match (``path`` a regular expression), in the
        order they started."""
        probe = Rule(Forward(), method=method, path=path, verb=verb)
        with self._lock:
            found = [e for e in self.exchanges if e.started >= since and probe.matches(e.info)]
        return sorted(found, key=lambda e: e.started)

    def begin(self, info: RequestInfo) -> None:
        """A request is being served (watches do not count: they last)."""
        if info.verb != "watch":
            with self._lock:
                self._serving += 1

    def record(self, exchange: Exchange) -> None:
        """The request was served: keep what happened."""
        with self._lock:
            self.exchanges.append(exchange)
            if exchange.info.verb != "watch":
                self._serving -= 1

    def serving(self) -> int:
        """How many requests (not watches) are being served now: held, delayed, or waiting for an answer."""
        with self._lock:
            return self._serving

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no request is being served (each is recorded just after its answer went out)."""
        deadline = time.monotonic() + timeout
        while self.serving() and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self.serving()

    # -- connections -----------------------------------------------------------------------------------
    def track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)

    def untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    def _accept(self) -> None:
        while not self._closed:
            try:
                raw, _ = self._listener.accept()
            except OSError:
                return
            self.track(raw)
            threading.Thread(target=_Session(self, raw).run, name="fault-proxy-session", daemon=True).start()

    def upstream_connection(self) -> http.client.HTTPSConnection:
        # No timeout of its own: a quiet watch stays open, and a slow server is the client's to give up on.
        return http.client.HTTPSConnection(self.target[0], self.target[1], context=self._upstream_tls, timeout=None)

    def server_tls(self) -> ssl.SSLContext:
        return self._server_tls

    def cut(self) -> int:
        """Reset every open connection, the client's and the API server's side (new ones are accepted as
        before); how many were open."""
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            reset(sock)
        self.cuts += 1
        return len(sockets)

    def close(self) -> None:
        self._closed = True
        for rule in list(self.rules):
            if isinstance(rule.action, Hold):
                rule.action.release(Reset())
        self.rules.clear()
        self._listener.close()
        self.cut()


def reset(sock: socket.socket) -> None:
    """Close ``sock`` with a reset (SO_LINGER 0), waking any thread blocked on it."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


#: Fields that describe one connection or one message's framing, not the request: never passed on.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "host",
    }
)


@dataclass(slots=True)
class _Request:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes


class _Session:
    """One client connection: its requests one after the other, each forwarded over one kept-alive
    connection to the API server unless a rule says otherwise."""

    def __init__(self, proxy: FaultProxy, raw: socket.socket) -> None:
        self.proxy = proxy
        self.raw = raw
        self.client: ssl.SSLSocket | None = None
        self.upstream: http.client.HTTPSConnection | None = None
        #: What the request being served got so far: from the proxy (to the client), from the API server.
        self.status = 0
        self.upstream_status = 0

    def run(self) -> None:
        try:
            # Wrapping takes the raw socket's descriptor over: from here on the TLS socket is the one to cut.
            self.client = self.proxy.server_tls().wrap_socket(self.raw, server_side=True)
            self.proxy.track(self.client)
            self.proxy.untrack(self.raw)
            reader = self.client.makefile("rb")
            while (request := _read_request(reader)) is not None:
                if not self._handle(request):
                    break
        except (OSError, ValueError, http.client.HTTPException):
            pass  # the client went away, or a connection was cut
        finally:
            self._close_upstream()
            reset(self.client or self.raw)
            self.proxy.untrack(self.client or self.raw)

    def _handle(self, request: _Request) -> bool:
        """Serve one request; whether the connection stays open for the next. It is recorded whatever
        happens, with what the client and the API server were told by then (0: nothing)."""
        info = RequestInfo.parse(request.method, request.target)
        started = time.monotonic()
        _, action = self.proxy.rules.take(info)
        name = type(action).__name__
        self.status = self.upstream_status = 0
        self.proxy.begin(info)
        try:
            if isinstance(action, Hold):
                action = action.wait()
            if isinstance(action, Delay):
                time.sleep(action.seconds)
                action = Forward()
            return self._act(action, request, info)
        finally:
            self.proxy.record(
                Exchange(
                    started, time.monotonic(), info, self.status, self.upstream_status, name, decode_body(request.body)
                )
            )

    def _act(self, action: Action, request: _Request, info: RequestInfo) -> bool:
        """Do ``action``, noting the statuses as they are given; whether to keep the connection."""
        if isinstance(action, WatchError):
            self._send_watch_error(action.code, info)
            self.status = 200
            return True
        resp = None
        if not isinstance(action, Respond | Reset) or action.forward_first:
            resp = self._forward(request)
            if resp is None:
                return False  # the API server could not be reached: the client's connection goes too
            self.upstream_status = resp.status
            if isinstance(action, Respond | Reset):
                resp.read()  # the server acted; the client never hears its answer
        if isinstance(action, Reset):
            return False
        if isinstance(action, Respond):
            self._send_status(action, info)
            self.status = action.status
            return True
        assert resp is not None
        if info.verb == "watch" and resp.status == 200:
            self.status = 200
            return self._stream(resp, action.after_events if isinstance(action, CutWatch) else None)
        body = resp.read()
        if isinstance(action, SlowAnswer):
            time.sleep(action.seconds)
        self._send(resp.status, resp.reason, resp.getheaders(), body)
        self.status = resp.status
        return True

    # -- the API server's side ---------------------------------------------------------------------------
    def _forward(self, request: _Request) -> http.client.HTTPResponse | None:
        """Send the request on; its answer (headers read), or None when the API server cannot be reached.
        A kept-alive connection the server closed while idle is replaced once, as Go's transport does."""
        for fresh in (self.upstream is None, True):
            if self.upstream is None:
                self.upstream = self.proxy.upstream_connection()
            try:
                self.upstream.putrequest(request.method, request.target, skip_host=True, skip_accept_encoding=True)
                self.upstream.putheader("Host", f"{self.proxy.target[0]}:{self.proxy.target[1]}")
                for name, value in request.headers:
                    if name.lower() not in HOP_BY_HOP:
                        self.upstream.putheader(name, value)
                if request.body or request.method in ("POST", "PUT", "PATCH"):
                    self.upstream.putheader("Content-Length", str(len(request.body)))
                self.upstream.endheaders(request.body or None)
                if self.upstream.sock is not None:
                    self.proxy.track(self.upstream.sock)
                return self.upstream.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._close_upstream()
                if fresh:
                    return None
            except (OSError, http.client.HTTPException):
                self._close_upstream()
                return None
        return None

    def _close_upstream(self) -> None:
        if self.upstream is not None:
            if self.upstream.sock is not None:
                self.proxy.untrack(self.upstream.sock)
            with contextlib.suppress(Exception):
                self.upstream.close()
            self.upstream = None

    # -- the client's side -------------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        assert self.client is not None
        self.client.sendall(data)

    def _send(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes) -> None:
        head = [f"HTTP/1.1 {status} {reason}"]
        head += [f"{k}: {v}" for k, v in headers if k.lower() not in HOP_BY_HOP]
        head.append(f"Content-Length: {len(body)}")
        self._write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def _send_status(self, action: Respond, info: RequestInfo) -> None:
        body = action.body or status_body(action.status, info, message=action.message, retry_after=action.retry_after)
        headers = [("Content-Type", "application/json"), ("Cache-Control", "no-cache, private")]
        if action.retry_after is not None:
            headers.append(("Retry-After", str(action.retry_after)))
        reason = PHRASES.get(action.status, "Error")
        self._send(action.status, reason, headers, json.dumps(body).encode() + b"\n")

    def _send_watch_error(self, code: int, info: RequestInfo) -> None:
        event = json.dumps({"type": "ERROR", "object": status_body(code, info)}).encode() + b"\n"
        self._write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + _chunk(event)
            + b"0\r\n\r\n"
        )

    def _stream(self, resp: http.client.HTTPResponse, cut_after: int | None) -> bool:
        """Pass a watch on event by event; cut it mid-event after ``cut_after`` events. Whether it ended
        cleanly (the API server ended it)."""
        headers = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP]
        head = ["HTTP/1.1 200 OK", *(f"{k}: {v}" for k, v in headers), "Transfer-Encoding: chunked"]
        self._write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        passed = 0
        while line := resp.readline():
            if cut_after is not None and passed >= cut_after:
                self._write(_chunk(line[: max(len(line) // 2, 1)]))
                return False
            self._write(_chunk(line))
            passed += 1
        self._write(b"0\r\n\r\n")
        self._close_upstream()  # a watch's connection is not reused
        return True


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _read_request(reader: Any) -> _Request | None:
    """The next request on a client connection; None when the client closed it."""
    line = reader.readline(65537)
    while line in (b"\r\n", b"\n"):
        line = reader.readline(65537)
    if not line:
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers: list[tuple[str, str]] = []
    while (field_line := reader.readline(65537)) not in (b"\r\n", b"\n", b""):
        name, _, value = field_line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    fields = {k.lower(): v for k, v in headers}
    if "chunked" in fields.get("transfer-encoding", "").lower():
        body = b""
        while (size := int(reader.readline(65537).split(b";")[0].strip() or b"0", 16)) > 0:
            body += reader.read(size + 2)[:size]
        while reader.readline(65537) not in (b"\r\n", b"\n", b""):
            pass
    else:
        body = reader.read(int(fields.get("content-length") or 0))
    return _Request(method, target, headers, body)
