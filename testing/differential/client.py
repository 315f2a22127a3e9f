"""A minimal Kubernetes REST client for the oracle: JSON over one kept-alive HTTPS connection.

Deliberately independent of kubesched's own client (kubesched.live), so that the oracle's view of the
cluster cannot share a defect with the scheduler under test.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import queue
import socket
import ssl
import threading
from typing import Any
from urllib.parse import urlencode, urlsplit

#: kind -> (API prefix, plural, namespaced)
RESOURCES: dict[str, tuple[str, str, bool]] = {
    "Namespace": ("/api/v1", "namespaces", False),
    "Node": ("/api/v1", "nodes", False),
    "Pod": ("/api/v1", "pods", True),
    "PersistentVolume": ("/api/v1", "persistentvolumes", False),
    "PersistentVolumeClaim": ("/api/v1", "persistentvolumeclaims", True),
    "PodDisruptionBudget": ("/apis/policy/v1", "poddisruptionbudgets", True),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1", "priorityclasses", False),
    "StorageClass": ("/apis/storage.k8s.io/v1", "storageclasses", False),
    "RuntimeClass": ("/apis/node.k8s.io/v1", "runtimeclasses", False),
    "Event": ("/api/v1", "events", True),
    "Deployment": ("/apis/apps/v1", "deployments", True),
    "ReplicaSet": ("/apis/apps/v1", "replicasets", True),
    "Job": ("/apis/batch/v1", "jobs", True),
    "DeviceClass": ("/apis/resource.k8s.io/v1", "deviceclasses", False),
    "ResourceSlice": ("/apis/resource.k8s.io/v1", "resourceslices", False),
    "ResourceClaim": ("/apis/resource.k8s.io/v1", "resourceclaims", True),
    "ResourceClaimTemplate": ("/apis/resource.k8s.io/v1", "resourceclaimtemplates", True),
}
API_VERSIONS = {
    kind: "v1" if prefix == "/api/v1" else prefix.removeprefix("/apis/") for kind, (prefix, _, _) in RESOURCES.items()
}


class ApiError(RuntimeError):
    def __init__(self, status: int, method: str, path: str, body: str) -> None:
        super().__init__(f"{method} {path}: HTTP {status}: {body[:500]}")
        self.status = status


def path_of(kind: str, namespace: str | None = None, name: str | None = None, subresource: str = "") -> str:
    prefix, plural, namespaced = RESOURCES[kind]
    path = f"{prefix}/namespaces/{namespace}/{plural}" if namespaced and namespace else f"{prefix}/{plural}"
    if name:
        path += f"/{name}"
    if subresource:
        path += f"/{subresource}"
    return path


class Client:
    """Bearer-token client for one API server; thread-safe by holding one connection per thread."""

    def __init__(self, url: str, token: str, ca_file: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 443
        self.token = token
        self.context = ssl.create_default_context(cafile=ca_file)
        self._local = threading.local()

    def _connection(self, timeout: float = 30.0) -> http.client.HTTPSConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=timeout)
            self._local.conn = conn
        return conn

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        target = path + ("?" + urlencode(params) if params else "")
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, target, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (TimeoutError, http.client.HTTPException, ConnectionError):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
        if resp.status >= 300:
            raise ApiError(resp.status, method, target, raw.decode(errors="replace"))
        return json.loads(raw) if raw else None

    # -- verbs ----------------------------------------------------------------------------------------
    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        result: dict[str, Any] = self.request("POST", path_of(obj["kind"], meta.get("namespace")), obj)
        return result

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self.request("GET", path_of(kind, namespace, name))
        return result

    def list(self, kind: str, namespace: str | None = None, **params: Any) -> tuple[list[dict[str, Any]], str]:
        """Items (with apiVersion and kind filled in, as a list leaves them out) and the list's resourceVersion."""
        result = self.request("GET", path_of(kind, namespace), params=params or None)
        items = result.get("items") or []
        for item in items:
            item.setdefault("apiVersion", API_VERSIONS[kind])
            item.setdefault("kind", kind)
        return items, str(result["metadata"].get("resourceVersion", ""))

    def patch(
        self, kind: str, name: str, patch: dict[str, Any], namespace: str | None = None, *, subresource: str = ""
    ) -> dict[str, Any]:
        result: dict[str, Any] = self.request(
            "PATCH", path_of(kind, namespace, name, subresource), patch, content_type="application/merge-patch+json"
        )
        return result

    def delete(self, kind: str, name: str, namespace: str | None = None, *, missing_ok: bool = True) -> None:
        try:
            self.request("DELETE", path_of(kind, namespace, name), {"gracePeriodSeconds": 0})
        except ApiError as err:
            if not (missing_ok and err.status == 404):
                raise

    def watch(self, kind: str, namespace: str | None, resource_version: str) -> Watch:
        """Watch events after ``resource_version``; see :class:`Watch`."""
        params = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "false"}
        target = path_of(kind, namespace) + "?" + urlencode(params)
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=30)
        conn.request("GET", target, headers={"Authorization": f"Bearer {self.token}"})
        resp = conn.getresponse()
        if resp.status >= 300:
            body = resp.read().decode(errors="replace")
            conn.close()
            raise ApiError(resp.status, "WATCH", target, body)
        if conn.sock is not None:
            conn.sock.settimeout(None)  # the reader thread blocks until an event or stop()
        return Watch(conn, resp)


class Watch:
    """A watch stream read by a thread of its own into a queue, so the reader can wait with a timeout
    without ever cutting a line in half. ``next(timeout)`` is ``(type, object)`` or None."""

    def __init__(self, conn: http.client.HTTPSConnection, resp: http.client.HTTPResponse) -> None:
        self._conn, self._resp = conn, resp
        self._events: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, name="differential-watch", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while line := self._resp.readline():
                event = json.loads(line)
                self._events.put((event["type"], event["object"]))
        except Exception:  # a stopped or broken stream ends the watch, whatever the error
            pass
        self._events.put(None)

    def next(self, timeout: float) -> tuple[str, dict[str, Any]] | None:
        try:
            return self._events.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None

    def stop(self) -> None:
        sock = self._conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._conn.close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
