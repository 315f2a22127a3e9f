"""The scheduler's HTTP endpoints: /healthz, /livez, /readyz and /metrics, as kube-scheduler serves them.

Public API::

    server = start_server(
        scheduler.metrics.registry,                   # what /metrics renders (plus process_* metrics)
        port=10259, bind_address="0.0.0.0",           # 0 picks a free port; server.port tells which
        secure=True,                                  # HTTPS with a self-signed certificate (default)
        cert_file=None, key_file=None,                # or a certificate of your own (--tls-cert-file ...)
        ready=informers_synced,                       # /readyz check "sched-handler-sync"
        checks=[leader_election_check(elector)],      # on /healthz and /readyz ("leaderElection")
        configz=lambda: componentconfig(config),      # /configz (see kubesched.app.configz)
    )
    server.port, server.url                           # where it listens (url: as reached from this machine)
    server.begin_shutdown()                           # /readyz fails from now on ("shutdown")
    server.stop()                                     # close the socket and join the thread

    add_serving_flags(parser)
    ServingOptions.from_args(args).start(registry, ready=..., checks=...,
                                         review=lambda path, body: rest.request("POST", path, body))

What each path answers (the apiserver healthz handlers' format, so probes and humans read the same):

- ``/livez``: ping only; the process answers, so it is alive.
- ``/healthz``: the ``checks`` (kube-scheduler installs the leader-election watchdog there), or ping when
  there are none.
- ``/readyz``: the ``checks``, then ``shutdown`` (fails once :meth:`MetricsServer.begin_shutdown` ran) and
  ``sched-handler-sync`` (fails until ``ready()`` is true: the informer stores have synced).
- ``/<path>/<check>`` runs one check; ``?verbose`` lists every check (``[+]name ok``); ``?exclude=name``
  skips one. A failing root check answers 500 with ``[-]name failed: reason withheld`` lines, as upstream.
- ``/metrics``: the Prometheus text format (or OpenMetrics when the scraper asks), from the scheduler's own
  registry plus the process collectors (``process_resident_memory_bytes`` ...).
- ``/configz``: the configuration running now, as JSON in kube-scheduler's shape (``configz()`` is asked on
  every request, so a reloaded configuration shows at once); 404 without ``configz``.

A check is ``(name, fn)``: ``fn()`` returns None when healthy or a string saying why not (an exception
counts as a failure with its text).

Authorization: given a way to reach the API server (``ServingOptions.start(review=...)``), HTTPS
requests are checked as kube-scheduler checks them: TokenReview for a bearer token, then a
SubjectAccessReview for the path, except ``--authorization-always-allow-paths`` (the probes) and
``system:masters`` (:mod:`kubesched.app.delegated_auth`).

Secure serving: kube-scheduler listens on ``--secure-port`` 10259 with a self-signed certificate it makes at
start-up when no ``--tls-cert-file`` is given; so does this server (an RSA-2048 key and a certificate for
``localhost``, 127.0.0.1 and the bind address, valid a year, made with ``cryptography``). The ssl module
only loads a chain from files, so the pair is written to a private (0700) temporary folder, loaded and
removed at once. ``--secure-port 0`` turns serving off, as upstream; ``--plain-http`` serves the same
endpoints without TLS and without authorization (for local runs and simple probes).

Why ``http.server`` and not prometheus_client's own servers: ``start_http_server`` and
``make_wsgi_app`` answer the metrics page on every path, so the health endpoints would need a WSGI
router around them anyway; a :class:`~http.server.ThreadingHTTPServer` in a daemon thread with a
twenty-line handler serves all five paths, renders the registry with prometheus_client's own encoder
(``choose_encoder``: content negotiation included) and wraps its socket with TLS directly.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import socket
import ssl
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector, disable_created_metrics
from prometheus_client.exposition import choose_encoder

from kubesched.app.delegated_auth import DEFAULT_ALWAYS_ALLOW_PATHS, DelegatedAuth, Review

if TYPE_CHECKING:
    from kubesched.live.leaderelection import LeaderElector

log = logging.getLogger(__name__)

#: kube-scheduler's default --secure-port.
DEFAULT_SECURE_PORT = 10259
#: Seconds a connection may stay silent (handshake or request) before the server drops it.
REQUEST_TIMEOUT = 10.0

HealthCheck = tuple[str, Callable[[], str | None]]


def leader_election_check(elector: LeaderElector, timeout: float = 20.0) -> HealthCheck:
    """kube-scheduler's leader-election watchdog: fails when this replica holds the Lease but has not
    renewed it for longer than the lease duration plus ``timeout`` seconds (20 s upstream)."""
    return "leaderElection", lambda: elector.check(timeout)


def _run_check(fn: Callable[[], str | None]) -> str | None:
    try:
        return fn()
    except Exception as err:
        return f"{type(err).__name__}: {err}"


class _Registries:
    """Several registries rendered as one (the scheduler's and the process collectors')."""

    def __init__(self, registries: Sequence[Any]) -> None:
        self._registries = registries

    def collect(self) -> Iterator[Any]:
        for registry in self._registries:
            yield from registry.collect()


class MetricsServer:
    """A running endpoint server; build it with :func:`start_server`."""

    def __init__(self, httpd: ThreadingHTTPServer, thread: threading.Thread, scheme: str) -> None:
        self._httpd = httpd
        self._thread = thread
        self.scheme = scheme
        #: The address and port the socket is bound to (the port chosen when 0 was asked).
        self.bound_host: str = str(httpd.server_address[0])
        self.port: int = httpd.server_address[1]
        #: Where a client on this machine reaches it (a wildcard address is reached on loopback).
        self.host: str = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "localhost"}.get(
            self.bound_host, self.bound_host
        )
        self._shutting_down = threading.Event()
        #: The PEM certificate served (self-signed or loaded), so clients can pin it; None for plain HTTP.
        self.certificate_pem: bytes | None = None

    @property
    def url(self) -> str:
        """Where a client on this machine reaches the server."""
        return _url(self.scheme, self.host, self.port)

    @property
    def bound_url(self) -> str:
        """What the server listens on (``https://0.0.0.0:10259`` for every IPv4 address), for the log."""
        return _url(self.scheme, self.bound_host, self.port)

    def begin_shutdown(self) -> None:
        """From now on /readyz fails its ``shutdown`` check (load balancers drain us) while serving goes on."""
        self._shutting_down.set()

    def shutting_down(self) -> bool:
        return self._shutting_down.is_set()

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        self._shutting_down.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        self._httpd.server_close()


def _url(scheme: str, host: str, port: int) -> str:
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def start_server(
    registry: CollectorRegistry,
    *,
    port: int = DEFAULT_SECURE_PORT,
    bind_address: str = "0.0.0.0",
    secure: bool = True,
    cert_file: str | None = None,
    key_file: str | None = None,
    ready: Callable[[], bool] | None = None,
    checks: Iterable[HealthCheck] = (),
    process_metrics: bool = True,
    auth: DelegatedAuth | None = None,
    configz: Callable[[], Any] | None = None,
) -> MetricsServer:
    """Serve the health endpoints and ``registry`` on ``bind_address:port`` from a daemon thread.

    ``port=0`` binds a free port (tests); ``secure=False`` serves plain HTTP; ``auth`` checks every
    request with the API server first (:mod:`kubesched.app.delegated_auth`). See the module docstring.
    """
    checks = list(checks)
    # kube-scheduler exposes no *_created series; prometheus_client's switch for them is process-wide.
    disable_created_metrics()
    registries: list[Any] = [registry]
    if process_metrics:
        process_registry = CollectorRegistry()
        ProcessCollector(registry=process_registry)
        PlatformCollector(registry=process_registry)
        registries.append(process_registry)
    combined = _Registries(registries)
    holder: dict[str, MetricsServer] = {}

    def shutdown_check() -> str | None:
        return "process is shutting down" if holder["server"].shutting_down() else None

    def sync_check() -> str | None:
        return None if ready is None or ready() else "handlers are not fully synchronized"

    groups: dict[str, list[HealthCheck]] = {
        "livez": [("ping", lambda: None)],
        "healthz": checks or [("ping", lambda: None)],
        "readyz": [*checks, ("shutdown", shutdown_check), ("sched-handler-sync", sync_check)],
    }

    class Handler(_Handler):
        pass

    Handler.groups, Handler.metrics_source, Handler.auth, Handler.configz = groups, combined, auth, configz

    httpd = (_Server6 if ":" in bind_address else _Server)((bind_address, port), Handler)
    certificate = _serve_tls(httpd, bind_address, cert_file, key_file) if secure else None
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, name="kubesched-serving", daemon=True
    )
    server = MetricsServer(httpd, thread, "https" if secure else "http")
    server.certificate_pem = certificate
    holder["server"] = server
    thread.start()
    log.info("serving /healthz /livez /readyz /metrics on %s", server.bound_url)
    return server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The TLS handshake happens here, on the connection's own thread: done in accept() it would
        # let one silent client stall every probe.
        if isinstance(request, ssl.SSLSocket):
            request.settimeout(REQUEST_TIMEOUT)
            try:
                request.do_handshake()
            except (OSError, ssl.SSLError) as err:
                log.debug("TLS handshake with %s failed: %s", client_address, err)
                return
        super().finish_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that goes away mid-answer (a scraper's timeout, a probe closing early) is routine:
        a debug line, not the traceback socketserver prints; anything else is logged as an error."""
        err = sys.exc_info()[1]
        if isinstance(err, ConnectionError | TimeoutError | ssl.SSLError):
            log.debug("connection from %s ended early: %s", client_address, err)
            return
        log.error("serving %s failed", client_address, exc_info=err)


class _Server6(_Server):
    address_family = socket.AF_INET6


def _serve_tls(httpd: ThreadingHTTPServer, bind_address: str, cert_file: str | None, key_file: str | None) -> bytes:
    """Wrap ``httpd``'s socket with TLS (TLS 1.2 at least); the PEM certificate it serves, loaded from
    ``cert_file`` or made at start-up."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_file and key_file:
        context.load_cert_chain(cert_file, key_file)
        with open(cert_file, "rb") as f:
            certificate = f.read()
    elif cert_file or key_file:
        httpd.server_close()
        raise ValueError("--tls-cert-file and --tls-private-key-file must be given together")
    else:
        certificate, key = self_signed_certificate(bind_address)
        _load_pem_pair(context, certificate, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    return certificate


class _Handler(BaseHTTPRequestHandler):
    groups: dict[str, list[HealthCheck]] = {}
    metrics_source: Any = None
    auth: DelegatedAuth | None = None
    configz: Callable[[], Any] | None = None
    protocol_version = "HTTP/1.1"
    server_version = "kubesched"
    timeout = REQUEST_TIMEOUT

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if self.auth is not None:
            denial = self.auth.check(self.command, url.path, self.headers.get("Authorization"))
            if denial is not None:
                self._reply(denial.code, denial.body, "application/json")
                return
        query = parse_qs(url.query, keep_blank_values=True)
        parts = [p for p in url.path.split("/") if p]
        if parts == ["metrics"]:
            encoder, content_type = choose_encoder(self.headers.get("Accept") or "")
            self._reply(200, encoder(self.metrics_source), content_type)
            return
        configz = type(self).configz  # on the class: a plain function, not a method of the handler
        if parts == ["configz"] and configz is not None:
            self._reply(200, json.dumps(configz()).encode(), "application/json")
            return
        if parts and parts[0] in self.groups:
            checks = self.groups[parts[0]]
            if len(parts) == 1:
                self._root_health(parts[0], checks, query)
                return
            if len(parts) == 2:
                for name, fn in checks:
                    if name == parts[1]:
                        error = _run_check(fn)
                        if error is None:
                            self._reply(200, b"ok")
                        else:
                            self._reply(500, f"internal server error: {error}\n".encode())
                        return
        self._reply(404, b"404 page not found\n")

    def do_HEAD(self) -> None:
        self.do_GET()

    def _root_health(self, group: str, checks: list[HealthCheck], query: dict[str, list[str]]) -> None:
        excluded = set(query.get("exclude", []))
        unknown = set(excluded)
        lines: list[str] = []
        failed: list[str] = []
        for name, fn in checks:
            if name in excluded:
                unknown.discard(name)
                lines.append(f"[+]{name} excluded: ok")
                continue
            error = _run_check(fn)
            if error is None:
                lines.append(f"[+]{name} ok")
            else:
                lines.append(f"[-]{name} failed: reason withheld")
                failed.append(f"{name}: {error}")
        if unknown:
            names = ",".join(f'"{n}"' for n in sorted(unknown))
            lines.append(f"warn: some health checks cannot be excluded: no matches for {names}")
        if failed:
            log.info("%s check failed: %s", group, "; ".join(failed))
            self._reply(500, ("\n".join(lines) + f"\n{group} check failed\n").encode())
            return
        if "verbose" not in query:
            self._reply(200, b"ok")
            return
        self._reply(200, ("\n".join(lines) + f"\n{group} check passed\n").encode())

    def _reply(self, code: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)


# -- certificates ------------------------------------------------------------------------------------------
def self_signed_certificate(bind_address: str = "0.0.0.0") -> tuple[bytes, bytes]:
    """A PEM certificate and key for ``localhost``, 127.0.0.1 and ``bind_address`` (when it is a specific
    address), valid for a year from now: what kube-scheduler makes when given no certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.now(UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"localhost@{int(now.timestamp())}")])
    addresses: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        bound = ipaddress.ip_address(bind_address)
    except ValueError:
        bound = None
    if bound is not None and not bound.is_unspecified and str(bound) != "127.0.0.1":
        addresses.append(x509.IPAddress(bound))
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(addresses), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return cert_pem, key_pem


def _load_pem_pair(context: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as folder:
        os.chmod(folder, 0o700)
        cert_path = os.path.join(folder, "tls.crt")
        key_path = os.path.join(folder, "tls.key")
        with open(os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(key_pem)
        with open(cert_path, "wb") as f:
            f.write(cert_pem)
        context.load_cert_chain(cert_path, key_path)


# -- flags -------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ServingOptions:
    """kube-scheduler's secure-serving flags, plus ``--plain-http``."""

    secure_port: int = DEFAULT_SECURE_PORT
    bind_address: str = "0.0.0.0"
    cert_file: str | None = None
    key_file: str | None = None
    plain_http: bool = False
    always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_PATHS

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServingOptions:
        return cls(
            secure_port=args.secure_port,
            bind_address=args.bind_address,
            cert_file=args.tls_cert_file,
            key_file=args.tls_private_key_file,
            plain_http=args.plain_http,
            always_allow_paths=tuple(p.strip() for p in args.authorization_always_allow_paths.split(",") if p.strip()),
        )

    @property
    def enabled(self) -> bool:
        return self.secure_port != 0

    def start(
        self,
        registry: CollectorRegistry,
        *,
        ready: Callable[[], bool] | None = None,
        checks: Iterable[HealthCheck] = (),
        review: Review | None = None,
        configz: Callable[[], Any] | None = None,
    ) -> MetricsServer | None:
        """Start serving as the flags say; None when ``--secure-port 0`` turned serving off.

        With ``review`` (POST a review object to the API server), HTTPS requests outside
        ``--authorization-always-allow-paths`` are authenticated and authorized by the API server, as
        kube-scheduler's are; plain HTTP is never checked.
        """
        if not self.enabled:
            return None
        auth = None
        if review is not None and not self.plain_http:
            auth = DelegatedAuth(review, always_allow_paths=self.always_allow_paths)
        return start_server(
            registry,
            port=self.secure_port,
            bind_address=self.bind_address,
            secure=not self.plain_http,
            cert_file=self.cert_file,
            key_file=self.key_file,
            ready=ready,
            checks=checks,
            auth=auth,
            configz=configz,
        )


def add_serving_flags(parser: argparse.ArgumentParser) -> None:
    """Add --secure-port, --bind-address, --tls-cert-file, --tls-private-key-file and --plain-http."""
    group = parser.add_argument_group("serving")
    group.add_argument(
        "--secure-port",
        type=int,
        default=DEFAULT_SECURE_PORT,
        metavar="PORT",
        help="port for /healthz, /livez, /readyz and /metrics (HTTPS); 0 turns serving off "
        f"(default {DEFAULT_SECURE_PORT})",
    )
    group.add_argument("--bind-address", default="0.0.0.0", metavar="IP", help="address to listen on (default 0.0.0.0)")
    group.add_argument(
        "--tls-cert-file",
        default=None,
        metavar="FILE",
        help="x509 certificate for HTTPS (default: a self-signed one made at start-up)",
    )
    group.add_argument(
        "--tls-private-key-file", default=None, metavar="FILE", help="private key matching --tls-cert-file"
    )
    group.add_argument(
        "--plain-http",
        action="store_true",
        help="serve the same endpoints over plain HTTP on --secure-port (no TLS, no authorization)",
    )
    group.add_argument(
        "--authorization-always-allow-paths",
        default=",".join(DEFAULT_ALWAYS_ALLOW_PATHS),
        metavar="PATHS",
        help="paths served without asking the API server (default /healthz,/readyz,/livez)",
    )
