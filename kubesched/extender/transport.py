"""How an extender's verbs reach it: JSON over HTTP(S), or a Python callable in this process.

HTTP keeps one persistent connection per thread and extender (kube-scheduler's client reuses
connections too), bounded by the extender's ``httpTimeout``. An in-process extender
(``urlPrefix: python:package.module:function``) is called as ``function(verb, args)`` with the
same JSON documents an HTTP extender would receive, and returns the JSON document it would answer;
both are passed through a JSON round trip so that it sees exactly the wire format. It makes
simulations deterministic and needs no server; ``httpTimeout`` does not apply to it.
"""

from __future__ import annotations

import http.client
import importlib
import json
import os
import ssl
import tempfile
import threading
from collections.abc import Callable
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

from kubesched.extender.config import PYTHON_SCHEME, ExtenderConfig, TLSConfig
from kubesched.framework.extender import ExtenderError


class Transport(Protocol):
    def send(self, verb: str, args: Any) -> Any:
        """POST ``args`` to ``verb`` and return the decoded JSON answer; ExtenderError otherwise."""
        ...

    def close(self) -> None: ...


def make_transport(config: ExtenderConfig) -> Transport:
    if config.in_process:
        return CallableTransport(config.url_prefix)
    return HTTPTransport(config)


class CallableTransport:
    """An extender that is a Python function: ``function(verb, args) -> result``."""

    def __init__(self, url_prefix: str) -> None:
        self.url_prefix = url_prefix
        self.fn = load_callable(url_prefix[len(PYTHON_SCHEME) :])

    def send(self, verb: str, args: Any) -> Any:
        try:
            answer = self.fn(verb, json.loads(json.dumps(args)))
            return json.loads(json.dumps(answer))
        except Exception as err:  # the extender's own failure, reported like an HTTP one
            raise ExtenderError(f"failed {verb} with extender at URL {self.url_prefix}: {err}") from err

    def close(self) -> None:
        pass


def load_callable(path: str) -> Callable[[str, Any], Any]:
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ValueError(f'extender "{PYTHON_SCHEME}{path}": expected python:package.module:function')
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except Exception as err:
        raise ValueError(f'extender "{PYTHON_SCHEME}{path}" cannot be loaded: {err}') from None
    if not callable(fn):
        raise ValueError(f'extender "{PYTHON_SCHEME}{path}" is not callable')
    return cast("Callable[[str, Any], Any]", fn)


class HTTPTransport:
    """POST JSON to ``urlPrefix/verb``, one keep-alive connection per thread."""

    def __init__(self, config: ExtenderConfig) -> None:
        self.url_prefix = config.url_prefix.rstrip("/")
        parts = urlsplit(self.url_prefix)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f'extender urlPrefix "{config.url_prefix}": expected http(s)://host[:port]/path '
                f"or {PYTHON_SCHEME}package.module:function"
            )
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port
        self.path = parts.path.rstrip("/")
        self.timeout = config.http_timeout
        self.context = _ssl_context(config) if self.https else None
        self.server_name = config.tls.server_name if config.tls else ""
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.https:
                conn = _HTTPSConnection(
                    self.host, self.port, timeout=self.timeout, context=self.context, server_name=self.server_name
                )
            else:
                conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def send(self, verb: str, args: Any) -> Any:
        url = f"{self.url_prefix}/{verb}"
        body = json.dumps(args, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for retry in (True, False):
            conn = self._connection()
            try:
                conn.request("POST", f"{self.path}/{verb}", body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as err:
                # A kept-alive connection the server closed meanwhile: one fresh try.
                self.close()
                if not retry:
                    raise ExtenderError(f"failed {verb} with extender at URL {url}: {err}") from err
            except (OSError, http.client.HTTPException) as err:
                self.close()
                raise ExtenderError(f"failed {verb} with extender at URL {url}: {err or type(err).__name__}") from err
        if resp.will_close:
            self.close()
        if resp.status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
        try:
            return json.loads(data or b"null")
        except ValueError as err:
            raise ExtenderError(f"failed {verb} with extender at URL {url}: invalid JSON answer: {err}") from err

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class _HTTPSConnection(http.client.HTTPSConnection):
    """HTTPS with tlsConfig.serverName as the name checked (and sent as SNI) instead of the host."""

    def __init__(
        self, host: str, port: int | None, *, timeout: float, context: ssl.SSLContext | None, server_name: str
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._server_name = server_name
        self._ctx = context

    def connect(self) -> None:
        if not self._server_name or self._ctx is None:
            super().connect()
            return
        http.client.HTTPConnection.connect(self)
        self.sock = self._ctx.wrap_socket(self.sock, server_hostname=self._server_name)


def _ssl_context(config: ExtenderConfig) -> ssl.SSLContext:
    """TLS as kube-scheduler's transport builds it: HTTPS without any CA trusts the server blindly."""
    tls = config.tls or TLSConfig()
    ctx = ssl.create_default_context(cafile=tls.ca_file or None, cadata=tls.ca_data or None)
    if tls.insecure or not (tls.ca_file or tls.ca_data):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if tls.cert_file or tls.cert_data:
        _load_client_cert(ctx, tls)
    return ctx


def _load_client_cert(ctx: ssl.SSLContext, tls: TLSConfig) -> None:
    if tls.cert_file:
        ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
        return
    # ssl only loads key pairs from files: write the inline PEM data to private temporary ones.
    paths = []
    try:
        for pem in (tls.cert_data, tls.key_data):
            fd, path = tempfile.mkstemp(suffix=".pem")
            with os.fdopen(fd, "w") as f:
                f.write(pem)
            paths.append(path)
        ctx.load_cert_chain(paths[0], paths[1] if tls.key_data else None)
    finally:
        for path in paths:
            os.unlink(path)
