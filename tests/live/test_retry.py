"""What is sent again, when, and how often: client-go's rules (rest/with_retry.go, retry.OnError)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.cluster.protocol import ApiError, Conflict
from kubesched.live.connection import ConnectionError_, ConnectionOptions, RestClient, error_from_response
from kubesched.live.retry import DEFAULT_BACKOFF, MAX_RETRIES, Retry, is_retriable, on_error, retry_after_seconds
from tests.live.test_transport import ScriptedServer, ok


def answer(code: int, reason: str, retry_after: str | None = None) -> bytes:
    body = json.dumps(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "code": code,
            "reason": reason,
            "message": f"{reason} injected",
        }
    ).encode()
    extra = f"Retry-After: {retry_after}\r\n".encode() if retry_after is not None else b""
    return b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n%s\r\n%s" % (code, len(body), extra, body)


class Waits:
    """Stands in for the client's closed event: records each wait instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.closed = False

    def wait(self, delay: float) -> bool:
        self.delays.append(delay)
        return self.closed

    def set(self) -> None:
        self.closed = True


@pytest.fixture
def client() -> Iterator[Any]:
    from kubernetes import client as k8s

    servers: list[ScriptedServer] = []

    def start(script: list[tuple[bytes, bool]], timeout: float = 60.0) -> tuple[ScriptedServer, RestClient, Waits]:
        server = ScriptedServer(script)
        servers.append(server)
        cfg = k8s.Configuration()
        cfg.host = f"http://127.0.0.1:{server.port}"
        rest = RestClient(ConnectionOptions(qps=-1, timeout=timeout), cfg)
        waits = Waits()
        rest._closed = waits  # type: ignore[assignment]
        return server, rest, waits

    yield start
    for server in servers:
        server.stop()


def paths(server: ScriptedServer) -> list[str]:
    return [r.split(b" ")[0].decode() + " " + r.split(b" ")[1].decode() for r in server.requests]


@pytest.mark.parametrize(
    ("status", "reason"),
    [(429, "TooManyRequests"), (500, "InternalError"), (503, "ServiceUnavailable"), (504, "Timeout")],
)
def test_an_answer_that_says_retry_after_is_sent_again_after_that_long(client, status: int, reason: str) -> None:
    server, rest, waits = client(
        [(answer(status, reason, "2"), False), (answer(status, reason, "1"), False), (ok(b'{"ok":true}'), False)]
    )
    # A write too: its body is kept, so it can be sent again (client-go's bodyBytes).
    assert rest.request("POST", "/api/v1/namespaces/d/pods/p/binding", {"target": "n1"}) == {"ok": True}
    assert waits.delays == [2, 1]
    assert paths(server) == ["POST /api/v1/namespaces/d/pods/p/binding"] * 3
    assert all(r.endswith(b'{"target":"n1"}') for r in server.requests)


@pytest.mark.parametrize(
    ("status", "reason", "retry_after"),
    [
        (503, "ServiceUnavailable", None),  # no Retry-After: the caller's backoff applies
        (429, "TooManyRequests", "soon"),  # not whole seconds: client-go reads only those
        (409, "Conflict", "1"),  # not 429 or 5xx: Retry-After means nothing there
        (404, "NotFound", None),
    ],
)
def test_other_error_answers_go_to_the_caller_at_once(
    client, status: int, reason: str, retry_after: str | None
) -> None:
    server, rest, waits = client([(answer(status, reason, retry_after), False)])
    with pytest.raises(ApiError) as err:
        rest.request("GET", "/api/v1/pods")
    assert (err.value.code, err.value.reason) == (status, reason)
    assert waits.delays == [] and len(server.requests) == 1


def test_retries_stop_after_ten_and_the_last_answer_is_the_error(client) -> None:
    server, rest, waits = client([(answer(429, "TooManyRequests", "0"), False)] * (MAX_RETRIES + 1))
    with pytest.raises(ApiError) as err:
        rest.request("GET", "/api/v1/nodes")
    assert err.value.code == 429
    assert len(server.requests) == MAX_RETRIES + 1 and waits.delays == [0] * MAX_RETRIES


def test_a_wait_longer_than_the_request_may_take_is_not_waited(client) -> None:
    server, rest, waits = client([(answer(503, "ServiceUnavailable", "30"), False)], timeout=5.0)
    with pytest.raises(ApiError, match="ServiceUnavailable injected"):
        rest.request("GET", "/api/v1/nodes")
    assert waits.delays == [] and len(server.requests) == 1


def test_closing_the_client_ends_a_wait_with_the_error(client) -> None:
    server, rest, waits = client([(answer(429, "TooManyRequests", "5"), False)])
    rest.close()
    with pytest.raises(ApiError) as err:
        rest.request("GET", "/api/v1/nodes")
    assert err.value.code == 429 and waits.delays == [5] and len(server.requests) == 1


def test_a_lost_connection_sends_a_get_again_after_a_second_and_never_a_write(client) -> None:
    # The server reads each request and closes the connection without a word (a reset, an API server
    # going away): the GET is sent again a second later; the POST may have been acted on, so it is not.
    server, rest, waits = client([(b"", True), (ok(b'{"items":[]}'), False), (b"", True)])
    assert rest.request("GET", "/api/v1/pods") == {"items": []}
    assert waits.delays == [1.0]
    with pytest.raises(ConnectionError_) as err:
        rest.request("POST", "/api/v1/namespaces/d/pods/p/binding", {})
    assert err.value.lost and not err.value.refused
    assert paths(server) == ["GET /api/v1/pods", "GET /api/v1/pods", "POST /api/v1/namespaces/d/pods/p/binding"]
    assert waits.delays == [1.0]


def test_a_timeout_is_not_a_lost_connection(client) -> None:
    server, rest, waits = client([(b"", False)], timeout=0.3)  # reads the request, never answers
    with pytest.raises(ConnectionError_, match="timed out") as err:
        rest.request("GET", "/api/v1/pods")
    assert not err.value.lost and waits.delays == [] and len(server.requests) == 1


def test_a_refused_connection_is_marked_refused() -> None:
    from kubernetes import client as k8s

    from testing.controlplane.fixture import free_port

    cfg = k8s.Configuration()
    cfg.host = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ConnectionError_) as err:
        RestClient(ConnectionOptions(qps=-1), cfg).request("GET", "/version")
    assert err.value.refused and not err.value.lost
    assert is_retriable(err.value)


# -- the pieces --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "seconds"), [("3", 3), (" 0 ", 0), ("1.5", None), ("Wed, 21 Oct 2015", None), ("", None), (None, None)]
)
def test_retry_after_counts_whole_seconds_only(value: str | None, seconds: int | None) -> None:
    assert retry_after_seconds(value) == seconds


def test_a_retry_is_counted_and_bounded() -> None:
    retry = Retry("GET", None, max_retries=2)
    assert [retry.after_answer(503, "1"), retry.after_lost_connection(), retry.after_answer(503, "1")] == [1, 1.0, None]
    assert Retry("POST", None).after_lost_connection() is None
    assert Retry("GET", 10).after_answer(429, "11") is None


@pytest.mark.parametrize(
    ("err", "retriable"),
    [
        (error_from_response(500, b'{"kind":"Status","reason":"InternalError","message":"x"}'), True),
        (error_from_response(503, b"service unavailable"), True),  # no Status: the reason comes from the code
        (error_from_response(409, b'{"kind":"Status","reason":"Conflict","message":"x"}'), False),
        (error_from_response(504, b'{"kind":"Status","reason":"Timeout","message":"x"}'), False),
        (ConnectionError_("refused", refused=True), True),
        (ConnectionError_("reset", lost=True), False),
        (ValueError("not an API error"), False),
    ],
)
def test_status_patches_retry_what_kube_scheduler_calls_retriable(err: Exception, retriable: bool) -> None:
    assert is_retriable(err) is retriable


def test_on_error_backs_off_as_the_default_backoff_and_gives_up_with_the_last_error() -> None:
    calls: list[int] = []
    sleeps: list[float] = []

    def failing() -> None:
        calls.append(1)
        raise ApiError(f"try {len(calls)}", code=500, reason="InternalError")

    rng = random.Random(0)
    with pytest.raises(ApiError, match="try 4"):
        on_error(failing, is_retriable, rng=rng, sleep=sleeps.append)
    assert len(calls) == DEFAULT_BACKOFF.steps
    base = [0.010, 0.050, 0.250]
    assert all(b <= s <= b * 1.1 for b, s in zip(base, sleeps, strict=True))


def test_on_error_stops_at_an_error_that_is_not_retriable_and_returns_a_success() -> None:
    outcomes: list[Exception | str] = [ApiError("x", code=503, reason="ServiceUnavailable"), "done"]
    sleeps: list[float] = []

    def flaky() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert on_error(flaky, is_retriable, sleep=sleeps.append) == "done" and len(sleeps) == 1
    conflict = Conflict("stale")
    with pytest.raises(Conflict):
        on_error(lambda: (_ for _ in ()).throw(conflict), is_retriable, sleep=sleeps.append)
    assert len(sleeps) == 1


def test_a_watch_is_opened_again_after_retry_after(client) -> None:
    event = b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'
    stream = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(event), event)
    server, rest, waits = client([(answer(429, "TooManyRequests", "3"), False), (stream, False)])
    events = list(rest.stream("/api/v1/pods", {"watch": "true"}, read_timeout=5))
    assert [e["object"]["metadata"]["name"] for e in events] == ["a"]
    assert waits.delays == [3] and len(server.requests) == 2
