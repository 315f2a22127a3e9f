"""The scheduler's event handlers (kubesched.eventhandlers), as kube-scheduler's eventhandlers.go.

Watch events from an embedded cluster route pods to the queue or the cache, nodes to the cache, and
move unschedulable pods only when an event concerns a plugin that rejected them; the pod store keeps
the latest version of every pod with its label index.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from kubesched.api.objects import Node, Pod
from kubesched.cluster.protocol import WatchEvent
from kubesched.eventhandlers import PodStore, admission_check, node_scheduling_properties_changes, rebound
from kubesched.queue import events as qevents
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import (
    API,
    Harness,
    LabelFilter,
    PermitPlugin,
    RecordingReserve,
    RejectAllFilter,
    RejectAllFilterNoEvents,
    RejectsUntilAttachmentDeleted,
    RejectsUntilNodeDeleted,
    RejectsUntilPodAdded,
    config_dict,
    profile_with,
    ref,
)

#: No PostFilter at all (DefaultPreemption, and in v1.34 DynamicResources, which adds its own text).
NO_PREEMPTION = {"postFilter": {"disabled": [{"name": "*"}]}}


def two_profiles(nodes: list[dict[str, Any]]) -> Harness:
    """Profile "labels" rejects through LabelFilter (Node Add/label events); "never" through a plugin
    that registered no event at all."""
    cfg = dict(
        API,
        profiles=[
            dict(
                profile_with({"filter": {"enabled": [{"name": ref(LabelFilter)}]}, **NO_PREEMPTION}),
                schedulerName="labels",
            ),
            dict(
                profile_with({"filter": {"enabled": [{"name": ref(RejectAllFilterNoEvents)}]}, **NO_PREEMPTION}),
                schedulerName="never",
            ),
            dict(
                profile_with({"filter": {"enabled": [{"name": ref(RejectAllFilter)}]}, **NO_PREEMPTION}),
                schedulerName="wildcard",
            ),
            dict(profile_with(NO_PREEMPTION), schedulerName="default-scheduler"),
        ],
    )
    return Harness(cfg, objects=nodes)


def pod_for(name: str, scheduler: str, **kw: Any) -> dict[str, Any]:
    return pod_dict(name, spec={"schedulerName": scheduler}, **kw)


def requested_cpu(h: Harness, node: str) -> int:
    snap = h.scheduler.update_snapshot()
    return int(snap.node_infos[snap.index[node]].requested.get("cpu", 0))


# -- pods -----------------------------------------------------------------------------------------------
def test_pending_pods_are_queued_only_for_our_scheduler_names() -> None:
    h = two_profiles([node_dict("n1")])
    h.create(pod_for("mine", "default-scheduler"), pod_for("theirs", "somebody-else"))
    assert h.where("mine") == "active"
    assert h.where("theirs") is None
    h.run()
    assert h.node_of("mine") == "n1"
    assert h.node_of("theirs") is None
    assert {r.pod for r in h.records} == {"default/mine"}


def test_bound_pods_go_to_the_cache() -> None:
    h = Harness(objects=[node_dict("n1", cpu="2"), pod_dict("running", cpu="1500m", node_name="n1")])
    assert requested_cpu(h, "n1") == 1500
    h.create(pod_dict("p", cpu="1"))
    h.step()
    assert h.node_of("p") is None
    assert "Insufficient cpu" in (h.records[-1].message or "")


def test_pending_pod_bound_by_someone_else_leaves_the_queue_for_the_cache() -> None:
    h = Harness(
        dict(API, profiles=[profile_with({"filter": {"enabled": [{"name": ref(LabelFilter)}]}, **NO_PREEMPTION})]),
        objects=[node_dict("n1")],
    )
    h.create(pod_dict("p", cpu="1"))
    h.step()
    assert h.where("p") == "unschedulable"
    h.cluster.bind("default", "p", "n1")
    h.settle()
    assert h.where("p") is None
    assert requested_cpu(h, "n1") == 1000


def test_pod_deleted_while_queued_is_dropped() -> None:
    h = Harness(objects=[node_dict("n1")])
    h.create(pod_dict("p"))
    assert h.where("p") == "active"
    h.cluster.delete("Pod", "default", "p")
    h.settle()
    assert h.scheduler.queue.pending_pod_list() == []
    assert h.run() == 0
    assert h.records == []


def test_pod_deleted_while_waiting_on_permit_is_not_bound() -> None:
    cfg = dict(
        API,
        profiles=[
            profile_with(
                {
                    "permit": {"enabled": [{"name": ref(PermitPlugin)}]},
                    "reserve": {"enabled": [{"name": ref(RecordingReserve)}]},
                }
            )
        ],
    )
    h = Harness(cfg, objects=[node_dict("n1")])
    h.create(pod_dict("p", cpu="1"))
    h.step()
    assert requested_cpu(h, "n1") == 1000
    h.cluster.delete("Pod", "default", "p")
    h.settle()
    assert h.scheduler.profiles["default-scheduler"].waiting_pods.all() == []
    assert requested_cpu(h, "n1") == 0
    assert ("unreserve", "p", "n1") in h.plugin(RecordingReserve).calls
    assert [p for p in h.cluster.list("Pod")[0] if p["metadata"]["name"] == "p"] == []


def test_assigned_pod_delete_moves_pods_rejected_for_resources_only() -> None:
    h = two_profiles([node_dict("n1", cpu="2"), pod_dict("hog", cpu="2", node_name="n1")])
    h.create(pod_for("needs-cpu", "default-scheduler", cpu="1"), pod_for("needs-label", "labels"))
    h.run()
    assert h.where("needs-cpu") == "unschedulable"
    assert h.where("needs-label") == "unschedulable"
    h.cluster.delete("Pod", "default", "hog")
    h.settle()
    assert h.where("needs-cpu") in ("active", "backoff")
    assert h.where("needs-label") == "unschedulable"
    assert requested_cpu(h, "n1") == 0


def test_node_add_moves_only_pods_whose_rejector_registered_it() -> None:
    h = two_profiles([node_dict("n1")])
    h.create(pod_for("labels", "labels"), pod_for("never", "never"), pod_for("wildcard", "wildcard"))
    h.run()
    assert {n: h.where(n) for n in ("labels", "never", "wildcard")} == dict.fromkeys(
        ("labels", "never", "wildcard"), "unschedulable"
    )
    h.create(node_dict("n2", labels={"fake": "yes"}))
    assert h.where("labels") in ("active", "backoff")
    assert h.where("wildcard") in ("active", "backoff")  # no events_to_register: every event
    assert h.where("never") == "unschedulable"  # an empty registration: no event helps
    h.clock.advance(10)
    h.scheduler.run_periodic()
    h.run()
    assert h.node_of("labels") == "n2"


@pytest.mark.parametrize(
    ("change", "moves"),
    [
        ({"labels": {"fake": "yes"}}, True),  # NodeLabelChange, registered by LabelFilter
        ({"allocatable": {"cpu": "8"}}, False),  # NodeAllocatableChange, not registered
        ({"annotations": {"a": "b"}}, False),
        # One update, two kinds of change: every kind is an event, so the label change still counts.
        ({"allocatable": {"cpu": "8"}, "labels": {"fake": "yes"}}, True),
    ],
)
def test_node_update_moves_pods_by_the_kind_of_change(change: dict[str, Any], moves: bool) -> None:
    h = two_profiles([node_dict("n1")])
    h.create(pod_for("labels", "labels"), pod_for("wildcard", "wildcard"))
    h.run()
    node = h.cluster.get("Node", None, "n1")
    node["metadata"]["labels"].update(change.get("labels", {}))
    node["metadata"].setdefault("annotations", {}).update(change.get("annotations", {}))
    node["status"]["allocatable"].update(change.get("allocatable", {}))
    h.cluster.update(node)
    h.settle()
    assert (h.where("labels") != "unschedulable") is moves
    assert h.where("wildcard") in ("active", "backoff")


def test_node_delete_removes_it_from_the_snapshot() -> None:
    h = Harness(objects=[node_dict("n1"), node_dict("n2")])
    h.cluster.delete("Node", None, "n1")
    h.settle()
    assert [i.name for i in h.scheduler.update_snapshot().node_infos] == ["n2"]
    h.create(pod_dict("p"))
    h.step()
    assert h.node_of("p") == "n2"


@pytest.mark.parametrize(
    "spec",
    [
        {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "abc"}}}]},
        {"tolerations": [{"key": "a", "operator": "Bogus"}]},
    ],
    ids=["bad-quantity", "bad-toleration-operator"],
)
def test_malformed_pod_gets_a_warning_and_the_scheduler_carries_on(spec: dict[str, Any]) -> None:
    h = Harness(objects=[node_dict("n1")])
    h.create(pod_dict("bad", spec=spec), pod_dict("good"))
    warnings = h.events("bad")
    assert len(warnings) == 1
    assert warnings[0]["type"] == "Warning"
    assert warnings[0]["reason"] == "FailedScheduling"
    assert warnings[0]["message"].startswith("pod is malformed and cannot be scheduled: spec.")
    assert h.where("bad") is None
    h.run()
    assert h.node_of("good") == "n1"
    assert h.node_of("bad") is None
    assert {r.pod for r in h.records} == {"default/good"}


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminal_pods_are_ignored(phase: str) -> None:
    done_bound = pod_dict("done-bound", cpu="2", node_name="n1")
    done_bound["status"]["phase"] = phase
    done_pending = pod_dict("done-pending")
    done_pending["status"]["phase"] = phase
    h = Harness(objects=[node_dict("n1", cpu="2"), done_bound, done_pending])
    assert requested_cpu(h, "n1") == 0
    assert h.where("done-pending") is None
    h.create(pod_dict("p", cpu="2"))
    h.step()
    assert h.node_of("p") == "n1"


def test_running_pod_turning_terminal_frees_its_node() -> None:
    h = Harness(
        dict(API, profiles=[profile_with(NO_PREEMPTION)]),
        objects=[node_dict("n1", cpu="2"), pod_dict("job", cpu="2", node_name="n1")],
    )
    h.create(pod_dict("p", cpu="2"))
    h.step()
    assert h.where("p") == "unschedulable"
    job = h.pod("job")
    job["status"]["phase"] = "Succeeded"
    h.cluster.update(job)
    h.settle()
    assert requested_cpu(h, "n1") == 0
    assert h.where("p") in ("active", "backoff")


def test_gated_pods_wait_until_their_gates_are_removed() -> None:
    h = Harness(objects=[node_dict("n1")])
    h.create(pod_dict("g", spec={"schedulingGates": [{"name": "example.com/wait"}]}))
    assert h.where("g") == "gated"
    assert h.run() == 0
    h.clock.advance(600)
    h.scheduler.run_periodic()
    assert h.run() == 0
    assert h.records == []
    pod = h.pod("g")
    pod["spec"]["schedulingGates"] = []
    h.cluster.update(pod)
    h.settle()
    assert h.where("g") == "active"
    assert h.run() == 1
    assert h.node_of("g") == "n1"


def test_a_binding_or_status_update_reuses_the_parsed_pod_and_anything_else_is_parsed_again() -> None:
    raw = pod_dict("p", cpu="1", labels={"app": "a"})
    raw["metadata"]["resourceVersion"] = "1"
    old = Pod.from_dict(raw)
    bound = copy.deepcopy(raw)
    bound["spec"]["nodeName"] = "n1"
    bound["metadata"]["resourceVersion"] = "2"
    bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    new = rebound(old, bound)
    assert new is not None and new.node_name == "n1" and new.meta.resource_version == "2" and new.raw is bound
    assert new.requests == old.requests and new.containers is old.containers
    names = [f.name for f in dataclasses.fields(Pod)]
    parsed = Pod.from_dict(bound)
    assert [getattr(new, n) for n in names] == [getattr(parsed, n) for n in names]
    phased = copy.deepcopy(bound)
    phased["status"]["phase"] = "Running"
    assert rebound(old, phased) is None
    relabelled = copy.deepcopy(bound)
    relabelled["metadata"]["labels"] = {"app": "b"}
    resized = copy.deepcopy(bound)
    resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    nominated = copy.deepcopy(raw)
    nominated["status"]["nominatedNodeName"] = "n2"
    assert rebound(old, relabelled) is None
    assert rebound(old, resized) is None
    assert rebound(old, nominated) is None
    # A field added or dropped counts as a change; managedFields, like the resourceVersion, do not.
    gated = copy.deepcopy(bound)
    gated["spec"]["priorityClassName"] = "high"
    unlabelled = copy.deepcopy(bound)
    del unlabelled["metadata"]["labels"]
    managed = copy.deepcopy(bound)
    managed["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    assert rebound(old, gated) is None
    assert rebound(Pod.from_dict(gated), bound) is None
    assert rebound(old, unlabelled) is None
    assert rebound(Pod.from_dict(unlabelled), bound) is None
    assert rebound(old, managed) is not None
    # The kubelet's start time, stamped at binding, is read as parsing reads it; a bad one is parsed
    # afresh (and reported there).
    started = copy.deepcopy(bound)
    started["status"]["startTime"] = "2024-01-01T00:00:05Z"
    moved = rebound(old, started)
    assert moved is not None and moved.start_time == Pod.from_dict(started).start_time is not None
    started["status"]["startTime"] = "soon"
    assert rebound(old, started) is None
    # What in-place resizing reads from the status (containers reported, their resources) makes it
    # parse again; the rest of a container's status (its state) does not.
    running = copy.deepcopy(bound)
    running["status"]["containerStatuses"] = [{"name": "c", "ready": True}]
    assert rebound(old, running) is None
    restarted = copy.deepcopy(running)
    restarted["status"]["containerStatuses"][0]["restartCount"] = 1
    assert rebound(Pod.from_dict(running), restarted) is not None
    reported = copy.deepcopy(running)
    reported["status"]["containerStatuses"][0]["resources"] = {"requests": {"cpu": "2"}}
    assert rebound(Pod.from_dict(running), reported) is None


def test_a_node_beyond_the_snapshot_columns_is_ignored_not_an_overflow() -> None:
    # A real API server stores cpu: 1E; the scheduler leaves that node out instead of crashing.
    h = Harness(objects=[node_dict("huge", cpu="1E"), node_dict("n1")])
    h.create(pod_dict("p"))
    h.run()
    assert h.node_of("p") == "n1"
    assert [i.name for i in h.scheduler.update_snapshot().node_infos] == ["n1"]


def test_storage_events_reach_listers_and_move_volume_rejected_pods() -> None:
    """PvcAdd / PvAdd / StorageClassAdd as kube-scheduler names them: a pod waiting for its claim is
    retried once the claim appears."""
    from tests.plugins.storage import claim_volume, pv_dict, pvc_dict

    h = Harness(objects=[node_dict("n1")])
    h.create(pod_dict("p", spec={"volumes": [claim_volume("c")]}))
    h.step()
    assert h.node_of("p") is None
    assert h.records[-1].message and 'persistentvolumeclaim "c" not found' in h.records[-1].message
    pv = pv_dict("pv", claim=("default", "c"))
    pvc = pvc_dict("c", volume="pv", bound=True)
    for obj in (pv, pvc):
        obj["metadata"].pop("resourceVersion")
        obj["metadata"].pop("uid", None)
    h.create(pv, pvc)
    assert h.scheduler.listers.pvc("default", "c") is not None
    h.clock.advance_to(h.clock.now() + __import__("datetime").timedelta(seconds=2))
    h.scheduler.queue.flush_backoff_q_completed()
    h.run()
    assert h.node_of("p") == "n1"


# -- the pod store ----------------------------------------------------------------------------------------
def _stored(name: str, namespace: str = "default", **labels: str) -> Pod:
    return Pod.from_dict(pod_dict(name, namespace=namespace, labels=labels, uid=f"uid-{namespace}-{name}"))


@pytest.mark.parametrize(
    ("namespace", "labels", "want"),
    [
        (None, None, ["default/a", "default/b", "other/c"]),
        ("default", None, ["default/a", "default/b"]),
        ("default", {"app": "web"}, ["default/a", "default/b"]),  # through the label index
        ("default", {"app": "web", "tier": "front"}, ["default/a"]),
        ("other", {"app": "web"}, ["other/c"]),
        (None, {"tier": "front"}, ["default/a"]),  # no namespace: a scan
        ("default", {"app": "db"}, []),
    ],
)
def test_pod_store_lists_by_namespace_and_labels(
    namespace: str | None, labels: dict[str, str] | None, want: list[str]
) -> None:
    store = PodStore()
    for pod in (_stored("b", app="web"), _stored("a", app="web", tier="front"), _stored("c", "other", app="web")):
        store.remember(pod)
    assert sorted(p.key for p in store.list(namespace, labels)) == want


def test_pod_store_keeps_the_latest_version_and_its_labels_only() -> None:
    store = PodStore()
    first = _stored("a", app="web")
    store.remember(first)
    relabelled = Pod.from_dict(dict(first.raw, metadata=dict(first.raw["metadata"], labels={"app": "db"})))
    store.remember(relabelled)
    assert store.current(first) is relabelled and len(store) == 1
    assert store.list("default", {"app": "web"}) == []
    assert store.list("default", {"app": "db"}) == [relabelled]
    assert store.by_key("default/a") is relabelled and store.by_key("default/zz") is None
    assert store.forget(first.uid) is relabelled
    assert store.forget(first.uid) is None
    assert store.list("default", {"app": "db"}) == [] and store.all() == []


def test_a_deleted_pod_leaves_the_label_listing() -> None:
    h = Harness(objects=[node_dict("n1")])
    h.create(pod_dict("p", labels={"app": "a"}), pod_dict("q", labels={"app": "a"}))
    h.run()
    assert [p.name for p in h.scheduler.list_pods("default", {"app": "a"})] == ["p", "q"]
    h.cluster.delete("Pod", "default", "p")
    h.settle()
    assert [p.name for p in h.scheduler.list_pods("default", {"app": "a"})] == ["q"]


# -- nodes --------------------------------------------------------------------------------------------
def _node(**kw: Any) -> Node:
    raw = node_dict("n1", **{k: v for k, v in kw.items() if k not in ("annotations", "conditions")})
    if "annotations" in kw:
        raw["metadata"]["annotations"] = kw["annotations"]
    if "conditions" in kw:
        raw["status"]["conditions"] = kw["conditions"]
    return Node.from_dict(raw)


_READY = [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2024-01-01T00:00:00Z"}]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        ({}, {}, []),
        ({"unschedulable": True}, {}, [qevents.NodeSpecUnschedulableChange]),
        ({}, {"unschedulable": True}, []),  # becoming unschedulable helps no pod
        ({}, {"cpu": "8"}, [qevents.NodeAllocatableChange]),
        ({}, {"labels": {"zone": "a"}}, [qevents.NodeLabelChange]),
        ({}, {"taints": [{"key": "k", "effect": "NoSchedule"}]}, [qevents.NodeTaintChange]),
        (
            {"conditions": _READY},
            {"conditions": [dict(_READY[0], lastHeartbeatTime="2024-01-01T00:01:00Z")]},
            [],
        ),  # a heartbeat is no change
        ({"conditions": _READY}, {"conditions": [dict(_READY[0], status="False")]}, [qevents.NodeConditionChange]),
        ({}, {"annotations": {"a": "b"}}, [qevents.NodeAnnotationChange]),
        ({}, {"cpu": "8", "labels": {"zone": "a"}}, [qevents.NodeAllocatableChange, qevents.NodeLabelChange]),
    ],
)
def test_node_scheduling_properties_changes(old: dict[str, Any], new: dict[str, Any], want: list[Any]) -> None:
    assert node_scheduling_properties_changes(_node(**old), _node(**new)) == want


@pytest.mark.parametrize(
    ("pod", "fits"),
    [
        (pod_dict("small", cpu="1"), True),
        (pod_dict("big", cpu="5"), False),
        (pod_dict("elsewhere", spec={"nodeName": "n2"}), False),
        (pod_dict("selector", spec={"nodeSelector": {"zone": "b"}}), False),
    ],
    ids=["fits", "resources", "node-name", "node-selector"],
)
def test_admission_check_uses_the_filters_own_checks(pod: dict[str, Any], fits: bool) -> None:
    from tests.factories import make_node, make_snapshot

    info = make_snapshot([make_node("n1", cpu="4", labels={"zone": "a"})]).node_infos[0]
    assert admission_check(Pod.from_dict(pod), info) is fits


def test_malformed_node_gets_an_event_and_is_ignored() -> None:
    bad = node_dict("bad")
    bad["status"]["allocatable"]["cpu"] = "lots"
    h = Harness(objects=[node_dict("n1")])
    h.create(bad)
    assert [i.name for i in h.scheduler.update_snapshot().node_infos] == ["n1"]
    [event] = h.events("bad")
    assert (event["reason"], event["reportingController"]) == ("FailedToParse", "kubesched")
    assert event["message"].startswith("node ignored: ")


def test_a_failing_handler_never_stops_the_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness(objects=[node_dict("n1")])

    def broken(node: Any) -> Any:
        raise RuntimeError("cache bug")

    monkeypatch.setattr(h.scheduler.cache, "add_node", broken)
    h.scheduler.handle_event(WatchEvent("ADDED", "Node", node_dict("n2"), None))  # logged, not raised
    monkeypatch.undo()
    h.create(pod_dict("p"))
    h.run()
    assert h.node_of("p") == "n1"


# -- what reaches the queue, per version ---------------------------------------------------------------
def _one_filter(plugin: type, version: str, nodes: list[dict[str, Any]]) -> Harness:
    cfg = dict(profile_with({"filter": {"enabled": [{"name": ref(plugin)}]}, **NO_PREEMPTION}))
    return Harness(config_dict(cfg), objects=nodes, version=version)


@pytest.mark.parametrize(("version", "moves"), [("1.30", False), ("1.34", True)])
def test_a_node_deletion_is_an_event_in_v134(version: str, moves: bool) -> None:
    h = _one_filter(RejectsUntilNodeDeleted, version, [node_dict("n1"), node_dict("n2")])
    h.create(pod_dict("p"))
    h.run()
    assert h.where("p") == "unschedulable"
    h.cluster.delete("Node", None, "n2")
    h.settle()
    assert (h.where("p") != "unschedulable") is moves


@pytest.mark.parametrize(("version", "moves"), [("1.30", False), ("1.34", True)])
def test_a_bound_pod_reaches_every_plugin_registering_pod_additions_in_v134(version: str, moves: bool) -> None:
    """v1.30 offers a newly bound pod only to pods whose required affinity it matches."""
    h = _one_filter(RejectsUntilPodAdded, version, [node_dict("n1")])
    h.create(pod_dict("p"))
    h.run()
    assert h.where("p") == "unschedulable"
    h.create(pod_dict("bound", node_name="n1"))
    assert (h.where("p") != "unschedulable") is moves


def _attachment(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": {"attacher": "csi.example.com", "nodeName": node, "source": {"persistentVolumeName": f"pv-{name}"}},
    }


@pytest.mark.parametrize(("version", "moves"), [("1.30", False), ("1.34", True)])
def test_a_volume_attachment_deletion_reaches_the_queue_in_v134(version: str, moves: bool) -> None:
    """v1.34 watches VolumeAttachments and hands their changes to the queue (its CSI limits count
    them); v1.30 has no such event."""
    h = _one_filter(RejectsUntilAttachmentDeleted, version, [node_dict("n1"), _attachment("va-1", "n1")])
    h.create(pod_dict("p"))
    h.run()
    assert h.where("p") == "unschedulable"
    h.cluster.delete("VolumeAttachment", None, "va-1")
    h.settle()
    assert (h.where("p") != "unschedulable") is moves


@pytest.mark.parametrize(("version", "moves"), [("1.30", False), ("1.34", True)])
def test_node_events_are_pre_checked_only_in_v130(version: str, moves: bool) -> None:
    """A new node the pod cannot fit (too little cpu) passes LabelFilter's registration; v1.30's
    pre-check drops the event, v1.34 leaves it to the plugin's hint (none here: queue)."""
    cfg = profile_with({"filter": {"enabled": [{"name": ref(LabelFilter)}]}, **NO_PREEMPTION})
    h = Harness(config_dict(cfg), objects=[node_dict("n1")], version=version)
    h.create(pod_dict("p", cpu="2"))
    h.run()
    h.create(node_dict("small", cpu="1", labels={"fake": "yes"}))
    assert (h.where("p") != "unschedulable") is moves


@pytest.mark.parametrize(("version", "moves"), [("1.30", True), ("1.34", False)])
def test_an_annotation_change_requeues_a_waiting_pod_only_in_v130(version: str, moves: bool) -> None:
    cfg = profile_with({"filter": {"enabled": [{"name": ref(LabelFilter)}]}, **NO_PREEMPTION})
    h = Harness(config_dict(cfg), objects=[node_dict("n1")], version=version)
    h.create(pod_dict("p"))
    h.run()
    pod = h.pod("p")
    pod["metadata"]["annotations"] = {"note": "changed"}
    h.cluster.update(pod)
    h.settle()
    assert (h.where("p") != "unschedulable") is moves


def _of_priority(name: str, value: int) -> list[dict[str, Any]]:
    """A PriorityClass of ``value`` and a pending 1-cpu pod of that class."""
    cls = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": f"p{value}"},
        "value": value,
    }
    pod = pod_dict(name, cpu="1", spec={"priorityClassName": f"p{value}"})
    del pod["spec"]["priority"]
    return [cls, pod]


def _nominated(version: str) -> Harness:
    """Three pending pods no node fits (a hog holds n1's cpu); "nominee" (priority 100) holds a
    nomination to n1, "low" (10) and "high" (200) wait."""
    h = Harness(
        config_dict(profile_with(NO_PREEMPTION)),
        version=version,
        objects=[node_dict("n1", cpu="2"), pod_dict("hog", cpu="2", node_name="n1")],
    )
    h.create(*_of_priority("nominee", 100), *_of_priority("low", 10), *_of_priority("high", 200))
    h.run()
    h.cluster.patch_pod_status("default", "nominee", nominated_node_name="n1")
    h.settle()
    assert {n: h.where(n) for n in ("low", "high")} == {"low": "unschedulable", "high": "unschedulable"}
    return h


@pytest.mark.parametrize(("version", "moves"), [("1.30", False), ("1.34", True)])
def test_a_deleted_nominee_frees_its_room_for_pods_of_no_higher_priority(version: str, moves: bool) -> None:
    h = _nominated(version)
    h.cluster.delete("Pod", "default", "nominee")
    h.settle()
    assert (h.where("low") != "unschedulable") is moves
    assert h.where("high") == "unschedulable"


@pytest.mark.parametrize(("version", "moves"), [("1.30", False), ("1.34", True)])
def test_a_lost_nomination_frees_its_room_too(version: str, moves: bool) -> None:
    h = _nominated(version)
    h.cluster.patch_pod_status("default", "nominee", nominated_node_name="")
    h.settle()
    assert (h.where("low") != "unschedulable") is moves
    assert h.where("high") == "unschedulable"
