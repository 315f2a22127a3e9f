"""The fault proxy in front of a stand-in HTTPS server: rules by method, path and verb; answers as
kube-apiserver writes them; resets; watches cut mid-event; held requests; what it records."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from testing.controlplane.faults import (
    CutWatch,
    Hold,
    RequestInfo,
    Reset,
    Respond,
    Rule,
    Rules,
    SlowAnswer,
    WatchError,
    status_body,
)
from testing.controlplane.fixture import _write_serving_certificate
from testing.controlplane.proxy import FaultProxy

EVENTS = [{"type": "ADDED", "object": {"metadata": {"name": f"p{i}", "resourceVersion": str(i)}}} for i in range(3)]


class Upstream(BaseHTTPRequestHandler):
    """Answers a watch with three events, any other GET with its path, a POST with its body."""

    protocol_version = "HTTP/1.1"
    posts: list[bytes] = []

    def do_GET(self) -> None:
        if "watch=true" in self.path:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in EVENTS:
                line = json.dumps(event).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return
        self._reply(200, {"path": self.path})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.posts.append(body)
        self._reply(201, json.loads(body))

    def _reply(self, code: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[FaultProxy]:
    ca, cert, key = tmp_path / "ca.crt", tmp_path / "tls.crt", tmp_path / "tls.key"
    _write_serving_certificate(ca, cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    Upstream.posts = []
    fault_proxy = FaultProxy(server.server_address[1], cert_file=cert, key_file=key, ca_file=ca)
    fault_proxy.ca = ca  # type: ignore[attr-defined]
    yield fault_proxy
    fault_proxy.close()
    server.shutdown()
    server.server_close()


def client(proxy: FaultProxy) -> http.client.HTTPSConnection:
    context = ssl.create_default_context(cafile=str(proxy.ca))  # type: ignore[attr-defined]
    return http.client.HTTPSConnection("127.0.0.1", proxy.port, context=context, timeout=10)


def call(conn: http.client.HTTPSConnection, method: str, path: str, body: Any = None) -> tuple[int, dict, Any]:
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    return resp.status, dict(resp.getheaders()), json.loads(raw) if raw else None


BINDING = "/api/v1/namespaces/default/pods/p/binding"


@pytest.mark.parametrize(
    ("method", "target", "verb", "parts"),
    [
        ("GET", "/api/v1/pods?watch=true&resourceVersion=5", "watch", ("", "pods", "", "")),
        ("GET", "/api/v1/pods?limit=500", "list", ("", "pods", "", "")),
        ("GET", "/api/v1/namespaces/ns/pods/p", "get", ("ns", "pods", "p", "")),
        ("POST", "/api/v1/namespaces/ns/pods/p/binding", "create", ("ns", "pods", "p", "binding")),
        ("PATCH", "/api/v1/namespaces/ns/pods/p/status", "patch", ("ns", "pods", "p", "status")),
        (
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
            "update",
            ("kube-system", "leases", "l", ""),
        ),
        ("DELETE", "/api/v1/nodes/n1", "delete", ("", "nodes", "n1", "")),
        ("DELETE", "/api/v1/namespaces/ns/pods", "deletecollection", ("ns", "pods", "", "")),
        ("GET", "/api/v1/namespaces/ns", "get", ("", "namespaces", "ns", "")),
    ],
)
def test_requests_are_read_as_kube_apiserver_reads_them(
    method: str, target: str, verb: str, parts: tuple[str, str, str, str]
) -> None:
    info = RequestInfo.parse(method, target)
    assert (info.verb, (info.namespace, info.resource, info.name, info.subresource)) == (verb, parts)


def test_status_bodies_are_written_as_apimachinery_builds_them() -> None:
    info = RequestInfo.parse("POST", BINDING)
    conflict = status_body(409, info)
    assert conflict["reason"] == "Conflict" and conflict["details"] == {"name": "p", "kind": "pods/binding"}
    assert conflict["message"].startswith('Operation cannot be fulfilled on pods/binding "p": ')
    assert status_body(429, retry_after=3)["details"] == {"retryAfterSeconds": 3}
    assert status_body(500, message="etcd down")["message"] == "Internal error occurred: etcd down"
    assert (status_body(410)["reason"], status_body(503)["reason"]) == ("Expired", "ServiceUnavailable")


def test_a_rule_catches_its_first_matches_only() -> None:
    rules = Rules()
    rule = rules.add(Rule(Reset(), method="POST", path=r".*/binding", times=2))
    info = RequestInfo.parse("POST", BINDING)
    assert [rules.take(info)[0] for _ in range(3)] == [rule, rule, None]
    assert rules.take(RequestInfo.parse("GET", BINDING))[0] is None and len(rule.hits) == 2


def test_without_a_rule_requests_are_forwarded_and_recorded(proxy: FaultProxy) -> None:
    conn = client(proxy)
    assert call(conn, "GET", "/api/v1/nodes")[::2] == (200, {"path": "/api/v1/nodes"})
    assert call(conn, "POST", BINDING, {"target": "n1"})[::2] == (201, {"target": "n1"})
    assert proxy.wait_idle()
    seen = proxy.seen()
    assert [(e.info.verb, e.status, e.upstream_status, e.action) for e in seen] == [
        ("list", 200, 200, "Forward"),
        ("create", 201, 201, "Forward"),
    ]
    assert seen[1].body == {"target": "n1"} and proxy.serving() == 0


def test_an_error_answer_before_or_after_the_server_acted(proxy: FaultProxy) -> None:
    proxy.add(Respond(429, retry_after=2), method="POST", path=BINDING)
    proxy.add(Respond(409, forward_first=True), method="POST", path=BINDING)
    conn = client(proxy)
    status, headers, body = call(conn, "POST", BINDING, {"n": 1})
    assert (status, headers["Retry-After"], body["reason"], body["details"]) == (
        429,
        "2",
        "TooManyRequests",
        {"retryAfterSeconds": 2},
    )
    status, _, body = call(conn, "POST", BINDING, {"n": 2})
    assert (status, body["reason"]) == (409, "Conflict")
    assert Upstream.posts == [b'{"n": 2}']  # only the second reached the server
    assert proxy.wait_idle()
    assert [(e.status, e.upstream_status) for e in proxy.seen()] == [(429, 0), (409, 201)]


def test_a_reset_answers_nothing(proxy: FaultProxy) -> None:
    proxy.add(Reset(forward_first=True), method="POST")
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        call(client(proxy), "POST", BINDING, {"n": 1})
    assert Upstream.posts == [b'{"n": 1}']
    assert proxy.wait_idle()
    assert [(e.status, e.upstream_status) for e in proxy.seen()] == [(0, 201)]


def test_a_watch_cut_mid_event_delivers_half_an_event_then_breaks(proxy: FaultProxy) -> None:
    proxy.add(CutWatch(after_events=1), verb="watch")
    conn = client(proxy)
    conn.request("GET", "/api/v1/pods?watch=true")
    resp = conn.getresponse()
    assert json.loads(resp.readline()) == EVENTS[0]
    rest = b""
    try:
        while chunk := resp.read1(65536):
            rest += chunk
    except (http.client.HTTPException, ConnectionError):
        pass  # the connection is gone
    second = json.dumps(EVENTS[1]).encode() + b"\n"
    assert rest == second[: len(second) // 2]  # half of the next event, and nothing after it
    # Without the rule a watch passes every event and ends cleanly.
    conn = client(proxy)
    conn.request("GET", "/api/v1/pods?watch=true")
    assert [json.loads(line) for line in client_lines(conn.getresponse())] == EVENTS


def client_lines(resp: http.client.HTTPResponse) -> list[bytes]:
    return [line for line in iter(resp.readline, b"")]


def test_a_watch_error_event_says_410(proxy: FaultProxy) -> None:
    proxy.add(WatchError(410), verb="watch")
    conn = client(proxy)
    conn.request("GET", "/api/v1/pods?watch=true")
    events = [json.loads(line) for line in client_lines(conn.getresponse())]
    assert [(e["type"], e["object"]["code"], e["object"]["reason"]) for e in events] == [("ERROR", 410, "Expired")]


def test_a_held_request_waits_for_the_test_and_a_slow_answer_comes_late(proxy: FaultProxy) -> None:
    hold = Hold()
    proxy.add(hold, method="POST")
    proxy.add(SlowAnswer(0.3), verb="list")
    answers: list[int] = []
    thread = threading.Thread(target=lambda: answers.append(call(client(proxy), "POST", BINDING, {"n": 1})[0]))
    thread.start()
    assert hold.caught.wait(10)
    assert proxy.serving() == 1 and Upstream.posts == []  # held: not forwarded
    hold.release(Respond(503))
    thread.join(10)
    assert answers == [503] and Upstream.posts == []
    start = time.monotonic()
    assert call(client(proxy), "GET", "/api/v1/pods")[0] == 200
    assert time.monotonic() - start >= 0.3
    assert proxy.wait_idle()
    assert [e.action for e in proxy.seen()] == ["Hold", "SlowAnswer"]
