"""The cluster protocol's contract, checked against the embedded cluster and a real kube-apiserver alike.

The simulator and ``kubesched run`` share every line of scheduler code; only the Cluster differs. These
tests pin what the scheduler relies on, so the two implementations cannot drift apart.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubesched.cluster.protocol import AlreadyExists, Conflict, NotFound, WatchEvent
from kubesched.embedded.apiserver import EmbeddedCluster

_names = itertools.count()


def _unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns() % 10**8:x}-{next(_names)}"


class Harness:
    """A cluster under test plus a namespace of its own and a way to wait for watch events."""

    def __init__(self, cluster: Any, namespace: str) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.events: list[WatchEvent] = []
        self._cond = threading.Condition()
        self._watches: list[Any] = []

    def pod(self, name: str, **spec: Any) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
        }

    def watch(self, *kinds: str) -> None:
        def handler(event: WatchEvent) -> None:
            with self._cond:
                self.events.append(event)
                self._cond.notify_all()

        w = self.cluster.watch(kinds, handler)
        self._watches.append(w)
        wait = getattr(w, "wait_for_sync", None)
        if wait is not None:
            assert wait(30), "informers did not sync"

    def wait_for(self, pred: Callable[[WatchEvent], bool], timeout: float = 15.0) -> WatchEvent:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self.events:
                    if pred(event):
                        return event
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no matching watch event among {[(e.type, e.kind) for e in self.events]}")
                self._cond.wait(left)

    def close(self) -> None:
        for w in self._watches:
            w.stop()


@pytest.fixture(params=["embedded", pytest.param("kube", marks=pytest.mark.controlplane)])
def harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    namespace = _unique("contract")
    if request.param == "embedded":
        h = Harness(EmbeddedCluster(synchronous=True), namespace)
    else:
        from kubesched.live.cluster import KubeCluster
        from kubesched.live.connection import ConnectionOptions, RestClient

        plane = request.getfixturevalue("control_plane")
        cluster = KubeCluster(RestClient(ConnectionOptions(kubeconfig=str(plane.admin_kubeconfig), qps=-1)))
        cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        h = Harness(cluster, namespace)
    yield h
    h.close()


def _name(obj: dict) -> str:
    return str(obj["metadata"]["name"])


def test_create_get_list_round_trip(harness: Harness) -> None:
    c = harness.cluster
    created = c.create(harness.pod("a"))
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    got = c.get("Pod", harness.namespace, "a")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    items, rv = c.list("Pod", harness.namespace)
    assert [(_name(i), i["kind"], i["apiVersion"]) for i in items] == [("a", "Pod", "v1")]
    assert rv
    with pytest.raises(AlreadyExists):
        c.create(harness.pod("a"))
    with pytest.raises(NotFound):
        c.get("Pod", harness.namespace, "missing")


def test_update_with_stale_resource_version_conflicts(harness: Harness) -> None:
    c = harness.cluster
    created = c.create(harness.pod("a"))
    fresh = dict(created, metadata={**created["metadata"], "labels": {"v": "1"}})
    updated = c.update(fresh)
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    stale = dict(created, metadata={**created["metadata"], "labels": {"v": "2"}})
    with pytest.raises(Conflict):
        c.update(stale)


def test_delete_checks_the_uid_precondition(harness: Harness) -> None:
    c = harness.cluster
    c.create(harness.pod("a"))
    with pytest.raises(Conflict):
        c.delete("Pod", harness.namespace, "a", uid="not-the-uid")
    uid = c.get("Pod", harness.namespace, "a")["metadata"]["uid"]
    c.delete("Pod", harness.namespace, "a", uid=uid)
    with pytest.raises(NotFound):
        c.get("Pod", harness.namespace, "a")


def test_bind_sets_node_name_once(harness: Harness) -> None:
    c = harness.cluster
    uid = c.create(harness.pod("a"))["metadata"]["uid"]
    c.bind(harness.namespace, "a", "node-1", uid=uid)
    pod = c.get("Pod", harness.namespace, "a")
    assert pod["spec"]["nodeName"] == "node-1"
    scheduled = [x for x in pod["status"]["conditions"] if x["type"] == "PodScheduled"]
    assert [x["status"] for x in scheduled] == ["True"]
    with pytest.raises(Conflict):
        c.bind(harness.namespace, "a", "node-2", uid=uid)


def test_patch_pod_status_merges_conditions_and_nomination(harness: Harness) -> None:
    c = harness.cluster
    c.create(harness.pod("a"))
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/0 nodes"}
    first = c.patch_pod_status(harness.namespace, "a", conditions=[cond], nominated_node_name="n1")
    assert first["status"]["nominatedNodeName"] == "n1"
    [scheduled] = [x for x in first["status"]["conditions"] if x["type"] == "PodScheduled"]
    assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
    again = c.patch_pod_status(harness.namespace, "a", conditions=[{**cond, "message": "1/1 nodes"}])
    [same] = [x for x in again["status"]["conditions"] if x["type"] == "PodScheduled"]
    assert same["message"] == "1/1 nodes"
    assert same["lastTransitionTime"] == scheduled["lastTransitionTime"]
    assert again["status"]["nominatedNodeName"] == "n1"  # ``...`` keeps it
    cleared = c.patch_pod_status(harness.namespace, "a", nominated_node_name=None)
    assert not cleared["status"].get("nominatedNodeName")


def test_watch_delivers_later_changes_with_the_old_object(harness: Harness) -> None:
    c = harness.cluster
    harness.watch("Pod")
    created = c.create(harness.pod("w"))
    is_w = lambda e: e.kind == "Pod" and _name(e.obj) == "w"  # noqa: E731
    harness.wait_for(lambda e: is_w(e) and e.type == "ADDED")
    c.patch_pod_status(harness.namespace, "w", nominated_node_name="n1")
    modified = harness.wait_for(lambda e: is_w(e) and e.type == "MODIFIED")
    assert modified.old is not None
    assert modified.old["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert modified.obj["status"]["nominatedNodeName"] == "n1"
    c.delete("Pod", harness.namespace, "w")
    deleted = harness.wait_for(lambda e: is_w(e) and e.type == "DELETED")
    assert deleted.obj["metadata"]["uid"] == created["metadata"]["uid"]
    # Nothing doubled: one ADDED, one DELETED, and every event a distinct state (a real API server may
    # also report the deletion's own update of metadata before the DELETED).
    mine = [e for e in harness.events if is_w(e)]
    assert [e.type for e in mine].count("ADDED") == 1
    assert [e.type for e in mine].count("DELETED") == 1
    versions = [e.obj["metadata"]["resourceVersion"] for e in mine]
    assert len(versions) == len(set(versions))
