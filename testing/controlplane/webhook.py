"""A validating admission webhook that holds API requests until the test lets them through.

kube-apiserver calls a webhook in the middle of the request it reviews, so a webhook that does not answer
keeps the client's request waiting: a DELETE the test wants slow stays in flight for as long as the test
says, whoever sent it, over TLS the test never sees. Every review is allowed in the end; while
:meth:`HoldingWebhook.hold` is in force each one is answered only at :meth:`release` (or after
``HOLD_LIMIT``, under kube-apiserver's 30-second ceiling for a webhook call).

The webhook serves HTTPS on loopback with a certificate of its own CA; :meth:`configuration` is the
ValidatingWebhookConfiguration that points kube-apiserver at it.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from testing.controlplane.fixture import _write_serving_certificate

#: How long a held review waits for release before it is allowed anyway (seconds).
HOLD_LIMIT = 25.0
#: kube-apiserver's longest wait for a webhook (``timeoutSeconds`` may not exceed it).
TIMEOUT_SECONDS = 30


class HoldingWebhook:
    """The webhook server; ``reviewed`` lists ``(operation, namespace/name)`` of every review received."""

    def __init__(self, work_dir: Path) -> None:
        work_dir.mkdir(parents=True, exist_ok=True)
        self.ca_file = work_dir / "webhook-ca.crt"
        cert, key = work_dir / "webhook.crt", work_dir / "webhook.key"
        _write_serving_certificate(self.ca_file, cert, key)
        self.reviewed: list[tuple[str, str]] = []
        self.held: list[str] = []
        self._holding = False
        self._release = threading.Event()
        self._changed = threading.Condition()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, name="webhook", daemon=True).start()

    # -- what the test does ---------------------------------------------------------------------------
    def configuration(
        self, name: str, *, resource: str, operations: list[str], object_labels: Mapping[str, str]
    ) -> dict[str, Any]:
        """A ValidatingWebhookConfiguration sending these requests on core ``resource`` of objects with
        ``object_labels`` here; kube-apiserver lets them through if the webhook cannot be reached."""
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [
                {
                    "name": f"{name}.kubesched.test",
                    "clientConfig": {
                        "url": f"https://127.0.0.1:{self.port}/review",
                        "caBundle": base64.b64encode(self.ca_file.read_bytes()).decode(),
                    },
                    "rules": [
                        {
                            "operations": operations,
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "resources": [resource],
                            "scope": "Namespaced",
                        }
                    ],
                    "objectSelector": {"matchLabels": dict(object_labels)},
                    "failurePolicy": "Ignore",
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "timeoutSeconds": TIMEOUT_SECONDS,
                }
            ],
        }

    def hold(self) -> None:
        """From now on each review waits for :meth:`release`."""
        self._release.clear()
        self._holding = True

    def release(self) -> None:
        """Answer every held review and stop holding."""
        self._holding = False
        self._release.set()

    def wait_reviewed(self, operation: str, key: str, timeout: float = 60.0) -> bool:
        """Whether a review of ``operation`` on ``key`` (``namespace/name``) arrived within ``timeout``."""
        with self._changed:
            return self._changed.wait_for(lambda: (operation, key) in self.reviewed, timeout)

    def still_held(self, key: str) -> bool:
        """Whether a review of ``key`` is waiting for release now."""
        with self._changed:
            return key in self.held

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    # -- what kube-apiserver asks ---------------------------------------------------------------------
    def _review(self, review: Mapping[str, Any]) -> dict[str, Any]:
        request = review.get("request") or {}
        key = f"{request.get('namespace', '')}/{request.get('name', '')}"
        with self._changed:
            self.reviewed.append((str(request.get("operation")), key))
            holding = self._holding
            if holding:
                self.held.append(key)
            self._changed.notify_all()
        if holding:
            self._release.wait(HOLD_LIMIT)
            with self._changed:
                self.held.remove(key)
                self._changed.notify_all()
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": request.get("uid", ""), "allowed": True},
        }


def _handler(webhook: HoldingWebhook) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            answer = json.dumps(webhook._review(json.loads(self.rfile.read(length) or b"{}"))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
