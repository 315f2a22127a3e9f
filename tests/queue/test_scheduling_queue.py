from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.config.features import feature_gates
from kubesched.framework.interfaces import ActionType, ClusterEvent
from kubesched.framework.status import Status, unresolvable
from kubesched.plugins.queuesort import PrioritySort
from kubesched.plugins.schedulinggates import SchedulingGates
from kubesched.queue import events as ev
from kubesched.queue.queued_pod_info import QueuedPodInfo
from kubesched.queue.scheduling_queue import (
    ACTIVE,
    BACKOFF,
    GATED,
    UNSCHEDULABLE,
    QueueError,
    SchedulingQueue,
)
from tests.queue.conftest import T0, FakeClock, mkpod, modified

FIT = "NodeResourcesFit"
TAINT = "TaintToleration"
AFFINITY = "InterPodAffinity"
NOEVENTS = "NoEventsPlugin"

EVENT_MAP: dict[ClusterEvent, set[str]] = {
    ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE): {FIT},
    ClusterEvent("Pod", ActionType.DELETE): {FIT, AFFINITY},
    ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT): {TAINT},
    ClusterEvent("Pod", ActionType.ALL): {AFFINITY},
}


def make_queue(clock: FakeClock, *, keyed: bool = True, **kw: Any) -> SchedulingQueue:
    """A v1.30 queue (QueueingHints off): the rules these tests pin; v1.34's are in test_queueing_hints."""
    sort = PrioritySort()
    kw.setdefault("cluster_event_map", EVENT_MAP)
    kw.setdefault("features", feature_gates("1.30"))
    return SchedulingQueue(sort.less, sort_key=sort.sort_key if keyed else None, clock=clock, **kw)


def pop(q: SchedulingQueue) -> QueuedPodInfo:
    qpi = q.pop(block=False)
    assert qpi is not None
    return qpi


def fail(
    q: SchedulingQueue, qpi: QueuedPodInfo, *plugins: str, pending: tuple[str, ...] = (), cycle: int | None = None
) -> None:
    """What the scheduler does after a failed attempt: record rejectors and put the pod back."""
    qpi.unschedulable_plugins.update(plugins)
    qpi.pending_plugins.update(pending)
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle if cycle is None else cycle)


def to_unschedulable(q: SchedulingQueue, pod: Pod, *plugins: str, pending: tuple[str, ...] = ()) -> QueuedPodInfo:
    q.add(pod)
    qpi = pop(q)
    assert qpi.pod.uid == pod.uid
    fail(q, qpi, *plugins, pending=pending)
    return qpi


class Gate:
    """A PreEnqueue plugin whose verdict the test flips."""

    def __init__(self, name: str = "Gate") -> None:
        self.name = name
        self.closed = True

    def pre_enqueue(self, pod: Pod) -> Status | None:
        return unresolvable("closed") if self.closed else None


# -- ordering -------------------------------------------------------------------------------------
@pytest.mark.parametrize("keyed", [True, False], ids=["sort_key", "less"])
def test_pop_order_priority_then_timestamp(clock: FakeClock, keyed: bool) -> None:
    q = make_queue(clock, keyed=keyed)
    q.add(mkpod("low", priority=1))
    clock.step(1)
    q.add(mkpod("high-late", priority=10))
    q.add(mkpod("mid-a", priority=5))
    q.add(mkpod("mid-b", priority=5))  # same timestamp as mid-a: insertion order
    clock.step(-5)
    q.add(mkpod("mid-early", priority=5))
    assert [p.name for p in q.pods_in_active_q()] == ["high-late", "mid-early", "mid-a", "mid-b", "low"]
    assert [pop(q).pod.name for _ in range(5)] == ["high-late", "mid-early", "mid-a", "mid-b", "low"]
    assert q.pop(block=False) is None


def test_pop_bookkeeping(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    assert q.scheduling_cycle == 0
    clock.step(3)
    qpi = pop(q)
    assert (qpi.attempts, q.scheduling_cycle) == (1, 1)
    assert qpi.timestamp == T0 and qpi.initial_attempt_timestamp == T0  # set on entering activeQ
    assert q.in_flight() == [pod]
    fail(q, qpi, FIT, pending=(TAINT,))
    assert q.in_flight() == []  # add_unschedulable_if_not_present ends the attempt
    q.move_all_to_active_or_backoff_queue(ev.WildCardEvent)
    clock.step(10)
    q.flush_backoff_q_completed()
    qpi = pop(q)
    assert (qpi.attempts, q.scheduling_cycle) == (2, 2)
    assert qpi.initial_attempt_timestamp == T0
    assert qpi.unschedulable_plugins == set() and qpi.pending_plugins == set()
    q.done(pod.uid)
    assert q.in_flight() == []


# -- gating ---------------------------------------------------------------------------------------
def test_gated_pods_never_popped_and_counted(clock: FakeClock) -> None:
    q = make_queue(clock, pre_enqueue={"default-scheduler": [SchedulingGates()]})
    gated = mkpod("gated", gates=["example.com/wait"])
    q.add(gated)
    q.add(mkpod("free"))
    assert q.pending_pods() == {ACTIVE: 1, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 1}
    assert pop(q).pod.name == "free"
    assert q.pop(block=False) is None
    info = q.get_pod(gated.uid)
    assert info is not None and info.gated and info.gating_plugin == "SchedulingGates"
    assert info.unschedulable_plugins == {"SchedulingGates"}
    assert q.queue_of(gated.uid) == GATED
    # Neither events nor the leftover flush touch pods held by scheduling gates.
    q.move_all_to_active_or_backoff_queue(ev.WildCardEvent)
    clock.step(minutes=10)
    q.flush_unschedulable_pods_leftover()
    assert q.queue_of(gated.uid) == GATED
    # A bookkeeping-only update keeps it gated; removing the gates releases it straight to activeQ.
    q.update(gated, modified(gated, metadata__resourceVersion="7"))
    assert q.queue_of(gated.uid) == GATED
    ungated = modified(gated, spec__schedulingGates=None)
    q.update(gated, ungated)
    assert q.queue_of(gated.uid) == ACTIVE
    assert q.pending_pods() == {ACTIVE: 1, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}
    got = pop(q)
    assert got.pod is ungated and not got.gated and got.gating_plugin == ""


def test_other_pre_enqueue_plugins_rerun_on_events(clock: FakeClock) -> None:
    gate = Gate("Gate")
    q = make_queue(
        clock, pre_enqueue={"default-scheduler": [gate]}, cluster_event_map={**EVENT_MAP, ev.NodeLabelChange: {"Gate"}}
    )
    pod = mkpod("p")
    q.add(pod)
    assert q.queue_of(pod.uid) == GATED
    q.move_all_to_active_or_backoff_queue(ev.NodeLabelChange)  # re-runs PreEnqueue: still closed
    assert q.queue_of(pod.uid) == GATED
    q.move_all_to_active_or_backoff_queue(ev.NodeAdd)  # Gate did not register NodeAdd
    gate.closed = False
    assert q.queue_of(pod.uid) == GATED
    q.move_all_to_active_or_backoff_queue(ev.NodeLabelChange)
    assert q.queue_of(pod.uid) == ACTIVE  # gated pods never back off
    assert pop(q).gated is False


class PodOnlyGate(Gate):
    """A Gate that declares its verdict reads the pod alone (as SchedulingGates does)."""

    pre_enqueue_reads_pod_only = True


@pytest.mark.parametrize(("gate", "moved"), [(Gate(), True), (PodOnlyGate(), False)], ids=["plain", "pod-only"])
def test_events_reach_gated_pods_unless_their_gate_reads_the_pod_alone(
    clock: FakeClock, gate: Gate, moved: bool
) -> None:
    gate.closed = True
    q = make_queue(clock, pre_enqueue={"default-scheduler": [gate]})
    pod = mkpod("p")
    q.add(pod)
    gate.closed = False
    q.move_all_to_active_or_backoff_queue(ev.WildCardEvent)
    assert q.queue_of(pod.uid) == (ACTIVE if moved else GATED)
    q.update(pod, modified(pod, metadata__labels={"a": "b"}))  # an update of the pod re-runs PreEnqueue
    assert q.queue_of(pod.uid) == ACTIVE


def test_pre_enqueue_per_profile_and_errors(clock: FakeClock) -> None:
    class Boom:
        name = "Boom"

        def pre_enqueue(self, pod: Pod) -> Status | None:
            raise RuntimeError("boom")

    q = make_queue(clock, pre_enqueue={"other": [Boom()]})
    q.add(mkpod("default"))
    q.add(mkpod("other", scheduler="other"))
    assert q.pending_pods()[ACTIVE] == 1 and q.pending_pods()[GATED] == 1
    info = q.get_pod("uid-default-other")
    assert info is not None and info.gating_plugin == "Boom"


# -- backoff --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("initial", "maximum", "want"),
    [
        (1, 10, [1, 1, 2, 4, 8, 10, 10]),
        (3, 10, [3, 3, 6, 10, 10]),
        (1, 1, [1, 1, 1]),
        (2, 16, [2, 2, 4, 8, 16, 16]),
    ],
)
def test_backoff_doubling_and_cap(clock: FakeClock, initial: int, maximum: int, want: list[int]) -> None:
    q = make_queue(clock, pod_initial_backoff=timedelta(seconds=initial), pod_max_backoff=timedelta(seconds=maximum))
    qpi = QueuedPodInfo(pod=mkpod("p"), timestamp=T0)
    got = []
    for attempts in range(len(want)):
        qpi.attempts = attempts
        got.append(q.backoff_duration(qpi).total_seconds())
    assert got == want


def test_flush_backoff_q_completed(clock: FakeClock) -> None:
    q = make_queue(clock)
    a, b = mkpod("a", priority=1), mkpod("b", priority=2)
    q.add(a)
    q.add(b)
    qb, qa = pop(q), pop(q)
    qa.attempts = 2  # a backs off 2s, b 1s
    fail(q, qa)  # no rejector plugins: straight to backoffQ
    fail(q, qb)
    assert q.pending_pods()[BACKOFF] == 2
    assert q.next_backoff_expiry() == T0 + timedelta(seconds=1)
    assert q.backoff_expiries() == [T0 + timedelta(seconds=1), T0 + timedelta(seconds=2)]
    clock.step(0.5)
    q.flush_backoff_q_completed()
    assert q.pending_pods()[ACTIVE] == 0
    clock.step(0.5)  # exactly at b's expiry: b is done backing off
    q.flush_backoff_q_completed()
    assert q.queue_of(b.uid) == ACTIVE and q.queue_of(a.uid) == BACKOFF
    assert q.next_backoff_expiry() == T0 + timedelta(seconds=2)
    clock.step(5)
    q.flush_backoff_q_completed()
    assert q.pending_pods() == {ACTIVE: 2, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}
    assert q.next_backoff_expiry() is None and q.backoff_expiries() == []


def test_flush_backoff_regates(clock: FakeClock) -> None:
    gate = Gate()
    gate.closed = False
    q = make_queue(clock, pre_enqueue={"default-scheduler": [gate]})
    pod = mkpod("p")
    q.add(pod)
    fail(q, pop(q))
    gate.closed = True
    clock.step(2)
    q.flush_backoff_q_completed()
    assert q.queue_of(pod.uid) == GATED


# -- add_unschedulable_if_not_present -------------------------------------------------------------
def test_add_unschedulable_goes_to_pool_without_move_request(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    qpi = pop(q)
    clock.step(7)
    fail(q, qpi, FIT)
    assert q.queue_of(pod.uid) == UNSCHEDULABLE
    assert qpi.timestamp == T0 + timedelta(seconds=7)  # refreshed on re-add


def test_add_unschedulable_without_rejectors_goes_to_backoff(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    fail(q, pop(q))
    assert q.queue_of(pod.uid) == BACKOFF


def test_move_request_during_cycle_sends_to_backoff(clock: FakeClock) -> None:
    q = make_queue(clock)
    a, b = mkpod("a", priority=2), mkpod("b", priority=1)
    q.add(a)
    q.add(b)
    qa = pop(q)
    cycle_a = q.scheduling_cycle
    q.move_all_to_active_or_backoff_queue(ev.NodeAdd)  # arrives while a is being scheduled
    fail(q, qa, FIT, cycle=cycle_a)
    assert q.queue_of(a.uid) == BACKOFF
    # b's cycle starts after that move request: it goes to the pool.
    qb = pop(q)
    fail(q, qb, FIT)
    assert q.queue_of(b.uid) == UNSCHEDULABLE


def test_uninteresting_event_is_no_move_request(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    qpi = pop(q)
    q.move_all_to_active_or_backoff_queue(ev.PvAdd)  # no plugin registered PersistentVolume events
    fail(q, qpi, FIT)
    assert q.queue_of(pod.uid) == UNSCHEDULABLE


def test_add_unschedulable_rejects_queued_pods(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    qpi = pop(q)
    q.update(pod, modified(pod, metadata__labels={"x": "y"}))  # re-added while in flight
    assert q.queue_of(pod.uid) == ACTIVE
    with pytest.raises(QueueError, match="already present in the active queue"):
        fail(q, qpi, FIT)
    assert q.in_flight() == []


# -- event-driven moves ---------------------------------------------------------------------------
def test_events_move_only_pods_whose_rejector_registered_them(clock: FakeClock) -> None:
    q = make_queue(clock)
    fit = to_unschedulable(q, mkpod("fit"), FIT)
    taint = to_unschedulable(q, mkpod("taint"), TAINT)
    silent = to_unschedulable(q, mkpod("silent"), NOEVENTS)
    affinity = to_unschedulable(q, mkpod("affinity"), AFFINITY, TAINT)
    clock.step(30)  # all backoffs over
    q.move_all_to_active_or_backoff_queue(ev.NodeAllocatableChange)
    assert [p.name for p in q.pods_in_active_q()] == ["fit"]
    q.move_all_to_active_or_backoff_queue(ev.NodeTaintChange)
    assert {p.name for p in q.pods_in_active_q()} == {"fit", "taint", "affinity"}
    q.move_all_to_active_or_backoff_queue(ev.NodeAdd)
    assert q.queue_of(silent.uid) == UNSCHEDULABLE
    # Only the wildcard (or the leftover flush) reaches pods whose rejector registered nothing.
    q.move_all_to_active_or_backoff_queue(ev.WildCardEvent)
    assert q.queue_of(silent.uid) == ACTIVE
    assert {fit.uid, taint.uid, affinity.uid} <= {p.uid for p in q.pods_in_active_q()}


def test_pod_without_rejectors_moves_on_any_interesting_event(clock: FakeClock) -> None:
    q = make_queue(clock)
    qpi = to_unschedulable(q, mkpod("p"), NOEVENTS)
    qpi.unschedulable_plugins.clear()  # e.g. an error left no plugin to blame
    q._unschedulable.put(qpi)  # the pool indexes its pods by rejector when they enter
    clock.step(30)
    q.move_all_to_active_or_backoff_queue(ev.PvAdd)  # of interest to no plugin: ignored entirely
    assert q.queue_of(qpi.uid) == UNSCHEDULABLE
    q.move_all_to_active_or_backoff_queue(ev.NodeLabelChange)  # TAINT/FIT registered Node events
    assert q.queue_of(qpi.uid) == UNSCHEDULABLE  # NodeLabelChange matches nothing registered
    q.move_all_to_active_or_backoff_queue(ev.AssignedPodDelete)
    assert q.queue_of(qpi.uid) == ACTIVE


def test_moved_pods_respect_backoff_and_pending_goes_straight_to_active(clock: FakeClock) -> None:
    q = make_queue(clock)
    backing = to_unschedulable(q, mkpod("backing"), FIT)
    pending = to_unschedulable(q, mkpod("pending"), pending=(FIT,))
    q.move_all_to_active_or_backoff_queue(ev.NodeAdd)
    assert q.queue_of(backing.uid) == BACKOFF
    assert q.queue_of(pending.uid) == ACTIVE
    clock.step(1)
    q.flush_backoff_q_completed()
    assert q.queue_of(backing.uid) == ACTIVE


def test_precheck_filters_pods(clock: FakeClock) -> None:
    q = make_queue(clock)
    a = to_unschedulable(q, mkpod("a"), FIT)
    b = to_unschedulable(q, mkpod("b"), FIT)
    clock.step(30)
    q.move_all_to_active_or_backoff_queue(ev.NodeAdd, None, "node", precheck=lambda p: p.name == "b")
    assert q.queue_of(a.uid) == UNSCHEDULABLE and q.queue_of(b.uid) == ACTIVE


def test_per_profile_event_map(clock: FakeClock) -> None:
    q = make_queue(
        clock,
        cluster_event_map=None,
        cluster_event_map_per_profile={"default-scheduler": {ev.NodeAdd: {FIT}}, "other": {ev.NodeAdd: {TAINT}}},
    )
    mine = to_unschedulable(q, mkpod("mine"), FIT)
    other = to_unschedulable(q, mkpod("other", scheduler="other"), FIT)
    unknown = to_unschedulable(q, mkpod("unknown", scheduler="nobody"), FIT)
    clock.step(30)
    q.move_all_to_active_or_backoff_queue(ev.NodeAdd)
    assert q.queue_of(mine.uid) == ACTIVE
    assert q.queue_of(other.uid) == UNSCHEDULABLE  # FIT is not interested in "other"
    assert q.queue_of(unknown.uid) == ACTIVE  # no map for the profile: move it anyway


# -- assigned pods and affinity -------------------------------------------------------------------
def affinity_pod(name: str, term: Mapping[str, Any], namespace: str = "default") -> Pod:
    return mkpod(
        name,
        namespace=namespace,
        spec={
            "affinity": {
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone", **term}]}
            }
        },
    )


def test_assigned_pod_added_moves_pods_with_matching_affinity(clock: FakeClock) -> None:
    q = make_queue(clock, namespace_labels=lambda ns: {"team": "a"} if ns == "team-a" else {})
    same_ns = to_unschedulable(q, affinity_pod("same-ns", {"labelSelector": {"matchLabels": {"app": "db"}}}), AFFINITY)
    listed = to_unschedulable(
        q, affinity_pod("listed", {"labelSelector": {"matchLabels": {"app": "db"}}, "namespaces": ["team-a"]}), AFFINITY
    )
    by_ns_label = to_unschedulable(
        q,
        affinity_pod(
            "by-ns-label",
            {"labelSelector": {"matchLabels": {"app": "db"}}, "namespaceSelector": {"matchLabels": {"team": "a"}}},
        ),
        AFFINITY,
    )
    other_app = to_unschedulable(
        q, affinity_pod("other-app", {"labelSelector": {"matchLabels": {"app": "x"}}}), AFFINITY
    )
    no_affinity = to_unschedulable(q, mkpod("plain"), AFFINITY)
    clock.step(30)
    q.assigned_pod_added(mkpod("db", namespace="team-a", labels={"app": "db"}, node_name="n1"))
    moved = {p.name for p in q.pods_in_active_q()}
    assert moved == {"listed", "by-ns-label"}
    q.assigned_pod_updated(
        mkpod("db2", labels={"app": "dbx"}, node_name="n1"), mkpod("db2", labels={"app": "db"}, node_name="n1")
    )
    assert q.queue_of(same_ns.uid) == ACTIVE
    assert q.queue_of(other_app.uid) == UNSCHEDULABLE and q.queue_of(no_affinity.uid) == UNSCHEDULABLE
    assert q.queue_of(listed.uid) == ACTIVE and q.queue_of(by_ns_label.uid) == ACTIVE


def test_assigned_pod_added_custom_matcher_and_interest(clock: FakeClock) -> None:
    calls: list[tuple[str, str]] = []

    def matcher(pending: Pod, assigned: Pod) -> bool:
        calls.append((pending.name, assigned.name))
        return True

    q = make_queue(clock, affinity_matcher=matcher, cluster_event_map={ev.NodeAdd: {FIT}})
    pod = to_unschedulable(q, mkpod("p"), FIT)
    q.assigned_pod_added(mkpod("a", node_name="n1"))  # no plugin registered Pod events: skipped
    assert calls == [] and q.queue_of(pod.uid) == UNSCHEDULABLE
    q = make_queue(clock, affinity_matcher=matcher)
    pod = to_unschedulable(q, mkpod("p"), AFFINITY)
    clock.step(30)
    q.assigned_pod_added(mkpod("a", node_name="n1"))
    assert calls == [("p", "a")] and q.queue_of(pod.uid) == ACTIVE


def test_assigned_pod_resized_down_moves_all_when_enabled(clock: FakeClock) -> None:
    old = mkpod("bound", node_name="n1")
    resized = modified(old, status__resize="InProgress")
    for enabled, want in [(False, UNSCHEDULABLE), (True, ACTIVE)]:
        q = make_queue(clock, in_place_pod_vertical_scaling=enabled)
        pod = to_unschedulable(q, mkpod("p"), AFFINITY)  # no affinity terms: only a move-all helps
        fit = to_unschedulable(q, mkpod("fit"), FIT)  # FIT did not register Pod updates
        clock.step(30)
        q.assigned_pod_updated(old, resized)
        assert q.queue_of(pod.uid) == want
        assert q.queue_of(fit.uid) == UNSCHEDULABLE


# -- leftover flush -------------------------------------------------------------------------------
def test_flush_unschedulable_pods_leftover(clock: FakeClock) -> None:
    q = make_queue(clock)
    old = to_unschedulable(q, mkpod("old"), NOEVENTS)
    clock.step(60)
    young = to_unschedulable(q, mkpod("young"), NOEVENTS)
    assert q.next_unschedulable_timeout() == T0 + timedelta(minutes=5)
    clock.now = T0 + timedelta(minutes=5)
    q.flush_unschedulable_pods_leftover()  # exactly 5 minutes is not "longer than"
    assert q.queue_of(old.uid) == UNSCHEDULABLE
    clock.step(1)
    q.flush_unschedulable_pods_leftover()
    assert q.queue_of(old.uid) == ACTIVE and q.queue_of(young.uid) == UNSCHEDULABLE
    assert q.next_unschedulable_timeout() == T0 + timedelta(minutes=6)


def test_leftover_flush_goes_to_backoff_when_backing_off(clock: FakeClock) -> None:
    q = make_queue(
        clock,
        pod_max_in_unschedulable_duration=timedelta(seconds=1),
        pod_initial_backoff=timedelta(seconds=10),
        pod_max_backoff=timedelta(seconds=10),
    )
    pod = to_unschedulable(q, mkpod("p"), NOEVENTS)
    clock.step(2)
    q.flush_unschedulable_pods_leftover()
    assert q.queue_of(pod.uid) == BACKOFF


# -- update and delete in every sub-queue ---------------------------------------------------------
def test_update_in_active_and_backoff_is_in_place(clock: FakeClock) -> None:
    q = make_queue(clock)
    a, b = mkpod("a", priority=2), mkpod("b", priority=1)
    q.add(a)
    q.add(b)
    fail(q, pop(q))  # a -> backoffQ
    a2, b2 = modified(a, metadata__labels={"v": "2"}), modified(b, metadata__labels={"v": "2"})
    q.update(a, a2)
    q.update(b, b2)
    info_a, info_b = q.get_pod(a.uid), q.get_pod(b.uid)
    assert info_a is not None and info_a.pod is a2 and q.queue_of(a.uid) == BACKOFF
    assert info_a.attempts == 1
    assert info_b is not None and info_b.pod is b2 and q.queue_of(b.uid) == ACTIVE


@pytest.mark.parametrize(("wait", "want"), [(0, BACKOFF), (5, ACTIVE)])
def test_update_in_unschedulable(clock: FakeClock, wait: int, want: str) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    qpi = to_unschedulable(q, pod, FIT)
    clock.step(wait)
    # Status and bookkeeping changes do not count.
    same = modified(
        pod,
        metadata__resourceVersion="9",
        metadata__generation=3,
        metadata__finalizers=["x"],
        status__conditions=[{"type": "PodScheduled"}],
    )
    q.update(pod, same)
    assert q.queue_of(pod.uid) == UNSCHEDULABLE and qpi.pod is same
    changed = modified(same, metadata__labels={"new": "label"})
    q.update(same, changed)
    assert q.queue_of(pod.uid) == want
    info = q.get_pod(pod.uid)
    assert info is qpi and info.pod is changed


def test_update_unknown_pod_adds_it(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p", nominated="n1")
    q.update(None, pod)
    assert q.queue_of(pod.uid) == ACTIVE
    assert q.nominated_pods_for_node("n1") == [pod]


@pytest.mark.parametrize("where", [ACTIVE, BACKOFF, UNSCHEDULABLE, GATED])
def test_delete_from_every_sub_queue(clock: FakeClock, where: str) -> None:
    q = make_queue(clock, pre_enqueue={"default-scheduler": [SchedulingGates()]})
    pod = mkpod("p", nominated="n1", gates=["g"] if where == GATED else ())
    q.add(pod)
    if where == BACKOFF:
        fail(q, pop(q))
    elif where == UNSCHEDULABLE:
        fail(q, pop(q), FIT)
    assert q.queue_of(pod.uid) == where
    if where != GATED:
        assert q.nominated_pods_for_node("n1") == [pod]
    q.delete(pod)
    assert q.queue_of(pod.uid) is None and q.get_pod(pod.uid) is None
    assert q.nominated_pods_for_node("n1") == []
    assert sum(q.pending_pods().values()) == 0


# -- activate -------------------------------------------------------------------------------------
def test_activate(clock: FakeClock) -> None:
    q = make_queue(clock)
    u = to_unschedulable(q, mkpod("u"), FIT)
    q.add(mkpod("b"))
    b = pop(q)
    fail(q, b)
    q.add(mkpod("a"))
    q.activate({"x": u.pod, "y": b.pod, "z": mkpod("unknown")})
    q.activate([mkpod("a")])  # already active: nothing
    assert q.pending_pods() == {ACTIVE: 3, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}


# -- nominations through the queue ----------------------------------------------------------------
def test_queue_keeps_nominations(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p", nominated="n1")
    q.add(pod)
    assert q.nominated_pods_for_node("n1") == [pod]
    qpi = pop(q)
    fail(q, qpi, FIT)
    assert q.nominated_pods_for_node("n1") == [pod]
    q.add_nominated_pod(pod, "n2")
    assert q.nominated_pods_for_node("n2") == [pod] and q.nominated_pods_for_node("n1") == []
    # The API object drops its nomination: so does the queue.
    cleared = modified(pod, status__nominatedNodeName=None)
    q.update(pod, cleared)
    assert q.nominator.nominated_node_names() == []
    # An in-memory nomination survives an update that carries no nomination either way.
    q.add_nominated_pod(cleared, "n2")
    newer = modified(cleared, metadata__labels={"x": "1"})
    q.update(cleared, newer)
    assert q.nominated_pods_for_node("n2") == [newer]
    q.update_nominated_pod(newer, modified(newer, status__nominatedNodeName="n3"))
    assert [p.name for p in q.nominated_pods_for_node("n3")] == ["p"]
    q.delete_nominated_pod_if_exists(pod)
    assert q.nominator.nominated_node_names() == []


# -- counts and metrics ---------------------------------------------------------------------------
class Recorder:
    def __init__(self) -> None:
        self.counts: list[dict[str, int]] = []
        self.incoming: list[tuple[str, str]] = []

    def pending_pods_changed(self, counts: Mapping[str, int]) -> None:
        self.counts.append(dict(counts))

    def incoming_pod(self, queue: str, event: str) -> None:
        self.incoming.append((queue, event))


def test_pending_pods_and_metrics(clock: FakeClock) -> None:
    rec = Recorder()
    q = make_queue(clock, metrics=rec, pre_enqueue={"default-scheduler": [SchedulingGates()]})
    assert q.pending_pods() == {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, GATED: 0}
    q.add(mkpod("a"))
    q.add(mkpod("b"))
    q.add(mkpod("c"))
    q.add(mkpod("g", gates=["x"]))
    fail(q, pop(q), FIT)
    fail(q, pop(q))
    assert q.pending_pods() == {ACTIVE: 1, BACKOFF: 1, UNSCHEDULABLE: 1, GATED: 1}
    assert rec.counts[-1] == q.pending_pods()
    assert len(q.pending_pod_list()) == 4
    assert rec.incoming == [(ACTIVE, ev.POD_ADD)] * 3 + [
        (UNSCHEDULABLE, ev.SCHEDULE_ATTEMPT_FAILURE),
        (BACKOFF, ev.SCHEDULE_ATTEMPT_FAILURE),
    ]
    n = len(rec.counts)
    q.move_all_to_active_or_backoff_queue(ev.PvAdd)  # no change: no callback
    assert len(rec.counts) == n


# -- threads --------------------------------------------------------------------------------------
def test_blocking_pop_wakes_on_add(clock: FakeClock) -> None:
    q = make_queue(clock)
    got: list[QueuedPodInfo | None] = []
    t = threading.Thread(target=lambda: got.append(q.pop(timeout=10)))
    t.start()
    time.sleep(0.05)
    assert got == []
    q.add(mkpod("p"))
    t.join(5)
    assert not t.is_alive()
    assert got[0] is not None and got[0].pod.name == "p"


def test_close_wakes_blocked_pop(clock: FakeClock) -> None:
    q = make_queue(clock)
    results: list[QueuedPodInfo | None] = []
    threads = [threading.Thread(target=lambda: results.append(q.pop())) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    q.close()
    for t in threads:
        t.join(5)
        assert not t.is_alive()
    assert results == [None, None, None] and q.closed
    assert q.pop() is None  # closed and empty: does not block


def test_pop_timeout_and_closed_queue_still_drains(clock: FakeClock) -> None:
    q = make_queue(clock)
    assert q.pop(timeout=0.01) is None
    q.add(mkpod("p"))
    q.close()
    assert pop(q).pod.name == "p"
    assert q.pop() is None
