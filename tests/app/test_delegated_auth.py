"""Delegated authentication and authorization (kubesched.app.delegated_auth) and the secure port using it."""

from __future__ import annotations

import argparse
import json
import ssl
import urllib.error
import urllib.request
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kubesched.app.delegated_auth import SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS, DelegatedAuth
from kubesched.app.server import ServingOptions, add_serving_flags


class FakeApiServer:
    """Answers TokenReviews from a token table and SubjectAccessReviews from a (user, path) table."""

    def __init__(self) -> None:
        self.tokens = {
            "scraper-token": {
                "username": "system:serviceaccount:monitoring:prometheus",
                "uid": "u-1",
                "groups": ["system:serviceaccounts"],
            },
            "admin-token": {"username": "admin", "groups": ["system:masters"]},
        }
        self.allowed = {("system:serviceaccount:monitoring:prometheus", "/metrics")}
        self.calls: list[tuple[str, dict]] = []
        self.down = False

    def review(self, path: str, body: dict) -> dict:
        self.calls.append((path, body))
        if self.down:
            raise ConnectionError("connection refused")
        if path == TOKEN_REVIEWS:
            user = self.tokens.get(body["spec"]["token"])
            return {**body, "status": {"authenticated": True, "user": user} if user else {"authenticated": False}}
        assert path == SUBJECT_ACCESS_REVIEWS
        spec = body["spec"]
        allowed = (spec["user"], spec["nonResourceAttributes"]["path"]) in self.allowed
        return {**body, "status": {"allowed": allowed}}


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def api() -> FakeApiServer:
    return FakeApiServer()


def test_probes_pass_without_asking(api: FakeApiServer) -> None:
    auth = DelegatedAuth(api.review)
    for path in ("/healthz", "/readyz", "/livez", "/readyz/shutdown"):
        assert auth.check("GET", path, None) is None
    assert api.calls == []


def test_a_reviewed_token_reads_metrics_and_the_answer_is_cached(api: FakeApiServer) -> None:
    clock = Clock()
    auth = DelegatedAuth(api.review, now=clock)
    assert auth.check("GET", "/metrics", "Bearer scraper-token") is None
    token_review, access_review = api.calls
    assert token_review == (
        TOKEN_REVIEWS,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "scraper-token"}},
    )
    assert access_review[1]["spec"] == {
        "user": "system:serviceaccount:monitoring:prometheus",
        "uid": "u-1",
        "groups": ["system:serviceaccounts"],
        "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
    }
    clock.t = 9.0
    assert auth.check("GET", "/metrics", "Bearer scraper-token") is None
    assert len(api.calls) == 2
    clock.t = 10.5  # cached answers expire after ten seconds
    assert auth.check("GET", "/metrics", "Bearer scraper-token") is None
    assert len(api.calls) == 4


@pytest.mark.parametrize(
    ("authorization", "code", "message"),
    [
        (None, 403, 'forbidden: User "system:anonymous" cannot get path "/metrics"'),
        ("Bearer wrong", 401, "Unauthorized"),
        ("Basic dXNlcjpwYXNz", 403, 'forbidden: User "system:anonymous" cannot get path "/metrics"'),
    ],
)
def test_refusals_are_api_statuses(api: FakeApiServer, authorization: str | None, code: int, message: str) -> None:
    denial = DelegatedAuth(api.review).check("GET", "/metrics", authorization)
    assert denial is not None and denial.code == code
    status = json.loads(denial.body)
    assert (status["kind"], status["code"], status["message"]) == ("Status", code, message)


def test_system_masters_skip_authorization_and_an_unreachable_server_refuses(api: FakeApiServer) -> None:
    auth = DelegatedAuth(api.review)
    assert auth.check("GET", "/metrics", "Bearer admin-token") is None
    assert [path for path, _ in api.calls] == [TOKEN_REVIEWS]
    api.down = True
    other = DelegatedAuth(api.review)
    denial = other.check("GET", "/metrics", "Bearer scraper-token")
    assert denial is not None and denial.code == 401
    api.down = False
    assert other.check("GET", "/metrics", "Bearer scraper-token") is None  # failures are not cached


def test_always_allow_paths_take_prefixes_and_wildcards(api: FakeApiServer) -> None:
    auth = DelegatedAuth(api.review, always_allow_paths=["/metrics", "/debug/*"])
    assert auth.check("GET", "/metrics", None) is None
    assert auth.check("GET", "/debug/pprof/heap", None) is None
    denial = auth.check("GET", "/healthz", None)
    assert denial is not None and denial.code == 403


def test_the_secure_port_asks_the_api_server_and_plain_http_does_not(api: FakeApiServer) -> None:
    parser = argparse.ArgumentParser()
    add_serving_flags(parser)
    args = parser.parse_args(["--bind-address", "127.0.0.1"])
    options = ServingOptions.from_args(args)
    assert options.always_allow_paths == ("/healthz", "/readyz", "/livez")
    server = ServingOptions(secure_port=_free_port(), bind_address="127.0.0.1").start(
        CollectorRegistry(), review=api.review
    )
    assert server is not None
    try:
        assert server.certificate_pem is not None
        context = ssl.create_default_context(cadata=server.certificate_pem.decode())

        def get(path: str, token: str | None = None) -> tuple[int, Any]:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            request = urllib.request.Request(f"{server.url}{path}", headers=headers)
            try:
                with urllib.request.urlopen(request, context=context, timeout=10) as response:
                    return response.status, response.read().decode()
            except urllib.error.HTTPError as err:
                return err.code, json.loads(err.read())

        assert get("/healthz") == (200, "ok")
        code, body = get("/metrics")
        assert code == 403 and body["reason"] == "Forbidden"
        code, text = get("/metrics", "scraper-token")
        assert code == 200 and "process_resident_memory_bytes" in text
    finally:
        server.stop()
    plain = ServingOptions(secure_port=_free_port(), bind_address="127.0.0.1", plain_http=True).start(
        CollectorRegistry(), review=api.review
    )
    assert plain is not None
    try:
        calls = len(api.calls)
        with urllib.request.urlopen(f"{plain.url}/metrics", timeout=10) as response:
            assert response.status == 200
        assert len(api.calls) == calls
    finally:
        plain.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
