"""How kubesched reaches an API server: credentials from the official client, requests as raw JSON.

Credentials and kubeconfig handling (contexts, tokens, client certificates, exec plugins, in-cluster
service-account files) are the ``kubernetes`` client's, found where kubectl looks for them
(:mod:`kubesched.live.client_config`). Requests then go over that configuration's own urllib3 pool
(the client's TLS settings, certificates and proxy) but carry plain JSON both ways: the client's
generated models cost several times more than ``json.loads`` on pod lists and watch streams (see
README, "Talking to the API server"), and the scheduler reads objects as the API serves them anyway.

Every request except watches waits on a token bucket with clientConnection's qps and burst, as
client-go's rate limiter does: a scheduler must not flood its API server. A request is sent again
when client-go would send it again (:mod:`kubesched.live.retry`): after 429 or a 5xx that says
Retry-After, and a GET after its connection was lost; each try waits on the token bucket again.

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
from kubesched.klog import Logger, level_for
from kubesched.live.client_config import load_client_configuration
from kubesched.live.retry import Retry
from kubesched.live.transport import Answer, ConnectionLost, ConnectionRefused, Transport, TransportError

log = logging.getLogger(__name__)
logger = Logger(__name__)

JSON = "application/json"
USER_AGENT = "kubesched"
_warned_insecure: list[bool] = []
_ERRORS: dict[int, type[ApiError]] = {403: Forbidden, 404: NotFound, 422: Invalid}
#: The reason client-go gives an error answer that carries no Status (NewGenericServerResponse).
_GENERIC_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
#: Seconds one request may take, its retries included, unless told otherwise (--request-timeout):
#: kube-apiserver's own default request timeout, past which it has given up on the request itself.
DEFAULT_TIMEOUT = 60.0
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
    """The API server could not be reached (refused, reset, timed out): the request may be retried.

    ``refused``: nobody listened (kube-scheduler retries a status patch then); ``lost``: the connection
    broke once open, so a write may or may not have reached the server."""

    default_code = 0
    default_reason = "ConnectionFailed"

    def __init__(self, message: str, *, refused: bool = False, lost: bool = False) -> None:
        super().__init__(message)
        self.refused = refused
        self.lost = lost


@dataclass(frozen=True, slots=True)
class ConnectionOptions:
    """Where and how fast: kube-scheduler's --kubeconfig / --master and clientConnection."""

    kubeconfig: str = ""
    master: str = ""
    context: str | None = None
    qps: float = 50.0
    burst: int = 100
    content_type: str = JSON
    #: Seconds a request may take, retries included (kubectl's --request-timeout); 0: no limit.
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_client_connection(
        cls,
        client_connection: Mapping[str, Any],
        *,
        kubeconfig: str = "",
        master: str = "",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> ConnectionOptions:
        """Flags win over the configuration file's clientConnection, as in kube-scheduler."""
        content_type = str(client_connection.get("contentType") or JSON)
        if content_type != JSON:
            # Protobuf would need the generated Go types; JSON is what every API server also serves.
            log.log(level_for(2), "clientConnection.contentType %s: kubesched speaks %s", content_type, JSON)
        return cls(
            kubeconfig=kubeconfig or str(client_connection.get("kubeconfig") or ""),
            master=master,
            qps=float(client_connection.get("qps", 50.0)),
            burst=int(client_connection.get("burst", 100)),
            content_type=JSON,
            timeout=timeout,
        )


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
        self.configuration = configuration or load_client_configuration(
            options.kubeconfig, options.master, options.context
        )
        self.configuration.connection_pool_maxsize = max(
            self.configuration.connection_pool_maxsize or 0, MAX_IDLE_CONNECTIONS
        )
        self.api_client = client.ApiClient(self.configuration)
        self._pool: urllib3.PoolManager = self.api_client.rest_client.pool_manager
        self.host: str = self.configuration.host.rstrip("/")
        self.limiter = TokenBucket(options.qps, options.burst)
        self._credentials: tuple[float, dict[str, str], bytes] | None = None
        #: Set by ``close``: a request waiting to be sent again gives up.
        self._closed = threading.Event()
        # Requests go over the client's own connections with lighter framing (see transport.py); only
        # behind a proxy, where the framing differs, does urllib3 send them.
        self._transport: Transport | None = None
        if type(self._pool) is urllib3.PoolManager:
            pool = self._pool.connection_from_url(self.host)
            share_tls_context(pool)
            self._transport = Transport(
                pool, urlsplit(self.host).netloc, max_idle=self.configuration.connection_pool_maxsize
            )
        if not self.configuration.verify_ssl and not _warned_insecure:
            # insecure-skip-tls-verify was asked for: say so once, not on every request.
            _warned_insecure.append(True)
            log.warning("not verifying the API server's certificate (insecure-skip-tls-verify)")
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

    def close(self) -> None:
        self._closed.set()
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

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        content_type: str = JSON,
        timeout: float | None = None,
    ) -> Any:
        """One rate-limited request, sent again as client-go would (see the module docstring); the
        decoded JSON answer, or an ApiError as the server reported it. ``timeout`` bounds it all
        (the client's own limit when None, none when 0)."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        target = self._target(path, params)
        limit = self.options.timeout if timeout is None else timeout
        retry = Retry(method, limit or None)
        refresh, refreshed = False, False
        while True:
            self.limiter.wait()
            try:
                answer = self._send(method, target, data, content_type, retry.remaining(), refresh=refresh)
            except (urllib3.exceptions.HTTPError, TransportError) as err:
                failure = connection_error(f"{method} {path}", err)
                self._pause(retry.after_lost_connection() if failure.lost else None, retry, failure, path)
                continue
            refresh = answer.status == UNAUTHORIZED and not refreshed
            if refresh:  # read the credentials again and try once more
                refreshed = True
                continue
            if answer.status >= 400:
                error = error_from_response(answer.status, answer.body)
                self._pause(retry.after_answer(answer.status, answer.retry_after), retry, error, path)
                continue
            return json.loads(answer.body) if answer.body else None

    def _pause(self, delay: float | None, retry: Retry, error: ApiError, path: str) -> None:
        """Wait ``delay`` before the request is sent again; raise ``error`` when it is not (None)
        or when the client is closed meanwhile."""
        if delay is None:
            raise error
        if v := logger.v(4):  # client-go's line, before it sends the request again
            v.info(
                "Got a Retry-After response", "delay", f"{delay:g}s", "attempt", retry.attempts, "url", self.host + path
            )
        if self._closed.wait(delay):
            raise error

    def _send(
        self, method: str, target: str, data: bytes | None, content_type: str, timeout: float | None, *, refresh: bool
    ) -> Answer:
        if self._transport is not None:
            fields = self._auth_headers(refresh=refresh)[1]
            if data is not None:
                fields += b"Content-Type: %s\r\n" % content_type.encode()
            return self._transport.exchange(method, target, fields, data, timeout)
        resp = self._pool.request(
            method,
            self.host + target,
            body=data,
            headers=self._headers(content_type if data is not None else None, refresh=refresh),
            timeout=urllib3.Timeout(connect=10.0, read=timeout),
            retries=False,
            preload_content=True,
        )
        return Answer(resp.status, resp.data, resp.headers.get("Retry-After"))

    def stream(self, path: str, params: Mapping[str, Any], *, read_timeout: float) -> StreamResponse:
        """Open a watch: the response, to iterate for its events. Opening it is retried as a request
        is (a watch is a GET); its events are the informer's to read."""
        url = self.url(path, params)
        retry = Retry("GET", read_timeout)
        refresh, refreshed = False, False
        while True:
            try:
                resp = self._pool.request(
                    "GET",
                    url,
                    headers=self._headers(refresh=refresh),
                    timeout=urllib3.Timeout(connect=10.0, read=read_timeout),
                    retries=False,
                    preload_content=False,
                )
            except urllib3.exceptions.HTTPError as err:
                failure = connection_error(f"watch {path}", err)
                self._pause(retry.after_lost_connection() if failure.lost else None, retry, failure, path)
                continue
            if resp.status < 400:
                return StreamResponse(resp)
            data = resp.data
            resp.release_conn()
            refresh = resp.status == UNAUTHORIZED and not refreshed
            if refresh:
                refreshed = True
                continue
            error = error_from_response(resp.status, data)
            self._pause(retry.after_answer(resp.status, resp.headers.get("Retry-After")), retry, error, path)


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

    def __iter__(self) -> Iterator[dict[str, Any]]:
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


def connection_error(what: str, err: BaseException) -> ConnectionError_:
    """A failed exchange as a ConnectionError_, marked lost or refused as client-go tells them apart."""
    if isinstance(err, TransportError):
        lost, refused = isinstance(err, ConnectionLost), isinstance(err, ConnectionRefused)
    else:  # urllib3: ProtocolError is a connection reset or closed early; NewConnectionError may be refused
        lost = isinstance(err, urllib3.exceptions.ProtocolError)
        refused = isinstance(err, urllib3.exceptions.NewConnectionError) and "refused" in str(err).lower()
    return ConnectionError_(f"{what}: {err}", refused=refused, lost=lost)


def error_from_response(code: int, data: bytes) -> ApiError:
    """The ApiError subclass for an HTTP error, with the server's Status message and reason (or the
    reason client-go gives the code when the body is not a Status)."""
    message, reason = data.decode(errors="replace")[:500], _GENERIC_REASONS.get(code)
    try:
        status = json.loads(data)
        if isinstance(status, dict) and status.get("kind") == "Status":
            message, reason = status.get("message") or message, status.get("reason") or reason
    except ValueError:
        pass
    if code == 409:
        cls: type[ApiError] = AlreadyExists if reason == "AlreadyExists" else Conflict
    else:
        cls = _ERRORS.get(code, ApiError)
    return cls(message, code=code, reason=reason)
