"""The scheduling queue as v1.34 runs it (SchedulerQueueingHints, SchedulerPopFromBackoffQ): hints,
in-flight events, per-event pod updates, gating events and v1.34's backoff. v1.30's rules are pinned
in test_scheduling_queue.py."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kubesched.api.objects import Pod
from kubesched.config.features import feature_gates
from kubesched.framework.interfaces import ActionType, ClusterEvent, QueueingHint
from kubesched.plugins.queuesort import PrioritySort
from kubesched.plugins.schedulinggates import SchedulingGates
from kubesched.queue import events as ev
from kubesched.queue.hints import QueueingHintFunction, QueueingHintMap
from kubesched.queue.queued_pod_info import QueuedPodInfo
from kubesched.queue.scheduling_queue import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE, SchedulingQueue
from tests.queue.conftest import T0, FakeClock, mkpod, modified
from tests.queue.test_scheduling_queue import Gate

FIT = "NodeResourcesFit"
TAINT = "TaintToleration"
GATES = "SchedulingGates"
A = ActionType
NODE_ADD = ClusterEvent("Node", A.ADD)
NODE_LABEL = ClusterEvent("Node", A.UPDATE_NODE_LABEL)
BIG_NODE = "big"


def _fits_big_nodes(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """Fit's stand-in: only a node named "big" helps."""
    return QueueingHint.QUEUE if getattr(new, "name", "") == BIG_NODE else QueueingHint.QUEUE_SKIP


def _own_update(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.QUEUE_SKIP


HINTS: QueueingHintMap = {
    NODE_ADD: [QueueingHintFunction(FIT, _fits_big_nodes)],
    ClusterEvent("Pod", A.DELETE): [QueueingHintFunction(FIT)],
    ClusterEvent("Pod", A.UPDATE_POD_TOLERATION): [QueueingHintFunction(TAINT, _own_update)],
    ClusterEvent("Pod", A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED): [QueueingHintFunction(GATES, _own_update)],
    NODE_LABEL: [QueueingHintFunction("Gate")],
}


def make_queue(clock: FakeClock, *, pop_from_backoff: bool = True, **kw: Any) -> SchedulingQueue:
    sort = PrioritySort()
    kw.setdefault("queueing_hint_map_per_profile", {"default-scheduler": HINTS})
    gates = None if pop_from_backoff else {"SchedulerPopFromBackoffQ": False}
    return SchedulingQueue(sort.less, sort_key=sort.sort_key, clock=clock, features=feature_gates("1.34", gates), **kw)


class Node:
    def __init__(self, name: str) -> None:
        self.name = name


def pop(q: SchedulingQueue) -> QueuedPodInfo:
    qpi = q.pop(block=False)
    assert qpi is not None
    return qpi


def fail(q: SchedulingQueue, qpi: QueuedPodInfo, *plugins: str, pending: tuple[str, ...] = ()) -> None:
    qpi.unschedulable_plugins.update(plugins)
    qpi.pending_plugins.update(pending)
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)


def rejected(q: SchedulingQueue, pod: Pod, *plugins: str) -> QueuedPodInfo:
    q.add(pod)
    qpi = pop(q)
    fail(q, qpi, *plugins)
    return qpi


# -- hints on cluster events ------------------------------------------------------------------------
def test_an_event_moves_a_pod_only_when_its_rejector_says_it_may_help(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    rejected(q, pod, FIT)
    assert q.queue_of(pod.uid) == UNSCHEDULABLE
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node("small"))
    assert q.queue_of(pod.uid) == UNSCHEDULABLE
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, None, Node(BIG_NODE))  # registered by another plugin
    assert q.queue_of(pod.uid) == UNSCHEDULABLE
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node(BIG_NODE))
    assert q.queue_of(pod.uid) == BACKOFF  # after its backoff


def test_an_event_for_a_pending_plugin_skips_the_backoff(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    fail(q, pop(q), pending=(FIT,))
    q.move_all_to_active_or_backoff_queue(ev.EventAssignedPodDelete, mkpod("gone"), None)
    assert q.queue_of(pod.uid) == ACTIVE


# -- in-flight events -------------------------------------------------------------------------------
def test_events_during_an_attempt_decide_where_the_failed_pod_goes(clock: FakeClock) -> None:
    q = make_queue(clock)
    helped, unhelped = mkpod("helped"), mkpod("unhelped")
    q.add(helped)
    attempt = pop(q)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node(BIG_NODE))  # while it is being scheduled
    assert q.in_flight_event_count() == 1
    fail(q, attempt, FIT)
    assert q.queue_of(helped.uid) == BACKOFF
    assert q.in_flight_event_count() == 0  # no pod in flight needs it any more
    q.add(unhelped)
    attempt = pop(q)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node("small"))
    fail(q, attempt, FIT)
    assert q.queue_of(unhelped.uid) == UNSCHEDULABLE


def test_events_before_the_pop_do_not_count_and_unrelated_events_are_not_kept(clock: FakeClock) -> None:
    q = make_queue(clock)
    first, second = mkpod("first"), mkpod("second")
    q.add(first)
    q.add(second)
    a = pop(q)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node(BIG_NODE))
    q.move_all_to_active_or_backoff_queue(ClusterEvent("Node", A.DELETE), Node("x"), None)  # no one registered it
    assert q.in_flight_event_count() == 1
    b = pop(q)  # popped after the node was added
    fail(q, b, FIT)
    assert q.queue_of(second.uid) == UNSCHEDULABLE
    fail(q, a, FIT)
    assert q.queue_of(first.uid) == BACKOFF


def test_an_update_of_a_pod_being_scheduled_is_only_noted(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    attempt = pop(q)
    tolerating = modified(pod, spec__tolerations=[{"operator": "Exists"}])
    q.update(pod, tolerating)
    assert q.queue_of(pod.uid) is None  # no second copy in activeQ
    attempt.pod = tolerating
    fail(q, attempt, TAINT)
    assert q.queue_of(pod.uid) == BACKOFF


def test_activating_a_pod_being_scheduled_requeues_it_when_it_fails(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    attempt = pop(q)
    q.activate([pod])  # e.g. a preemption finishing while the pod is in its cycle
    fail(q, attempt, FIT)
    assert q.queue_of(pod.uid) == BACKOFF
    other = mkpod("other")
    q.add(other)
    attempt = pop(q)
    q.activate([pod])  # aimed at another pod: nothing for this one
    fail(q, attempt, FIT)
    assert q.queue_of(other.uid) == UNSCHEDULABLE


def test_done_after_permit_ends_what_events_can_do(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    q.add(pod)
    attempt = pop(q)
    q.done(pod.uid)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node(BIG_NODE))
    assert q.in_flight() == [] and q.in_flight_event_count() == 0
    assert attempt.attempts == 1


# -- updates of waiting pods ------------------------------------------------------------------------
def test_an_update_moves_a_waiting_pod_only_through_its_rejectors_hints(clock: FakeClock) -> None:
    q = make_queue(clock)
    pod = mkpod("p")
    rejected(q, pod, TAINT)
    relabelled = modified(pod, metadata__labels={"x": "y"}, metadata__resourceVersion="2")
    q.update(pod, relabelled)
    assert q.queue_of(pod.uid) == UNSCHEDULABLE  # v1.30 would retry on any spec or label change
    assert q.get_pod(pod.uid).pod is relabelled  # type: ignore[union-attr]
    tolerating = modified(relabelled, spec__tolerations=[{"operator": "Exists"}])
    q.update(relabelled, tolerating)
    assert q.queue_of(pod.uid) == BACKOFF


def test_gates_lifted_by_the_update_their_plugin_registered(clock: FakeClock) -> None:
    q = make_queue(clock, pre_enqueue={"default-scheduler": [SchedulingGates()]})
    gated = mkpod("g", gates=["a", "b"])
    q.add(gated)
    assert q.queue_of(gated.uid) == GATED
    info = q.get_pod(gated.uid)
    assert info is not None and info.gating_plugin_events == (
        ClusterEvent("Pod", A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
    )
    q.move_all_to_active_or_backoff_queue(ev.UnschedulableTimeout)  # wildcards never reach gated pods
    clock.step(minutes=10)
    q.flush_unschedulable_pods_leftover()
    assert q.queue_of(gated.uid) == GATED
    one_left = modified(gated, spec__schedulingGates=[{"name": "b"}])
    q.update(gated, one_left)
    assert q.queue_of(gated.uid) == GATED
    q.update(one_left, modified(one_left, spec__schedulingGates=None))
    assert q.queue_of(gated.uid) == ACTIVE


def test_a_gated_pod_hears_only_its_gating_plugins_events(clock: FakeClock) -> None:
    gate = Gate("Gate")
    q = make_queue(clock, pre_enqueue={"default-scheduler": [gate]})
    pod = mkpod("p")
    q.add(pod)
    gate.closed = False
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node(BIG_NODE))  # Gate did not register it
    assert q.queue_of(pod.uid) == GATED
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, None, Node("n"))
    assert q.queue_of(pod.uid) == ACTIVE


# -- backoff --------------------------------------------------------------------------------------
def test_the_backoff_counts_rejections_and_errors_apart(clock: FakeClock) -> None:
    q = make_queue(clock, pod_initial_backoff=timedelta(seconds=1), pod_max_backoff=timedelta(seconds=8))
    pod = mkpod("p")
    q.add(pod)
    for _ in range(3):
        qpi = pop(q)
        fail(q, qpi, FIT)
        q.move_all_to_active_or_backoff_queue(ev.UnschedulableTimeout)
        clock.step(60)
        q.flush_backoff_q_completed()
    qpi = pop(q)
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count) == (3, 0)
    fail(q, qpi)  # an error: no plugin to blame
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count) == (3, 1)
    assert q.backoff_duration(qpi) == timedelta(seconds=1)  # the error count rules while errors last
    assert q.queue_of(pod.uid) == BACKOFF


def test_backoffs_end_on_whole_seconds(clock: FakeClock) -> None:
    q = make_queue(clock)
    clock.step(0.4)
    pod = mkpod("p")
    rejected(q, pod, FIT)
    q.move_all_to_active_or_backoff_queue(ev.UnschedulableTimeout)
    # Failed at 0.4 s with a 1 s backoff: due at 1.4, aligned down to 1 s, released once 2 s has begun.
    assert q.backoff_expiries() == [T0 + timedelta(seconds=2)]
    clock.step(1.5)  # 1.9 s
    q.flush_backoff_q_completed()
    assert q.queue_of(pod.uid) == BACKOFF
    clock.step(0.1)
    q.flush_backoff_q_completed()
    assert q.queue_of(pod.uid) == ACTIVE


def test_without_pop_from_backoffq_backoffs_are_exact(clock: FakeClock) -> None:
    q = make_queue(clock, pop_from_backoff=False)
    clock.step(0.4)
    pod = mkpod("p")
    rejected(q, pod, FIT)
    q.move_all_to_active_or_backoff_queue(ev.UnschedulableTimeout)
    clock.step(1.0)  # exactly at the end: still backing off (v1.34 releases strictly after)
    q.flush_backoff_q_completed()
    assert q.queue_of(pod.uid) == BACKOFF
    assert q.pop(block=False) is None  # activeQ empty, but backoffQ is not popped without the gate
    clock.step(0.001)
    q.flush_backoff_q_completed()
    assert q.queue_of(pod.uid) == ACTIVE


def test_an_empty_activeq_takes_the_head_of_backoffq_but_not_errors(clock: FakeClock) -> None:
    q = make_queue(clock)
    low, high, broken = mkpod("low", priority=1), mkpod("high", priority=9), mkpod("broken", priority=99)
    for pod in (low, high):
        rejected(q, pod, FIT)
    q.move_all_to_active_or_backoff_queue(ev.UnschedulableTimeout)
    q.add(broken)
    fail(q, pop(q))
    assert q.pending_pods() == {ACTIVE: 0, BACKOFF: 3, UNSCHEDULABLE: 0, GATED: 0}
    assert q.poppable()
    # Same backoff window: the higher priority first; the errored pod waits out its backoff.
    assert [pop(q).pod.name, pop(q).pod.name] == ["high", "low"]
    assert q.pop(block=False) is None and q.queue_of(broken.uid) == BACKOFF


def test_pre_enqueue_runs_when_a_pod_enters_backoffq(clock: FakeClock) -> None:
    gate = Gate("Gate")
    gate.closed = False
    q = make_queue(clock, pre_enqueue={"default-scheduler": [gate]})
    pod = mkpod("p")
    rejected(q, pod, FIT)
    gate.closed = True
    q.move_all_to_active_or_backoff_queue(ev.UnschedulableTimeout)
    assert q.queue_of(pod.uid) == GATED
    gate.closed = False
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, None, Node("n"))  # the gate's event
    assert q.queue_of(pod.uid) in (ACTIVE, BACKOFF)


def test_the_gating_plugin_is_asked_first_again(clock: FakeClock) -> None:
    first, second = Gate("First"), Gate("Second")
    first.closed = False
    q = make_queue(
        clock,
        pre_enqueue={"default-scheduler": [first, second]},
        queueing_hint_map_per_profile={"default-scheduler": {NODE_LABEL: [QueueingHintFunction("Second")]}},
    )
    pod = mkpod("p")
    q.add(pod)
    assert q.get_pod(pod.uid).gating_plugin == "Second"  # type: ignore[union-attr]
    first.closed = True
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, None, Node("n"))  # re-runs PreEnqueue
    # Still refused by the plugin that gated it, asked first: the first plugin, closed now too, is not.
    assert q.get_pod(pod.uid).gating_plugin == "Second"  # type: ignore[union-attr]
    second.closed = False
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, None, Node("n"))
    assert q.get_pod(pod.uid).gating_plugin == "First"  # type: ignore[union-attr]


def test_v130_with_the_gate_set_runs_the_hint_driven_queue_with_v130s_backoff(clock: FakeClock) -> None:
    """SchedulerQueueingHints=true at 1.30: hints and in-flight events as v1.34, backoff as v1.30
    (SchedulerPopFromBackoffQ does not exist there)."""
    sort = PrioritySort()
    q = SchedulingQueue(
        sort.less,
        sort_key=sort.sort_key,
        clock=clock,
        features=feature_gates("1.30", {"SchedulerQueueingHints": True}),
        queueing_hint_map_per_profile={"default-scheduler": HINTS},
    )
    assert q.hints_enabled
    pod = mkpod("p")
    rejected(q, pod, FIT)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node("small"))
    assert q.queue_of(pod.uid) == UNSCHEDULABLE
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node(BIG_NODE))
    assert q.queue_of(pod.uid) == BACKOFF
    assert q.pop(block=False) is None
    assert q.backoff_expiries() == [T0 + timedelta(seconds=1)]  # exact, from the pop count


class HoldingGate(Gate):
    """A gate that says when its hint would keep a pod gated (GateHoldingPreEnqueuePlugin)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.holds = True
        self.asked = 0

    def gate_holds_through(self, pod: Pod, event: ClusterEvent) -> bool:
        return self.holds and event == NODE_LABEL

    def hint(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        self.asked += 1
        return QueueingHint.QUEUE_SKIP


def test_the_queue_skips_the_hint_of_a_gate_that_holds_through_the_event(clock: FakeClock) -> None:
    gate = HoldingGate("Gate")
    hints = {NODE_LABEL: [QueueingHintFunction("Gate", gate.hint)], NODE_ADD: [QueueingHintFunction("Gate")]}
    q = make_queue(
        clock, pre_enqueue={"default-scheduler": [gate]}, queueing_hint_map_per_profile={"default-scheduler": hints}
    )
    pods = [mkpod(f"p{i}") for i in range(3)]
    for pod in pods:
        q.add(pod)
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, None, Node("n"))
    assert gate.asked == 0 and {q.queue_of(p.uid) for p in pods} == {GATED}
    gate.holds = False  # the plugin no longer vouches: its hint decides, as without the capability
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, None, Node("n"))
    assert gate.asked == 3 and {q.queue_of(p.uid) for p in pods} == {GATED}
    gate.holds, gate.closed = True, False
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, Node("n"))  # an event it does not hold through
    assert {q.queue_of(p.uid) for p in pods} == {ACTIVE}
