"""EmbeddedCluster behaves like the API server: versions, conflicts, binding, watches, copies."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest

from kubesched.cluster.protocol import (
    AlreadyExists,
    ApiError,
    Cluster,
    Conflict,
    Invalid,
    NotFound,
    WatchEvent,
)
from kubesched.embedded.apiserver import EmbeddedCluster
from tests.embedded.conftest import START, FakeClock, node, pod


def test_resource_version_is_global_and_bumped_per_write(cluster: EmbeddedCluster) -> None:
    _, rv0 = cluster.list("Pod")
    a = cluster.create(node("n1"))
    b = cluster.create(pod("p1"))  # also creates namespace "default"
    assert int(a["metadata"]["resourceVersion"]) == int(rv0) + 1
    assert int(b["metadata"]["resourceVersion"]) == int(rv0) + 3
    updated = cluster.update({**a, "metadata": {**a["metadata"], "labels": {"x": "y"}}})
    assert int(updated["metadata"]["resourceVersion"]) == int(rv0) + 4
    _, rv = cluster.list("Node")
    assert rv == updated["metadata"]["resourceVersion"]


def test_noop_update_is_not_a_write(cluster: EmbeddedCluster) -> None:
    created = cluster.create(node("n1"))
    again = cluster.update(created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_create_sets_metadata(cluster: EmbeddedCluster, clock: FakeClock) -> None:
    created = cluster.create(pod("p1"))
    meta = created["metadata"]
    assert meta["uid"].startswith("uid-")
    assert meta["creationTimestamp"] == "2024-01-01T00:00:00Z"
    assert meta["generation"] == 1
    clock.advance(5)
    given = pod("p2")
    given["metadata"]["creationTimestamp"] = "2023-05-05T00:00:00Z"
    assert cluster.create(given)["metadata"]["creationTimestamp"] == "2023-05-05T00:00:00Z"
    assert cluster.create(pod("p3"))["metadata"]["creationTimestamp"] == "2024-01-01T00:00:05Z"


def test_uids_are_unique(cluster: EmbeddedCluster) -> None:
    uids = {cluster.create(pod(f"p{i}"))["metadata"]["uid"] for i in range(5)}
    assert len(uids) == 5


def test_create_existing_is_already_exists(cluster: EmbeddedCluster) -> None:
    cluster.create(pod("web-1"))
    with pytest.raises(AlreadyExists) as info:
        cluster.create(pod("web-1"))
    assert info.value.code == 409
    assert info.value.message == 'pods "web-1" already exists'


def test_stale_update_is_conflict(cluster: EmbeddedCluster) -> None:
    first = cluster.create(pod("web-1"))
    cluster.update({**first, "metadata": {**first["metadata"], "labels": {"a": "1"}}})
    with pytest.raises(Conflict) as info:
        cluster.update({**first, "metadata": {**first["metadata"], "labels": {"a": "2"}}})
    assert info.value.code == 409
    assert info.value.reason == "Conflict"
    assert info.value.message == (
        'Operation cannot be fulfilled on pods "web-1": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_update_without_resource_version_is_unconditional(cluster: EmbeddedCluster) -> None:
    first = cluster.create(node("n1"))
    meta = {k: v for k, v in first["metadata"].items() if k != "resourceVersion"}
    cluster.update({**first, "metadata": {**meta, "labels": {"a": "1"}}})
    out = cluster.update({**first, "metadata": {**meta, "labels": {"a": "2"}}})
    assert out["metadata"]["labels"] == {"a": "2"}
    assert out["metadata"]["uid"] == first["metadata"]["uid"]


def test_update_missing_is_not_found(cluster: EmbeddedCluster) -> None:
    with pytest.raises(NotFound) as info:
        cluster.update(node("ghost"))
    assert info.value.code == 404
    assert info.value.message == 'nodes "ghost" not found'


def test_generation_moves_with_spec_only(cluster: EmbeddedCluster) -> None:
    svc = cluster.create(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {"a": "b"}}}
    )
    relabelled = cluster.update({**svc, "metadata": {**svc["metadata"], "labels": {"x": "y"}}})
    assert relabelled["metadata"]["generation"] == 1
    respec = cluster.update({**relabelled, "spec": {"selector": {"a": "c"}}})
    assert respec["metadata"]["generation"] == 2


def test_bind_once_then_conflict(cluster: EmbeddedCluster, clock: FakeClock) -> None:
    created = cluster.create(pod("web-1"))
    clock.advance(3)
    cluster.bind("default", "web-1", "n1", uid=created["metadata"]["uid"])
    bound = cluster.get("Pod", "default", "web-1")
    assert bound["spec"]["nodeName"] == "n1"
    assert bound["status"]["conditions"] == [
        {
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": "2024-01-01T00:00:03Z",
        }
    ]
    with pytest.raises(Conflict) as info:
        cluster.bind("default", "web-1", "n2")
    assert info.value.code == 409
    assert 'pod web-1 is already assigned to node "n1"' in info.value.message
    assert cluster.get("Pod", "default", "web-1")["spec"]["nodeName"] == "n1"


def test_a_bind_that_changes_nothing_is_no_write(cluster: EmbeddedCluster) -> None:
    obj = pod("p")
    obj["spec"]["nodeName"] = ""
    obj["status"] = {"startTime": "2024-01-01T00:00:00Z"}
    cluster.create(obj)
    cluster.bind("default", "p", "")
    version = cluster.resource_version()
    cluster.bind("default", "p", "")  # spec, start and condition are what this bind would store
    assert cluster.resource_version() == version
    cluster.bind("default", "p", "n1")
    assert cluster.resource_version() == str(int(version) + 1)


def test_a_bound_pod_starts_when_its_kubelet_admits_it(cluster: EmbeddedCluster, clock: FakeClock) -> None:
    cluster.create(pod("web-1"))
    clock.advance(7)
    cluster.bind("default", "web-1", "n1")
    status = cluster.get("Pod", "default", "web-1")["status"]
    assert (status["startTime"], status["phase"]) == ("2024-01-01T00:00:07Z", "Pending")


def test_a_pod_bound_in_a_run_starts_after_the_pods_running_before(cluster: EmbeddedCluster, clock: FakeClock) -> None:
    """Objects may be stamped ahead of the clock (a scenario's document order): a pod bound now
    started after every pod that was running before it."""
    running = pod("running", nodeName="n1")
    running["metadata"]["creationTimestamp"] = "2024-01-01T00:00:43Z"
    earlier = pod("earlier", nodeName="n1")
    earlier["status"] = {"startTime": "2023-06-01T00:00:00Z"}
    cluster.create(running)
    cluster.create(earlier)
    assert cluster.get("Pod", "default", "running")["status"]["startTime"] == "2024-01-01T00:00:43Z"
    assert cluster.get("Pod", "default", "earlier")["status"]["startTime"] == "2023-06-01T00:00:00Z"
    for name in ("fresh", "fresher"):
        cluster.create(pod(name))
        cluster.bind("default", name, "n1")
    assert cluster.get("Pod", "default", "fresh")["status"]["startTime"] == "2024-01-01T00:00:44Z"
    assert cluster.get("Pod", "default", "fresher")["status"]["startTime"] == "2024-01-01T00:00:44Z"
    clock.advance(60)
    cluster.create(pod("later"))
    cluster.bind("default", "later", "n1")
    assert cluster.get("Pod", "default", "later")["status"]["startTime"] == "2024-01-01T00:01:00Z"


def test_a_bound_pod_keeps_the_start_time_it_has(cluster: EmbeddedCluster) -> None:
    created = pod("p")
    created["status"] = {"startTime": "2023-01-01T00:00:00Z", "phase": "Pending"}
    cluster.create(created)
    cluster.bind("default", "p", "n1")
    status = cluster.get("Pod", "default", "p")["status"]
    assert (status["startTime"], status["phase"]) == ("2023-01-01T00:00:00Z", "Pending")


@pytest.mark.parametrize(("version", "created", "after_spec_change"), [("1.34", 1, 2), ("1.30", None, None)])
def test_pod_generation_from_v1_34(
    make_cluster: Callable[..., EmbeddedCluster], version: str, created: int | None, after_spec_change: int | None
) -> None:
    from kubesched.config.features import feature_gates

    cluster = make_cluster(features=feature_gates(version))
    first = cluster.create(pod("p"))
    assert first["metadata"].get("generation") == created
    relabelled = cluster.update({**first, "metadata": {**first["metadata"], "labels": {"a": "1"}}})
    assert relabelled["metadata"].get("generation") == created
    cluster.bind("default", "p", "n1")  # the binding subresource changes no generation
    bound = cluster.get("Pod", "default", "p")
    assert bound["metadata"].get("generation") == created
    respec = cluster.update({**bound, "spec": {**bound["spec"], "activeDeadlineSeconds": 30}})
    assert respec["metadata"].get("generation") == after_spec_change


@pytest.mark.parametrize(
    ("name", "uid", "error"),
    [("missing", None, NotFound), ("web-1", "other-uid", Conflict)],
)
def test_bind_errors(cluster: EmbeddedCluster, name: str, uid: str | None, error: type[Exception]) -> None:
    cluster.create(pod("web-1"))
    with pytest.raises(error):
        cluster.bind("default", name, "n1", uid=uid)


def test_bind_replaces_unschedulable_condition(cluster: EmbeddedCluster, clock: FakeClock) -> None:
    cluster.create(pod("p"))
    cluster.patch_pod_status(
        "default",
        "p",
        conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "no"}],
    )
    clock.advance(1)
    cluster.bind("default", "p", "n1")
    (cond,) = cluster.get("Pod", "default", "p")["status"]["conditions"]
    assert cond == {
        "type": "PodScheduled",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": "2024-01-01T00:00:01Z",
    }


def test_delete_with_uid_precondition(cluster: EmbeddedCluster) -> None:
    created = cluster.create(pod("web-1"))
    with pytest.raises(Conflict) as info:
        cluster.delete("Pod", "default", "web-1", uid="wrong")
    assert "Precondition failed: UID in precondition: wrong" in info.value.message
    assert info.value.message.startswith('Operation cannot be fulfilled on pods "web-1": ')
    cluster.get("Pod", "default", "web-1")
    last = cluster.delete("Pod", "default", "web-1", uid=created["metadata"]["uid"])
    assert last["metadata"]["name"] == "web-1"
    assert int(last["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    with pytest.raises(NotFound):
        cluster.get("Pod", "default", "web-1")
    with pytest.raises(NotFound):
        cluster.delete("Pod", "default", "web-1")


def test_delete_namespace_deletes_its_objects(cluster: EmbeddedCluster) -> None:
    cluster.create(pod("a", "team"))
    cluster.create(pod("b", "other"))
    cluster.delete("Namespace", None, "team")
    assert [p["metadata"]["name"] for p in cluster.list("Pod")[0]] == ["b"]


def test_patch_pod_status_merges_conditions_by_type(cluster: EmbeddedCluster, clock: FakeClock) -> None:
    cluster.create(pod("p"))
    cluster.patch_pod_status(
        "default", "p", conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    )
    clock.advance(10)
    out = cluster.patch_pod_status(
        "default",
        "p",
        conditions=[
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"},
            {"type": "Ready", "status": "False"},
        ],
    )
    scheduled, ready = out["status"]["conditions"]
    assert scheduled["message"] == "0/3 nodes"
    assert scheduled["lastTransitionTime"] == "2024-01-01T00:00:00Z"  # status unchanged: time kept
    assert ready["lastTransitionTime"] == "2024-01-01T00:00:10Z"
    clock.advance(10)
    out = cluster.patch_pod_status("default", "p", conditions=[{"type": "PodScheduled", "status": "True"}])
    assert out["status"]["conditions"][0]["lastTransitionTime"] == "2024-01-01T00:00:20Z"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("n1", "n1"), ("", None), (None, None), (..., "keep")],
)
def test_patch_pod_status_nominated_node(cluster: EmbeddedCluster, value: object, expected: str | None) -> None:
    cluster.create(pod("p"))
    cluster.patch_pod_status("default", "p", nominated_node_name="keep")
    out = cluster.patch_pod_status("default", "p", nominated_node_name=value)  # type: ignore[arg-type]
    assert out["status"].get("nominatedNodeName") == expected


def test_returned_objects_are_copies(cluster: EmbeddedCluster) -> None:
    given = pod("p")
    created = cluster.create(given)
    given["spec"]["nodeName"] = "x"
    created["metadata"]["labels"] = {"mutated": "yes"}
    cluster.get("Pod", "default", "p")["spec"]["schedulerName"] = "mutated"
    cluster.list("Pod")[0][0]["status"]["phase"] = "mutated"
    stored = cluster.get("Pod", "default", "p")
    assert "nodeName" not in stored["spec"]
    assert "labels" not in stored["metadata"]
    assert stored["spec"]["schedulerName"] == "default-scheduler"
    assert stored["status"]["phase"] == "Pending"


def test_watch_events_are_copies(make_cluster: Callable[..., EmbeddedCluster]) -> None:
    cluster = make_cluster(synchronous=True)
    cluster.watch(["Pod"], lambda e: e.obj["metadata"].__setitem__("name", "mutated"))
    cluster.create(pod("p"))
    assert cluster.get("Pod", "default", "p")["metadata"]["name"] == "p"


def test_watch_add_modify_delete_in_order(cluster: EmbeddedCluster) -> None:
    seen_a: list[WatchEvent] = []
    seen_b: list[WatchEvent] = []
    cluster.watch(["Pod"], seen_a.append)
    cluster.watch(["Pod", "Node"], seen_b.append)
    cluster.create(pod("p"))
    cluster.bind("default", "p", "n1")
    cluster.create(node("n1"))
    cluster.delete("Pod", "default", "p")
    assert seen_a == [] and cluster.pending_event_count() == 4
    assert cluster.deliver_pending() == 4
    assert cluster.pending_event_count() == 0
    assert [(e.type, e.kind) for e in seen_a] == [("ADDED", "Pod"), ("MODIFIED", "Pod"), ("DELETED", "Pod")]
    assert [(e.type, e.kind) for e in seen_b] == [
        ("ADDED", "Pod"),
        ("MODIFIED", "Pod"),
        ("ADDED", "Node"),
        ("DELETED", "Pod"),
    ]
    added, modified, deleted = seen_a
    assert added.old is None
    assert modified.old is not None and "nodeName" not in modified.old["spec"]
    assert modified.obj["spec"]["nodeName"] == "n1"
    assert deleted.old is None and deleted.obj["spec"]["nodeName"] == "n1"
    versions = [int(e.obj["metadata"]["resourceVersion"]) for e in seen_b]
    assert versions == sorted(versions)


def test_watch_handlers_writing_are_delivered_in_same_call(cluster: EmbeddedCluster) -> None:
    order: list[str] = []

    def on_pod(event: WatchEvent) -> None:
        order.append(f"pod {event.type}")
        if event.type == "ADDED":
            cluster.bind("default", event.obj["metadata"]["name"], "n1")

    cluster.watch(["Pod"], on_pod)
    cluster.create(pod("a"))
    cluster.create(pod("b"))
    assert cluster.deliver_pending() == 4
    assert order == ["pod ADDED", "pod ADDED", "pod MODIFIED", "pod MODIFIED"]


def test_later_watchers_do_not_get_old_events(cluster: EmbeddedCluster) -> None:
    early: list[WatchEvent] = []
    late: list[WatchEvent] = []
    cluster.watch(["Pod"], early.append)
    cluster.create(pod("a"))
    cluster.watch(["Pod"], late.append)
    cluster.create(pod("b"))
    cluster.deliver_pending()
    assert [e.obj["metadata"]["name"] for e in early] == ["a", "b"]
    assert [e.obj["metadata"]["name"] for e in late] == ["b"]


def test_stopped_watch_gets_nothing(cluster: EmbeddedCluster) -> None:
    seen: list[WatchEvent] = []
    watch = cluster.watch(["Pod"], seen.append)
    cluster.create(pod("a"))
    watch.stop()
    cluster.create(pod("b"))
    assert cluster.deliver_pending() == 0
    assert cluster.pending_event_count() == 0
    assert seen == []


def test_unwatched_kinds_are_not_queued(cluster: EmbeddedCluster) -> None:
    cluster.watch(["Node"], lambda e: None)
    cluster.create(pod("a"))
    assert cluster.pending_event_count() == 0


def test_synchronous_delivery(make_cluster: Callable[..., EmbeddedCluster]) -> None:
    cluster = make_cluster(synchronous=True)
    seen: list[str] = []
    cluster.watch(["Node"], lambda e: seen.append(e.type))
    cluster.create(node("n"))
    assert seen == ["ADDED"]
    assert cluster.pending_event_count() == 0


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda c: c.list("Gadget"), Invalid),
        (lambda c: c.get("Gadget", None, "x"), Invalid),
        (lambda c: c.create({"apiVersion": "v1", "kind": "Gadget", "metadata": {"name": "x"}}), Invalid),
        (lambda c: c.watch(["Gadget"], print), Invalid),
        (lambda c: c.create({"apiVersion": "apps/v1", "kind": "Pod", "metadata": {"name": "x"}}), Invalid),
        (lambda c: c.create({"apiVersion": "v1", "kind": "Pod", "metadata": {}}), Invalid),
        (lambda c: c.get("Node", "default", "x"), Invalid),
        (lambda c: c.get("Pod", None, "x"), Invalid),
    ],
)
def test_bad_requests(
    cluster: EmbeddedCluster, call: Callable[[EmbeddedCluster], object], error: type[ApiError]
) -> None:
    with pytest.raises(error) as info:
        call(cluster)
    assert info.value.code == 422


def test_unknown_kind_error_names_the_kind(cluster: EmbeddedCluster) -> None:
    with pytest.raises(Invalid, match="Gadget"):
        cluster.list("Gadget")


def test_scope(cluster: EmbeddedCluster) -> None:
    n = cluster.create({**node("n1"), "metadata": {"name": "n1", "namespace": "ignored"}})
    assert "namespace" not in n["metadata"]
    p = cluster.create(pod("p", namespace=None))
    assert p["metadata"]["namespace"] == "default"
    cluster.create(pod("q", "team"))
    assert [x["metadata"]["name"] for x in cluster.list("Pod", "team")[0]] == ["q"]
    assert [x["metadata"]["name"] for x in cluster.list("Pod")[0]] == ["p", "q"]


def test_generate_name(cluster: EmbeddedCluster) -> None:
    obj = pod("x")
    obj["metadata"] = {"generateName": "web-"}
    a = cluster.create(obj)
    b = cluster.create(obj)
    assert a["metadata"]["name"].startswith("web-") and len(a["metadata"]["name"]) == 9
    assert a["metadata"]["name"] != b["metadata"]["name"]


def test_record_event_is_listable(cluster: EmbeddedCluster) -> None:
    cluster.record_event(
        {
            "involvedObject": {"kind": "Pod", "namespace": "team", "name": "p", "uid": "u"},
            "reason": "FailedScheduling",
            "message": "0/1 nodes are available",
            "type": "Warning",
            "source": {"component": "default-scheduler"},
            "reportingController": "default-scheduler",
        }
    )
    cluster.record_event({"involvedObject": {"kind": "Pod", "namespace": "team", "name": "p"}, "reason": "x"})
    events, _ = cluster.list("Event", "team")
    assert len(events) == 2
    first = next(e for e in events if e["reason"] == "FailedScheduling")
    assert first["kind"] == "Event" and first["apiVersion"] == "v1"
    assert first["metadata"]["name"].startswith("p.")
    assert first["count"] == 1
    assert first["firstTimestamp"] == "2024-01-01T00:00:00Z"
    assert first["message"] == "0/1 nodes are available"


def _event(name: str, reason: str) -> dict:
    return {"involvedObject": {"kind": "Pod", "namespace": "team", "name": name}, "reason": reason}


def test_events_at_the_same_instant_get_the_next_free_name(cluster: EmbeddedCluster) -> None:
    for reason in ("a", "b", "c"):
        cluster.record_event(_event("p", reason))
    names = {e["reason"]: e["metadata"]["name"] for e in cluster.list("Event", "team")[0]}
    stamp = int(START.timestamp() * 1e9)
    assert names == {"a": f"p.{stamp:x}", "b": f"p.{stamp + 1:x}", "c": f"p.{stamp + 2:x}"}


def test_events_beyond_the_window_size_go_oldest_first(clock: FakeClock) -> None:
    cluster = EmbeddedCluster(clock=clock, max_events=3)
    seen: list[WatchEvent] = []
    cluster.watch(["Event"], seen.append)
    for i in range(5):
        cluster.record_event(_event(f"p{i}", f"r{i}"))
        clock.advance(1)
    events, _ = cluster.list("Event", "team")
    assert sorted(e["reason"] for e in events) == ["r2", "r3", "r4"]
    cluster.deliver_pending()
    deleted = [e.obj["reason"] for e in seen if e.type == "DELETED"]
    assert deleted == ["r0", "r1"]


def test_events_expire_after_the_ttl(clock: FakeClock) -> None:
    cluster = EmbeddedCluster(clock=clock, event_ttl=timedelta(hours=1))
    cluster.record_event(_event("p", "early"))
    clock.advance(1800)
    cluster.record_event(_event("p", "middle"))
    clock.advance(1800)  # "early" is an hour old now
    cluster.record_event(_event("p", "late"))
    assert sorted(e["reason"] for e in cluster.list("Event", "team")[0]) == ["late", "middle"]


def test_other_objects_are_not_expired(clock: FakeClock) -> None:
    cluster = EmbeddedCluster(clock=clock, max_events=1)
    cluster.create(pod("p1"))
    cluster.record_event(_event("p1", "a"))
    cluster.record_event(_event("p1", "b"))
    assert [p["metadata"]["name"] for p in cluster.list("Pod")[0]] == ["p1"]
    assert [e["reason"] for e in cluster.list("Event", "team")[0]] == ["b"]


@pytest.mark.parametrize("watched", [False, True])
def test_an_expired_event_is_a_write_whether_or_not_events_are_watched(
    make_cluster: Callable[..., EmbeddedCluster], watched: bool
) -> None:
    cluster = make_cluster(max_events=1)
    if watched:
        cluster.watch(["Event"], lambda e: None)
    before = int(cluster.resource_version())
    cluster.record_event(_event("p", "a"))
    cluster.record_event(_event("p", "b"))
    # The namespace made for the first, two creates and the expiry's delete.
    assert int(cluster.resource_version()) == before + 4
    assert cluster.pending_event_count() == (3 if watched else 0)
    (event,) = cluster.list("Event", "team")[0]
    assert event["reason"] == "b"
    assert event["metadata"]["resourceVersion"] == str(before + 3)
    assert event["metadata"]["uid"] == "uid-5"  # after the system PriorityClasses, the first event, its namespace
    assert event["metadata"]["generation"] == 1


def test_a_recorded_event_is_checked_and_stored_as_a_created_one(cluster: EmbeddedCluster) -> None:
    with pytest.raises(Invalid, match="no kind 'Event' is registered for version 'v2'"):
        cluster.record_event({**_event("p", "a"), "apiVersion": "v2"})
    named = {**_event("p", "a"), "metadata": {"name": "p.1", "resourceVersion": "7", "uid": "mine"}}
    cluster.record_event(named)
    with pytest.raises(AlreadyExists):
        cluster.record_event(named)
    cluster.record_event(_event("p", "b"))
    by_reason = {e["reason"]: e["metadata"] for e in cluster.list("Event", "team")[0]}
    assert list(by_reason["a"]) == ["name", "uid", "namespace", "creationTimestamp", "generation", "resourceVersion"]
    assert list(by_reason["b"]) == ["namespace", "name", "uid", "creationTimestamp", "generation", "resourceVersion"]
    for meta in by_reason.values():
        assert meta["uid"] != "mine" and meta["creationTimestamp"] == "2024-01-01T00:00:00Z"
    assert [n["metadata"]["name"] for n in cluster.list("Namespace")[0]] == ["team"]


def test_concurrent_writers_keep_versions_unique(cluster: EmbeddedCluster) -> None:
    def work(i: int) -> None:
        for j in range(50):
            cluster.create(pod(f"p-{i}-{j}"))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pods, _ = cluster.list("Pod")
    assert len(pods) == 200
    assert len({p["metadata"]["resourceVersion"] for p in pods}) == 200


def test_embedded_cluster_is_a_cluster(cluster: EmbeddedCluster) -> None:
    as_protocol: Cluster = cluster  # mypy checks the structural match
    assert as_protocol.list("Node") == ([], cluster.resource_version())


def test_loading_keeps_the_uid_a_create_replaces(cluster: EmbeddedCluster) -> None:
    """Loading restores state (a snapshot's references name objects by uid); a create is the server's."""
    loaded, created = pod("loaded"), pod("created")
    loaded["metadata"]["uid"] = "uid-from-the-snapshot"
    created["metadata"]["uid"] = "uid-from-the-client"
    cluster.load(loaded)
    cluster.create(created)
    assert cluster.get("Pod", "default", "loaded")["metadata"]["uid"] == "uid-from-the-snapshot"
    assert cluster.get("Pod", "default", "created")["metadata"]["uid"] not in ("uid-from-the-client", "")


def test_patch_pod_status_without_reply_stores_the_patch_and_answers_nothing(cluster: EmbeddedCluster) -> None:
    cluster.create(pod("p"))
    out = cluster.patch_pod_status("default", "p", nominated_node_name="n1", reply=False)
    assert out == {}
    assert cluster.get("Pod", "default", "p")["status"]["nominatedNodeName"] == "n1"


def test_a_delete_without_reply_hands_back_a_copy_of_the_metadata_only(cluster: EmbeddedCluster) -> None:
    created = cluster.create(pod("p1"))
    deleted: list[WatchEvent] = []
    cluster.watch(["Pod"], deleted.append, read_only=True)
    answer = cluster.delete("Pod", "default", "p1", reply=False)
    cluster.deliver_pending()
    (event,) = deleted
    assert answer == {"metadata": event.obj["metadata"]}
    assert int(answer["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    answer["metadata"]["labels"] = {"changed": "yes"}
    assert "changed" not in (event.obj["metadata"].get("labels") or {})
