"""How kubesched reaches an API server: credentials from the official client, requests as raw JSON.

Credentials and kubeconfig handling (contexts, tokens, client certificates, exec plugins, in-cluster
service-account files) are the ``kubernetes`` client's, found where kubectl looks for them
(:mod:`kubesched.live.client_config`). Requests then go over that configuration's own urllib3 pool
(the client's TLS settings, certificates and proxy) but carry plain JSON both ways: the client's
generated models cost several times more than ``json.loads`` on pod lists and watch streams (see
README, "Talking to the API server"), and the scheduler reads objects as the API serves them anyway.

Every request except watches waits on a token bucket with clientConnection's qps and burst, as
client-go's rate limiter does: a scheduler must not flood its API server.

Credentials are read from the client's configuration at most every ``CREDENTIALS_TTL`` seconds, and at
once when the server answers 401 (the request is then retried once). The client itself re-runs its
refresh hook on every request (it reloads the kubeconfig and walks the proxy environment): 0.1 ms a
time, and reading the token runs it, so it cost about a fifth of each request's CPU.
"""

from __future__ import annotations

import contextlib
import json
import logging
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import urllib3

from kubesched.cluster.protocol import AlreadyExists, ApiError, Conflict, Forbidden, Invalid, NotFound
from kubesched.klog import level_for
from kubesched.live.client_config import load_client_configuration
from kubesched.live.transport import Transport, TransportError

log = logging.getLogger(__name__)

JSON = "application/json"
USER_AGENT = "kubesched"
_warned_insecure: list[bool] = []
_ERRORS: dict[int, type[ApiError]] = {403: Forbidden, 404: NotFound, 422: Invalid}
#: How long credentials read from the client's configuration are reused. client-go re-reads an in-cluster
#: token file once a minute and asks an exec plugin again when its credential expires or a request gets
#: 401; the client's hook checks the expiry itself, so asking it every few seconds loses nothing.
CREDENTIALS_TTL = 10.0
UNAUTHORIZED = 401
#: Connections kept open for reuse: above the scheduler's binding threads (each holds one while its
#: request is out) plus the informers', so a burst of bindings does not close and re-open (a TLS
#: handshake each, for both sides) what it will need again a moment later.
MAX_IDLE_CONNECTIONS = 96


class ConnectionError_(ApiError):
    """The API server could not be reached (refused, reset, timed out): the request may be retried."""

    default_code = 0
    default_reason = "ConnectionFailed"


@dataclass(frozen=True, slots=True)
class ConnectionOptions:
    """Where and how fast: kube-scheduler's --kubeconfig / --master and clientConnection."""

    kubeconfig: str = ""
    master: str = ""
    context: str | None = None
    qps: float = 50.0
    burst: int = 100
    content_type: str = JSON

    @classmethod
    def from_client_connection(cls, client_connection: Mapping[str, Any], *, kubeconfig: str = "",
                               master: str = "") -> ConnectionOptions:
        """Flags win over the configuration file's clientConnection, as in kube-scheduler."""
        content_type = str(client_connection.get("contentType") or JSON)
        if content_type != JSON:
            # Protobuf would need the generated Go types; JSON is what every API server also serves.
            log.log(level_for(2), "clientConnection.contentType %s: kubesched speaks %s", content_type, JSON)
        return cls(kubeconfig=kubeconfig or str(client_connection.get("kubeconfig") or ""), master=master,
                   qps=float(client_connection.get("qps", 50.0)),
                   burst=int(client_connection.get("burst", 100)), content_type=JSON)


class TokenBucket:
    """client-go's token-bucket rate limiter: ``burst`` requests at once, then ``qps`` per second."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = float(qps)
        self.burst = max(int(burst), 1)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def wait(self) -> None:
        if self.qps <= 0:  # qps 0 or negative: unlimited (as client-go treats qps < 0)
            return
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            delay = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if delay > 0:
            time.sleep(delay)


class RestClient:
    """JSON requests to one API server with the official client's credentials and TLS settings."""

    def __init__(self, options: ConnectionOptions, configuration: Any | None = None) -> None:
        from kubernetes import client

        self.options = options
        self.configuration = configuration or load_client_configuration(options.kubeconfig, options.master,
                                                                         options.context)
        self.configuration.connection_pool_maxsize = max(self.configuration.connection_pool_maxsize or 0,
                                                          MAX_IDLE_CONNECTIONS)
        self.api_client = client.ApiClient(self.configuration)
        self._pool: urllib3.PoolManager = self.api_client.rest_client.pool_manager
        self.host = self.configuration.host.rstrip("/")
        self.limiter = TokenBucket(options.qps, options.burst)
        self._credentials: tuple[float, dict[str, str], bytes] | None = None
        # Requests go over the client's own connections with lighter framing (see transport.py); only
        # behind a proxy, where the framing differs, does urllib3 send them.
        self._transport: Transport | None = None
        if type(self._pool) is urllib3.PoolManager:
            pool = self._pool.connection_from_url(self.host)
            share_tls_context(pool)
            self._transport = Transport(pool, urlsplit(self.host).netloc,
                                        max_idle=self.configuration.connection_pool_maxsize)
        if not self.configuration.verify_ssl and not _warned_insecure:
            # insecure-skip-tls-verify was asked for: say so once, not on every request.
            _warned_insecure.append(True)
            log.warning("not verifying the API server's certificate (insecure-skip-tls-verify)")
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self.api_client.close()

    def _auth_headers(self, *, refresh: bool = False) -> tuple[dict[str, str], bytes]:
        """Accept, User-Agent and the credentials, as a dict and as header lines: cached for
        ``CREDENTIALS_TTL``, the credentials read again when ``refresh``."""
        now = time.monotonic()
        cached = self._credentials
        if cached is not None and not refresh and now - cached[0] < CREDENTIALS_TTL:
            return cached[1], cached[2]
        cfg = self.configuration
        headers = {"Accept": JSON, "User-Agent": USER_AGENT}
        # The client's own auth settings: a bearer token (static, exec plugin, in-cluster) as a header.
        # Reading the token runs the client's refresh hook: exec plugins and in-cluster tokens renew here.
        for setting in cfg.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        if "authorization" not in headers and (cfg.username or cfg.password):
            headers["authorization"] = cfg.get_basic_auth_token()
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode("latin-1")
        self._credentials = (now, headers, lines)
        return headers, lines

    def _headers(self, content_type: str | None = None, *, refresh: bool = False) -> dict[str, str]:
        headers = dict(self._auth_headers(refresh=refresh)[0])
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        return self.host + self._target(path, params)

    @staticmethod
    def _target(path: str, params: Mapping[str, Any] | None) -> str:
        query = {k: v for k, v in (params or {}).items() if v is not None}
        return f"{path}?{urlencode(query)}" if query else path

    def request(self, method: str, path: str, body: Any = None, *, params: Mapping[str, Any] | None = None,
                content_type: str = JSON, timeout: float = 60.0) -> Any:
        """One rate-limited request; the decoded JSON answer, or an ApiError as the server reported it."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        target = self._target(path, params)
        for attempt in range(2):
            self.limiter.wait()
            try:
                status, payload = self._send(method, target, data, content_type, timeout, refresh=attempt > 0)
            except (urllib3.exceptions.HTTPError, TransportError) as err:
                raise ConnectionError_(f"{method} {path}: {err}") from err
            if status != UNAUTHORIZED:
                break
        if status >= 400:
            raise error_from_response(status, payload)
        return json.loads(payload) if payload else None

    def _send(self, method: str, target: str, data: bytes | None, content_type: str, timeout: float,
              *, refresh: bool) -> tuple[int, bytes]:
        if self._transport is not None:
            fields = self._auth_headers(refresh=refresh)[1]
            if data is not None:
                fields += b"Content-Type: %s\r\n" % content_type.encode()
            return self._transport.request(method, target, fields, data, timeout)
        resp = self._pool.request(method, self.host + target, body=data,
                                  headers=self._headers(content_type if data is not None else None, refresh=refresh),
                                  timeout=urllib3.Timeout(connect=10.0, read=timeout), retries=False,
                                  preload_content=True)
        return resp.status, resp.data

    def stream(self, path: str, params: Mapping[str, Any], *, read_timeout: float) -> StreamResponse:
        """Open a watch: the response, to iterate for its events."""
        url = self.url(path, params)
        for attempt in range(2):
            try:
                resp = self._pool.request("GET", url, headers=self._headers(refresh=attempt > 0),
                                          timeout=urllib3.Timeout(connect=10.0, read=read_timeout),
                                          retries=False, preload_content=False)
            except urllib3.exceptions.HTTPError as err:
                raise ConnectionError_(f"watch {path}: {err}") from err
            if resp.status != UNAUTHORIZED or attempt:
                break
            resp.drain_conn()
            resp.release_conn()
        if resp.status >= 400:
            data = resp.data
            resp.release_conn()
            raise error_from_response(resp.status, data)
        return StreamResponse(resp)


def share_tls_context(pool: Any) -> None:
    """One TLS context for every connection of an HTTPS ``pool`` (urllib3's ``ssl_context`` argument).

    Otherwise urllib3 makes a context per connection and loads the system's CA bundle into it, tens of
    milliseconds each: at start-up every informer opens two connections at once (list, then watch) and
    every binder one, and the first scheduling cycle waited on it. The context is what urllib3 would
    make; the CA and client certificate the pool was given are still loaded per connection (one file
    each), and the system bundle is loaded once, only when the server's certificate is verified
    against it."""
    if not isinstance(pool, urllib3.HTTPSConnectionPool) or "ssl_context" in pool.conn_kw:
        return
    from urllib3.util.ssl_ import create_urllib3_context, resolve_cert_reqs

    cert_reqs = resolve_cert_reqs(pool.cert_reqs)
    context = create_urllib3_context(cert_reqs=cert_reqs)
    if cert_reqs != ssl.CERT_NONE and not (pool.ca_certs or pool.ca_cert_dir or pool.conn_kw.get("ca_cert_data")):
        context.load_default_certs()
    pool.conn_kw["ssl_context"] = context


class StreamResponse:
    """An open watch response: decoded JSON events one per line; ``close`` cuts it from any thread."""

    def __init__(self, resp: Any) -> None:
        self._resp = resp

    def close(self) -> None:
        # shutdown (urllib3 >= 2.3) unblocks a reader in another thread; either may fail once closed.
        with contextlib.suppress(Exception):
            self._resp.shutdown()
        with contextlib.suppress(Exception):
            self._resp.close()

    def __iter__(self) -> Iterator[dict]:
        # The API server flushes each event as a line of its own (usually one chunk each).
        buffer = b""
        chunks = self._resp.read_chunked(decode_content=True) if self._resp.chunked else self._resp.stream(65536)
        for chunk in chunks:
            lines = (buffer + chunk if buffer else chunk).split(b"\n")
            buffer = lines.pop()
            for line in lines:
                if line.strip():
                    yield json.loads(line)
        if buffer.strip():
            yield json.loads(buffer)


def error_from_response(code: int, data: bytes) -> ApiError:
    """The ApiError subclass for an HTTP error, with the server's Status message and reason."""
    message, reason = data.decode(errors="replace")[:500], None
    try:
        status = json.loads(data)
        if isinstance(status, dict) and status.get("kind") == "Status":
            message, reason = status.get("message") or message, status.get("reason") or None
    except ValueError:
        pass
    if code == 409:
        cls: type[ApiError] = AlreadyExists if reason == "AlreadyExists" else Conflict
    else:
        cls = _ERRORS.get(code, ApiError)
    return cls(message, code=code, reason=reason)
