"""Errors map to the protocol's ApiError classes as the API server's Status says; the rate limiter paces."""

from __future__ import annotations

import json
import time

import pytest

from kubesched.cluster.kube.connection import ConnectionOptions, TokenBucket, error_from_response
from kubesched.cluster.kube.paths import collection_path, object_path
from kubesched.cluster.protocol import AlreadyExists, ApiError, Conflict, Forbidden, Invalid, NotFound


def status(code: int, reason: str, message: str) -> bytes:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
                       "reason": reason, "message": message}).encode()


@pytest.mark.parametrize(("code", "reason", "cls"), [
    (404, "NotFound", NotFound), (409, "Conflict", Conflict), (409, "AlreadyExists", AlreadyExists),
    (403, "Forbidden", Forbidden), (422, "Invalid", Invalid), (500, "InternalError", ApiError),
])
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
    assert object_path("Lease", "kube-system", "kube-scheduler") == \
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
    assert object_path("CSINode", None, "n1") == "/apis/storage.k8s.io/v1/csinodes/n1"
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


def test_in_cluster_configuration_when_neither_kubeconfig_nor_master(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The service account's token and CA, and KUBERNETES_SERVICE_HOST/PORT, as a pod sees them."""
    from kubernetes.config import incluster_config

    from kubesched.cluster.kube.connection import RestClient

    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token")
    ca.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    rest = RestClient(ConnectionOptions())
    assert rest.host == "https://10.0.0.1:443"
    assert rest._headers()["authorization"].lower() == "bearer sa-token"  # the API server ignores the case
    assert rest.configuration.ssl_ca_cert == str(ca)
