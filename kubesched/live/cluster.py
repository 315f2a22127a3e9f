"""The cluster protocol over a real API server: what ``kubesched run`` schedules.

Reads for scheduling come from informers (:meth:`KubeCluster.watch` starts one per kind and replays what
exists as ADDED events before any change, as a shared informer's handlers see it); ``list`` and ``get``
are live requests for the few callers that need the server's present state (leader election, tests).
Writes are the ones kube-scheduler makes: ``POST pods/{name}/binding``, strategic-merge patches of pod
status (PodScheduled=False, nominatedNodeName, DisruptionTarget; tried again on a server error, as
kube-scheduler's PatchPodStatus), deletes with a UID precondition, and events through the asynchronous
recorder.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from types import EllipsisType
from typing import Any

from kubesched.api.timestamps import format_time
from kubesched.cluster.kinds import kind_info
from kubesched.cluster.protocol import ApiError, NotFound, WatchEvent
from kubesched.live.connection import RestClient, StreamResponse
from kubesched.live.events import EventRecorder
from kubesched.live.informers import Delta, Gone, Informer
from kubesched.live.paths import collection_path, object_path
from kubesched.live.retry import is_retriable, on_error

log = logging.getLogger(__name__)

STRATEGIC_MERGE = "application/strategic-merge-patch+json"
LIST_PAGE = 500


class _KindListWatch:
    """List and watch of one kind across namespaces, for an informer."""

    def __init__(self, rest: RestClient, kind: str) -> None:
        self.rest = rest
        self.kind = kind
        self.info = kind_info(kind)

    def list(self, resource_version: str) -> tuple[list[dict[str, Any]], str]:
        return list_all(self.rest, self.kind, resource_version=resource_version)

    def watch(self, resource_version: str, timeout_seconds: int) -> StreamResponse:
        params = {
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": timeout_seconds,
        }
        try:
            return self.rest.stream(collection_path(self.kind), params, read_timeout=timeout_seconds + 30)
        except ApiError as err:
            if err.code == 410:
                raise Gone(err.message) from err
            raise


def list_all(
    rest: RestClient, kind: str, namespace: str | None = None, *, resource_version: str = ""
) -> tuple[list[dict[str, Any]], str]:
    """Every object of ``kind`` (paged), each with its kind and apiVersion set, and the list's resourceVersion.

    ``resource_version`` "" reads the latest state; "0" accepts the API server's watch cache."""
    info = kind_info(kind)
    items: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        params = {
            "limit": LIST_PAGE,
            "continue": token,
            "resourceVersion": (resource_version or None) if token is None else None,
        }
        page = rest.request("GET", collection_path(kind, namespace), params=params)
        api_version = page.get("apiVersion") or info.preferred_api_version
        for item in page.get("items") or []:
            item["kind"] = kind
            item["apiVersion"] = api_version
            items.append(item)
        meta = page.get("metadata") or {}
        token = meta.get("continue")
        if not token:
            return items, str(meta.get("resourceVersion") or "")


class InformerWatch:
    """The running informers of one ``watch`` call: ``has_synced`` for readiness, ``stop`` at exit."""

    #: The present state arrives as ADDED events first (Scheduler.start need not list).
    replays_existing = True

    def __init__(self, informers: dict[str, Informer]) -> None:
        self.informers = informers

    def has_synced(self) -> bool:
        return all(inf.has_synced() for inf in self.informers.values())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return all(inf.wait_for_sync(timeout) for inf in self.informers.values())

    def cut_watches(self) -> None:
        for inf in self.informers.values():
            inf.cut_watch()

    def stop(self) -> None:
        for inf in self.informers.values():
            inf._stop.set()
            inf.cut_watch()
        for inf in self.informers.values():
            inf.stop()


class KubeCluster:
    """See the module docstring. ``delete_grace_period`` None uses each object's own grace period."""

    in_process = False

    def __init__(
        self, rest: RestClient, *, recorder: EventRecorder | None = None, delete_grace_period: int | None = None
    ) -> None:
        self.rest = rest
        self.recorder = recorder
        self.delete_grace_period = delete_grace_period
        self.stores: dict[str, Any] = {}
        # One handler call at a time, whichever kind's informer delivers it (the scheduler's handlers
        # share the pod map and the queue).
        self._dispatch = threading.Lock()

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.stop()

    # -- reads ----------------------------------------------------------------------------------------
    def list(self, kind: str, namespace: str | None = None) -> tuple[builtins.list[dict[str, Any]], str]:
        return list_all(self.rest, kind, namespace)

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        obj: dict[str, Any] = self.rest.request("GET", object_path(kind, namespace, name))
        return obj

    # -- writes ---------------------------------------------------------------------------------------
    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        kind = obj.get("kind", "")
        ns = (obj.get("metadata") or {}).get("namespace")
        path = collection_path(
            kind, ns or ("default" if kind_info(kind).namespaced else None), api_version=obj.get("apiVersion")
        )
        created: dict[str, Any] = self.rest.request("POST", path, obj)
        return created

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        kind, meta = obj.get("kind", ""), obj.get("metadata") or {}
        path = object_path(kind, meta.get("namespace"), meta["name"], api_version=obj.get("apiVersion"))
        updated: dict[str, Any] = self.rest.request("PUT", path, obj)
        return updated

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        kind, meta = obj.get("kind", ""), obj.get("metadata") or {}
        path = object_path(kind, meta.get("namespace"), meta["name"], "status", api_version=obj.get("apiVersion"))
        updated: dict[str, Any] = self.rest.request("PUT", path, obj)
        return updated

    def delete(self, kind: str, namespace: str | None, name: str, *, uid: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if uid:
            body["preconditions"] = {"uid": uid}
        if self.delete_grace_period is not None:
            body["gracePeriodSeconds"] = self.delete_grace_period
        last: dict[str, Any] = self.rest.request("DELETE", object_path(kind, namespace, name), body)
        return last

    def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        meta: dict[str, Any] = {"name": name, "namespace": namespace}
        if uid:
            meta["uid"] = uid
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        self.rest.request("POST", object_path("Pod", namespace, name, "binding"), binding)

    def patch_pod_status(
        self,
        namespace: str,
        name: str,
        *,
        conditions: builtins.list[dict[str, Any]] | None = None,
        nominated_node_name: str | EllipsisType | None = ...,
        reply: bool = True,
    ) -> dict[str, Any]:
        """A strategic-merge patch of status: conditions merge by type, as podutil.UpdatePodCondition
        leaves them (lastTransitionTime moves only when the status does). The answer comes back whatever
        ``reply`` says (it is read from the response anyway)."""
        status: dict[str, Any] = {}
        if conditions:
            current = self._known_conditions(namespace, name)
            now = format_time(datetime.now(UTC))
            patched = []
            for cond in conditions:
                cond = dict(cond)
                old = current.get(cond.get("type"))
                if old is not None and old.get("status") == cond.get("status"):
                    cond.setdefault("lastTransitionTime", old.get("lastTransitionTime"))
                else:
                    cond.setdefault("lastTransitionTime", now)
                cond.setdefault("lastProbeTime", None)
                patched.append(cond)
            status["conditions"] = patched
        if nominated_node_name is not ...:
            status["nominatedNodeName"] = nominated_node_name or None
        path = object_path("Pod", namespace, name, "status")

        def patch() -> dict[str, Any]:
            result: dict[str, Any] = self.rest.request("PATCH", path, {"status": status}, content_type=STRATEGIC_MERGE)
            return result

        # As kube-scheduler's util.PatchPodStatus: a server error or a refused connection is tried again
        # a few times at once; a conflict or anything else is the caller's (the next attempt writes again).
        return on_error(patch, is_retriable)

    def _known_conditions(self, namespace: str, name: str) -> dict[Any, dict[str, Any]]:
        store = self.stores.get("Pod")
        pod = store.get(namespace, name) if store is not None else None
        if pod is None:
            try:
                pod = self.get("Pod", namespace, name)
            except NotFound:
                pod = {}
        return {c.get("type"): c for c in (pod.get("status") or {}).get("conditions") or []}

    def record_event(self, event: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.record(event)

    # -- watch ----------------------------------------------------------------------------------------
    def watch(self, kinds: Collection[str], handler: Callable[[WatchEvent], None]) -> InformerWatch:
        """One informer per kind; each replays what exists, then every change, to ``handler``."""

        def deliver(kind: str, delta: Delta) -> None:
            with self._dispatch:
                handler(WatchEvent(delta.type, kind, delta.obj, delta.old))  # type: ignore[arg-type]

        informers = {kind: Informer(kind, _KindListWatch(self.rest, kind), deliver) for kind in kinds}
        for kind, informer in informers.items():
            self.stores[kind] = informer.store
        for informer in informers.values():
            informer.start()
        return InformerWatch(informers)
