"""Errors map to the protocol's ApiError classes as the API server's Status says; the rate limiter paces."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kubesched.cluster.protocol import AlreadyExists, ApiError, Conflict, Forbidden, Invalid, NotFound
from kubesched.live.connection import ConnectionOptions, TokenBucket, error_from_response
from kubesched.live.paths import collection_path, object_path


def status(code: int, reason: str, message: str) -> bytes:
    return json.dumps(
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason, "message": message}
    ).encode()


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (404, "NotFound", NotFound),
        (409, "Conflict", Conflict),
        (409, "AlreadyExists", AlreadyExists),
        (403, "Forbidden", Forbidden),
        (422, "Invalid", Invalid),
        (500, "InternalError", ApiError),
    ],
)
def test_status_errors_become_protocol_errors(code: int, reason: str, cls: type[ApiError]) -> None:
    err = error_from_response(code, status(code, reason, f'pods "x" {reason}'))
    assert type(err) is cls
    assert (err.code, err.reason, err.message) == (code, reason, f'pods "x" {reason}')


def test_a_non_status_body_is_kept_as_the_message() -> None:
    err = error_from_response(502, b"bad gateway")
    assert (err.code, err.message) == (502, "bad gateway")


def test_paths_follow_group_version_and_scope() -> None:
    assert collection_path("Pod") == "/api/v1/pods"
    assert collection_path("Pod", "ns") == "/api/v1/namespaces/ns/pods"
    assert object_path("Pod", "ns", "p", "binding") == "/api/v1/namespaces/ns/pods/p/binding"
    assert object_path("Node", None, "n1") == "/api/v1/nodes/n1"
    assert collection_path("PodDisruptionBudget") == "/apis/policy/v1/poddisruptionbudgets"
    assert (
        object_path("Lease", "kube-system", "kube-scheduler")
        == "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
    )
    assert object_path("CSINode", None, "n1") == "/apis/storage.k8s.io/v1/csinodes/n1"
    assert collection_path("VolumeAttachment") == "/apis/storage.k8s.io/v1/volumeattachments"
    assert collection_path("PersistentVolumeClaim", "ns") == "/api/v1/namespaces/ns/persistentvolumeclaims"


def test_token_bucket_allows_a_burst_then_paces_at_qps() -> None:
    bucket = TokenBucket(qps=50, burst=5)
    start = time.monotonic()
    for _ in range(5):
        bucket.wait()
    assert time.monotonic() - start < 0.05
    for _ in range(5):
        bucket.wait()
    assert time.monotonic() - start >= 5 / 50 * 0.9


def test_flags_win_over_client_connection() -> None:
    conn = {"kubeconfig": "/file", "qps": 5000, "burst": 4000, "contentType": "application/vnd.kubernetes.protobuf"}
    opts = ConnectionOptions.from_client_connection(conn, kubeconfig="/flag")
    assert (opts.kubeconfig, opts.qps, opts.burst, opts.content_type) == ("/flag", 5000.0, 4000, "application/json")
    assert ConnectionOptions.from_client_connection(conn).kubeconfig == "/file"


def test_in_cluster_configuration_when_no_kubeconfig_is_found(tmp_path, monkeypatch) -> None:
    """The service account's token and CA, and KUBERNETES_SERVICE_HOST/PORT, as a pod sees them."""
    from kubernetes.config import incluster_config

    from kubesched.live.connection import RestClient

    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token")
    ca.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config, no $KUBECONFIG: a pod's view
    monkeypatch.delenv("KUBECONFIG", raising=False)
    rest = RestClient(ConnectionOptions())
    assert rest.host == "https://10.0.0.1:443"
    assert rest._headers()["authorization"].lower() == "bearer sa-token"  # the API server ignores the case
    assert rest.configuration.ssl_ca_cert == str(ca)


class _TokenServer(BaseHTTPRequestHandler):
    """Answers 200 to the one accepted bearer token and 401 to any other, counting what it saw."""

    accepted = "Bearer old"
    seen: list[str] = []

    def do_GET(self) -> None:
        token = self.headers.get("authorization", "")
        self.seen.append(token)
        code = 200 if token == self.accepted else 401
        body = b'{"kind":"Status","code":%d}' % code
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def token_server() -> Iterator[str]:
    _TokenServer.accepted, _TokenServer.seen = "Bearer old", []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TokenServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _rotating_client(host: str) -> tuple[Any, list[str]]:
    """A RestClient whose configuration's refresh hook (as exec plugins set one) hands out ``tokens[-1]``."""
    from kubernetes import client

    from kubesched.live.connection import RestClient

    tokens = ["old"]
    calls: list[str] = []
    cfg = client.Configuration()
    cfg.host = host
    cfg.api_key = {"BearerToken": "old"}
    cfg.api_key_prefix = {"BearerToken": "Bearer"}

    def refresh(c: Any) -> None:
        calls.append(tokens[-1])
        c.api_key["BearerToken"] = tokens[-1]

    cfg.refresh_api_key_hook = refresh  # type: ignore[assignment]  # the client declares the hook as None
    rest = RestClient(ConnectionOptions(qps=-1), cfg)
    rest.tokens = tokens  # type: ignore[attr-defined]
    return rest, calls


def test_credentials_are_read_once_per_ttl_not_per_request(token_server: str) -> None:
    rest, calls = _rotating_client(token_server)
    for _ in range(20):
        assert rest.request("GET", "/version") == {"kind": "Status", "code": 200}
    assert len(calls) == 1
    assert _TokenServer.seen == ["Bearer old"] * 20


def test_a_401_rereads_the_credentials_and_retries_once(token_server: str) -> None:
    rest, calls = _rotating_client(token_server)
    rest.request("GET", "/version")
    # The credential rotates (an exec plugin's token expired): the cached header is refused once, then
    # the hook is asked again and the request goes through with the new token.
    rest.tokens.append("new")
    _TokenServer.accepted = "Bearer new"
    assert rest.request("GET", "/version") == {"kind": "Status", "code": 200}
    assert _TokenServer.seen[1:] == ["Bearer old", "Bearer new"]
    assert len(calls) == 2
    # A credential the server never accepts fails with the 401 after one retry, not in a loop.
    _TokenServer.accepted = "Bearer other"
    with pytest.raises(ApiError) as err:
        rest.request("GET", "/version")
    assert err.value.code == 401
    assert _TokenServer.seen[3:] == ["Bearer new", "Bearer new"]
