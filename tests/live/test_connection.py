"""RestClient against the real kube-apiserver, its serving certificate verified: many threads share one
TLS context and keep-alive connections, and a CA that did not sign the server's certificate is refused."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from kubesched.live.connection import ConnectionError_, ConnectionOptions, RestClient
from kubesched.live.transport import Transport
from testing.controlplane.fixture import ControlPlane, self_signed_ca

pytestmark = pytest.mark.controlplane


def verifying_kubeconfig(path: Path, plane: ControlPlane, ca: Path) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": plane.url, "certificate-authority": str(ca)}}],
                "users": [{"name": "admin", "user": {"token": plane.admin_token}}],
                "contexts": [{"name": "admin", "context": {"cluster": "c", "user": "admin"}}],
                "current-context": "admin",
            }
        )
    )
    return path


def unrelated_ca(path: Path) -> Path:
    _, cert = self_signed_ca("not-the-apiserver-ca")
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def test_verified_requests_from_many_threads_share_connections(
    control_plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connects: list[int] = []
    original = Transport._connect

    def counting(self: Transport) -> object:
        connects.append(1)
        return original(self)

    monkeypatch.setattr(Transport, "_connect", counting)
    ca = control_plane.ca_file
    rest = RestClient(
        ConnectionOptions(kubeconfig=str(verifying_kubeconfig(tmp_path / "kc", control_plane, ca)), qps=-1)
    )
    assert rest.configuration.verify_ssl
    try:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: rest.request("GET", "/version"), range(200)))
    finally:
        rest.close()
    assert "gitVersion" in answers[0] and all(a == answers[0] for a in answers)
    assert 1 <= len(connects) <= 8  # kept alive: at most one connection per thread


def test_a_certificate_signed_by_another_ca_is_refused(control_plane: ControlPlane, tmp_path: Path) -> None:
    kubeconfig = verifying_kubeconfig(tmp_path / "kc", control_plane, unrelated_ca(tmp_path / "ca.crt"))
    rest = RestClient(ConnectionOptions(kubeconfig=str(kubeconfig), qps=-1))
    try:
        with pytest.raises(ConnectionError_, match="CERTIFICATE_VERIFY_FAILED"):
            rest.request("GET", "/version")
    finally:
        rest.close()
