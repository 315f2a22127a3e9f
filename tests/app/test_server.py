"""The health and metrics endpoints (kubesched.app.server), answered as kube-scheduler's healthz handlers do."""

from __future__ import annotations

import argparse
import json
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter

from kubesched.app.server import (
    MetricsServer,
    ServingOptions,
    _Server,
    add_serving_flags,
    leader_election_check,
    self_signed_certificate,
    start_server,
)
from kubesched.clock import VirtualClock
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.live.leaderelection import LeaderElector
from tests.live.leaderelection.test_elector import FlakyCluster


def fetch(
    server: MetricsServer, path: str, *, host: str | None = None, headers: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """(status, body, content type) of a GET, verifying the server's own certificate when it is HTTPS."""
    context = None
    if server.scheme == "https":
        assert server.certificate_pem is not None
        context = ssl.create_default_context(cadata=server.certificate_pem.decode())
    url = f"{server.scheme}://{host or server.host}:{server.port}{path}"
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, response.read().decode(), response.headers["Content-Type"]
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), err.headers["Content-Type"]


@pytest.fixture
def registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("scheduler_schedule_attempts", "attempts", ["result", "profile"], registry=registry).labels(
        result="scheduled", profile="default-scheduler"
    ).inc(3)
    return registry


@pytest.fixture
def plain(registry: CollectorRegistry) -> Iterator[tuple[MetricsServer, list[bool], dict[str, str | None]]]:
    synced = [False]
    leader: dict[str, str | None] = {"error": None}
    server = start_server(
        registry,
        port=0,
        bind_address="127.0.0.1",
        secure=False,
        ready=lambda: synced[0],
        checks=[("leaderElection", lambda: leader["error"])],
    )
    yield server, synced, leader
    server.stop()


def test_secure_by_default_with_a_self_signed_certificate_for_localhost(registry: CollectorRegistry) -> None:
    server = start_server(registry, port=0, bind_address="127.0.0.1")
    try:
        assert server.scheme == "https"
        assert fetch(server, "/livez")[:2] == (200, "ok")
        assert fetch(server, "/livez", host="localhost")[:2] == (200, "ok")
        # A client that does not trust the certificate is refused, and plain HTTP gets no answer.
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            urllib.request.urlopen(f"https://127.0.0.1:{server.port}/livez", timeout=10)
        with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/livez", timeout=10).read()
    finally:
        server.stop()


def test_a_given_certificate_is_served(registry: CollectorRegistry, tmp_path: Path) -> None:
    cert, key = self_signed_certificate("127.0.0.1")
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    server = start_server(
        registry,
        port=0,
        bind_address="127.0.0.1",
        cert_file=str(tmp_path / "tls.crt"),
        key_file=str(tmp_path / "tls.key"),
    )
    try:
        assert server.certificate_pem == cert
        assert fetch(server, "/healthz")[:2] == (200, "ok")
    finally:
        server.stop()
    with pytest.raises(ValueError, match="together"):
        start_server(registry, port=0, bind_address="127.0.0.1", cert_file=str(tmp_path / "tls.crt"))


def test_readyz_waits_for_the_informers_and_lists_its_checks(plain: tuple) -> None:
    server, synced, _ = plain
    status, body, content_type = fetch(server, "/readyz")
    assert status == 500
    assert body == (
        "[+]leaderElection ok\n[+]shutdown ok\n[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n"
    )
    assert content_type.startswith("text/plain")
    assert fetch(server, "/readyz/sched-handler-sync")[:2] == (
        500,
        "internal server error: handlers are not fully synchronized\n",
    )
    assert fetch(server, "/readyz?exclude=sched-handler-sync")[:2] == (200, "ok")
    synced[0] = True
    assert fetch(server, "/readyz")[:2] == (200, "ok")
    assert fetch(server, "/readyz?verbose")[:2] == (
        200,
        "[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync ok\nreadyz check passed\n",
    )
    assert 'no matches for "nope"' in fetch(server, "/readyz?verbose&exclude=nope")[1]


def test_healthz_carries_the_leader_check_and_livez_only_pings(plain: tuple) -> None:
    server, _, leader = plain
    assert fetch(server, "/healthz?verbose")[:2] == (200, "[+]leaderElection ok\nhealthz check passed\n")
    leader["error"] = "failed election to renew leadership on lease kube-scheduler"
    assert fetch(server, "/healthz")[:2] == (500, "[-]leaderElection failed: reason withheld\nhealthz check failed\n")
    assert fetch(server, "/healthz/leaderElection")[1] == (
        "internal server error: failed election to renew leadership on lease kube-scheduler\n"
    )
    assert fetch(server, "/readyz")[0] == 500
    assert fetch(server, "/livez?verbose")[:2] == (200, "[+]ping ok\nlivez check passed\n")
    assert fetch(server, "/nothing")[0] == 404
    assert fetch(server, "/healthz/nothing")[0] == 404


def test_healthz_pings_when_given_no_checks_and_a_crashing_check_fails(registry: CollectorRegistry) -> None:
    def broken() -> str | None:
        raise RuntimeError("boom")

    server = start_server(registry, port=0, bind_address="127.0.0.1", secure=False)
    other = start_server(registry, port=0, bind_address="127.0.0.1", secure=False, checks=[("broken", broken)])
    try:
        assert fetch(server, "/healthz?verbose")[1] == "[+]ping ok\nhealthz check passed\n"
        assert fetch(server, "/readyz")[:2] == (200, "ok")  # no ready() given: nothing to wait for
        assert fetch(other, "/healthz/broken")[:2] == (500, "internal server error: RuntimeError: boom\n")
    finally:
        server.stop()
        other.stop()


def test_readyz_fails_once_shutdown_begins(plain: tuple) -> None:
    server, synced, _ = plain
    synced[0] = True
    server.begin_shutdown()
    status, body, _ = fetch(server, "/readyz?verbose")
    assert status == 500 and "[-]shutdown failed: reason withheld" in body
    assert fetch(server, "/livez")[0] == 200


def test_metrics_render_the_registry_and_the_process(plain: tuple) -> None:
    server = plain[0]
    status, body, content_type = fetch(server, "/metrics")
    assert status == 200
    assert content_type.startswith("text/plain; version=0.0.4")
    assert "# TYPE scheduler_schedule_attempts_total counter" in body
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 3.0' in body
    assert "process_resident_memory_bytes" in body
    assert "_created" not in body
    status, body, content_type = fetch(
        server, "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
    )
    assert content_type.startswith("application/openmetrics-text") and body.endswith("# EOF\n")


def test_stop_closes_the_port(registry: CollectorRegistry) -> None:
    server = start_server(registry, port=0, bind_address="127.0.0.1", secure=False)
    port = server.port
    server.stop()
    server.stop()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_leader_election_check_follows_the_elector() -> None:
    clock = VirtualClock()
    flaky = FlakyCluster(EmbeddedCluster(clock.now))
    elector = LeaderElector(flaky, clock, identity="me", jitter_factor=0.0)
    name, check = leader_election_check(elector, timeout=20)
    assert name == "leaderElection"
    elector.start()
    assert check() is None
    flaky.failing = True
    clock.advance(36)
    assert check() == "failed election to renew leadership on lease kube-scheduler"


def test_serving_flags() -> None:
    parser = argparse.ArgumentParser()
    add_serving_flags(parser)
    defaults = ServingOptions.from_args(parser.parse_args([]))
    assert defaults == ServingOptions(secure_port=10259, bind_address="0.0.0.0")
    assert defaults.enabled
    off = ServingOptions.from_args(parser.parse_args(["--secure-port", "0"]))
    assert not off.enabled and off.start(CollectorRegistry()) is None
    opts = ServingOptions.from_args(
        parser.parse_args(["--secure-port", "0", "--plain-http", "--bind-address", "127.0.0.1"])
    )
    opts = ServingOptions(secure_port=_free_port(), bind_address=opts.bind_address, plain_http=opts.plain_http)
    server = opts.start(CollectorRegistry())
    assert server is not None
    try:
        assert server.scheme == "http" and fetch(server, "/livez")[:2] == (200, "ok")
    finally:
        server.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("secure", [True, False])
def test_a_silent_client_does_not_stall_other_requests(registry: CollectorRegistry, secure: bool) -> None:
    server = start_server(registry, port=0, bind_address="127.0.0.1", secure=secure)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5):  # connects, says nothing
            assert fetch(server, "/livez")[:2] == (200, "ok")
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("bind_address", "bound", "reached"),
    [
        ("0.0.0.0", "0.0.0.0", "127.0.0.1"),
        ("127.0.0.1", "127.0.0.1", "127.0.0.1"),
    ],
)
def test_the_log_names_the_address_bound_and_the_port_picked(
    registry: CollectorRegistry, caplog: pytest.LogCaptureFixture, bind_address: str, bound: str, reached: str
) -> None:
    with caplog.at_level("INFO", logger="kubesched.app.server"):
        server = start_server(registry, port=0, bind_address=bind_address, process_metrics=False)
    try:
        assert server.port != 0
        assert server.bound_url == f"https://{bound}:{server.port}"
        assert server.url == f"https://{reached}:{server.port}"
        assert caplog.messages == [f"serving /healthz /livez /readyz /metrics on https://{bound}:{server.port}"]
        assert fetch(server, "/livez")[0] == 200
    finally:
        server.stop()


def test_an_ipv6_wildcard_is_logged_in_brackets(registry: CollectorRegistry) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        server = start_server(registry, port=0, bind_address="::", secure=False, process_metrics=False)
    except OSError:
        pytest.skip("no IPv6 on this machine")
    try:
        assert server.bound_url == f"http://[::]:{server.port}"
        assert server.url == f"http://localhost:{server.port}"
    finally:
        server.stop()


def test_configz_serves_what_runs_now(registry: CollectorRegistry) -> None:
    running = {"componentconfig": {"Parallelism": 16}}
    server = start_server(registry, port=0, bind_address="127.0.0.1", secure=False, configz=lambda: running)
    try:
        assert fetch(server, "/configz") == (200, '{"componentconfig": {"Parallelism": 16}}', "application/json")
        running = {"componentconfig": {"Parallelism": 8}}  # a reload: the next request shows it
        assert json.loads(fetch(server, "/configz")[1]) == {"componentconfig": {"Parallelism": 8}}
    finally:
        server.stop()


def test_configz_is_not_found_without_a_configuration(plain: tuple) -> None:
    server, _, _ = plain
    assert fetch(server, "/configz")[0] == 404


@pytest.mark.parametrize(
    "error",
    [
        ssl.SSLEOFError(8, "EOF occurred in violation of protocol"),
        BrokenPipeError(32, "Broken pipe"),
        ConnectionResetError(104, "reset"),
    ],
)
def test_a_client_gone_mid_answer_is_a_debug_line_not_a_traceback(
    error: Exception, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    server = _Server(("127.0.0.1", 0), BaseHTTPRequestHandler, bind_and_activate=False)
    caplog.set_level("DEBUG", logger="kubesched.app.server")
    try:
        raise error
    except Exception:
        server.handle_error(None, ("127.0.0.1", 1234))
    assert capsys.readouterr().err == ""
    assert [r.levelname for r in caplog.records] == ["DEBUG"] and "ended early" in caplog.text


def test_other_failures_while_serving_are_errors(caplog: pytest.LogCaptureFixture) -> None:
    server = _Server(("127.0.0.1", 0), BaseHTTPRequestHandler, bind_and_activate=False)
    try:
        raise KeyError("bug")
    except KeyError:
        server.handle_error(None, ("127.0.0.1", 1234))
    assert [r.levelname for r in caplog.records] == ["ERROR"] and "KeyError" in caplog.text
