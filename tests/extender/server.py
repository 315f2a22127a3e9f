"""A test extender: an HTTP server on 127.0.0.1 (free port) whose verbs the tests script."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[Any], Any]


class ExtenderServer:
    """``handlers[verb] = fn(args) -> answer`` (a JSON document); ``status[verb]`` forces an HTTP
    code; ``delay[verb]`` sleeps before answering. Every request is kept in ``calls``."""

    def __init__(self, *, tls: tuple[str, str] | None = None) -> None:
        """``tls``: (certificate file, key file) to serve HTTPS."""
        self.handlers: dict[str, Answer] = {}
        self.status: dict[str, int] = {}
        self.delay: dict[str, float] = {}
        self.calls: list[tuple[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once: no delayed-ACK stall

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                args = json.loads(self.rfile.read(length) or b"null")
                verb = self.path.rsplit("/", 1)[-1]
                server.calls.append((verb, args))
                time.sleep(server.delay.get(verb, 0.0))
                code = server.status.get(verb, 200)
                handler = server.handlers.get(verb)
                body = json.dumps(handler(args) if handler is not None and code == 200 else {}).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        scheme = "http"
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*tls)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}/scheduler"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.calls]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def self_signed(directory: str, name: str) -> tuple[str, str]:
    """A self-signed certificate for ``name`` (and 127.0.0.1) made with openssl: (cert file, key file)."""
    import subprocess

    cert, key = f"{directory}/{name}.crt", f"{directory}/{name}.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            f"/CN={name}",
            "-addext",
            f"subjectAltName=DNS:{name},IP:127.0.0.1",
            "-keyout",
            key,
            "-out",
            cert,
        ],
        check=True,
        capture_output=True,
    )
    return cert, key
