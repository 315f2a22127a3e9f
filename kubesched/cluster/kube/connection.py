"""How kubesched reaches an API server: credentials from the official client, requests as raw JSON.

Credentials and kubeconfig handling (contexts, tokens, client certificates, exec plugins, in-cluster
service-account files) are the ``kubernetes`` client's: :func:`load_client_configuration` asks it, in
kube-scheduler's order: ``--kubeconfig`` (or clientConnection.kubeconfig), else ``--master`` alone, else
in-cluster. Requests then go over that configuration's own urllib3 pool (the client's TLS settings,
certificates and proxy) but carry plain JSON both ways: the client's generated models cost several times
more than ``json.loads`` on pod lists and watch streams (see README, "Talking to the API server"), and
the scheduler reads objects as the API serves them anyway.

Every request except watches waits on a token bucket with clientConnection's qps and burst, as
client-go's rate limiter does: a scheduler must not flood its API server.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import urllib3

from kubesched.cluster.protocol import AlreadyExists, ApiError, Conflict, Forbidden, Invalid, NotFound

log = logging.getLogger(__name__)

JSON = "application/json"
_warned_insecure: list[bool] = []
_ERRORS: dict[int, type[ApiError]] = {403: Forbidden, 404: NotFound, 422: Invalid}


class ClientConfigError(Exception):
    """No usable connection settings (no kubeconfig, master or in-cluster files; a broken kubeconfig)."""


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
            log.info("clientConnection.contentType %s: kubesched speaks %s", content_type, JSON)
        return cls(kubeconfig=kubeconfig or str(client_connection.get("kubeconfig") or ""), master=master,
                   qps=float(client_connection.get("qps", 50.0)),
                   burst=int(client_connection.get("burst", 100)), content_type=JSON)


def load_client_configuration(options: ConnectionOptions) -> Any:
    """A ``kubernetes.client.Configuration`` for ``options`` (kubeconfig, master, or in-cluster)."""
    from kubernetes import client, config

    cfg = client.Configuration()
    if options.kubeconfig:
        try:
            config.load_kube_config(config_file=options.kubeconfig, context=options.context,
                                    client_configuration=cfg, persist_config=False)
        except config.ConfigException as err:
            raise ClientConfigError(f"kubeconfig {options.kubeconfig}: {err}") from err
        if options.master:
            cfg.host = options.master.rstrip("/")
    elif options.master:
        # client-go's BuildConfigFromFlags with a master URL and no kubeconfig: no credentials.
        cfg.host = options.master.rstrip("/")
    else:
        try:
            config.load_incluster_config(client_configuration=cfg)
        except config.ConfigException as err:
            raise ClientConfigError(
                f"no --kubeconfig or --master given and not running in a cluster: {err}") from err
    return cfg


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
        self.configuration = configuration or load_client_configuration(options)
        self.configuration.connection_pool_maxsize = max(self.configuration.connection_pool_maxsize or 0, 32)
        self.api_client = client.ApiClient(self.configuration)
        self._pool: urllib3.PoolManager = self.api_client.rest_client.pool_manager
        self.host = self.configuration.host.rstrip("/")
        self.limiter = TokenBucket(options.qps, options.burst)
        if not self.configuration.verify_ssl and not _warned_insecure:
            # insecure-skip-tls-verify was asked for: say so once, not on every request.
            _warned_insecure.append(True)
            log.warning("not verifying the API server's certificate (insecure-skip-tls-verify)")
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

    def close(self) -> None:
        self.api_client.close()

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        cfg = self.configuration
        if cfg.refresh_api_key_hook is not None:
            cfg.refresh_api_key_hook(cfg)  # exec plugins and expiring in-cluster tokens renew here
        headers = {"Accept": JSON, "User-Agent": "kubesched"}
        # The client's own auth settings: a bearer token (static, exec plugin, in-cluster) as a header.
        for setting in cfg.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        if "authorization" not in headers and (cfg.username or cfg.password):
            headers["authorization"] = cfg.get_basic_auth_token()
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        query = {k: v for k, v in (params or {}).items() if v is not None}
        return f"{self.host}{path}" + (f"?{urlencode(query)}" if query else "")

    def request(self, method: str, path: str, body: Any = None, *, params: Mapping[str, Any] | None = None,
                content_type: str = JSON, timeout: float = 60.0) -> Any:
        """One rate-limited request; the decoded JSON answer, or an ApiError as the server reported it."""
        self.limiter.wait()
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        try:
            resp = self._pool.request(method, self.url(path, params), body=data,
                                      headers=self._headers(content_type if data is not None else None),
                                      timeout=urllib3.Timeout(connect=10.0, read=timeout), retries=False,
                                      preload_content=True)
        except urllib3.exceptions.HTTPError as err:
            raise ConnectionError_(f"{method} {path}: {err}") from err
        if resp.status >= 400:
            raise error_from_response(resp.status, resp.data)
        return json.loads(resp.data) if resp.data else None

    def stream(self, path: str, params: Mapping[str, Any], *, read_timeout: float) -> StreamResponse:
        """Open a watch: the response, to read line by line with :func:`iter_lines`."""
        try:
            resp = self._pool.request("GET", self.url(path, params), headers=self._headers(),
                                      timeout=urllib3.Timeout(connect=10.0, read=read_timeout), retries=False,
                                      preload_content=False)
        except urllib3.exceptions.HTTPError as err:
            raise ConnectionError_(f"watch {path}: {err}") from err
        if resp.status >= 400:
            data = resp.data
            resp.release_conn()
            raise error_from_response(resp.status, data)
        return StreamResponse(resp)


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
        buffer = b""
        chunks = self._resp.read_chunked(decode_content=True) if self._resp.chunked else self._resp.stream(65536)
        for chunk in chunks:
            buffer += chunk
            while True:
                end = buffer.find(b"\n")
                if end < 0:
                    break
                line, buffer = buffer[:end], buffer[end + 1:]
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
