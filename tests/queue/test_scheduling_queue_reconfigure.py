"""SchedulingQueue.reconfigure: new profiles take over the queue (a configuration reload) and every pod
stays queued, re-sorted, re-gated and backing off as the new configuration says."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kubesched.plugins.queuesort import PrioritySort
from kubesched.queue import events as ev
from kubesched.queue.queued_pod_info import QueuedPodInfo
from kubesched.queue.scheduling_queue import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE, SchedulingQueue
from tests.queue.conftest import FakeClock, mkpod
from tests.queue.test_scheduling_queue import EVENT_MAP, FIT, Gate, Recorder, fail, make_queue, pop, to_unschedulable

PROFILE = "default-scheduler"


def lowest_priority_first(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    return a.pod.priority < b.pod.priority


def reconfigure(q: SchedulingQueue, **changes: Any) -> None:
    """The queue as the default configuration sets it, with ``changes``."""
    sort = PrioritySort()
    settings: dict[str, Any] = {
        "less": sort.less,
        "sort_key": sort.sort_key,
        "pod_initial_backoff": timedelta(seconds=1),
        "pod_max_backoff": timedelta(seconds=10),
        "pre_enqueue": {},
        "cluster_event_map_per_profile": {PROFILE: EVENT_MAP},
        **changes,
    }
    less = settings.pop("less")
    q.reconfigure(less, **settings)


def test_active_pods_are_sorted_by_the_new_queue_sort(clock: FakeClock) -> None:
    q = make_queue(clock)
    for name, priority in (("low", 1), ("high", 9), ("mid", 5)):
        q.add(mkpod(name, priority=priority))
    assert [p.name for p in q.pods_in_active_q()] == ["high", "mid", "low"]
    reconfigure(q, less=lowest_priority_first, sort_key=None)
    assert [pop(q).pod.name for _ in range(3)] == ["low", "mid", "high"]


def test_backoff_follows_the_new_durations(clock: FakeClock) -> None:
    q = make_queue(clock)
    q.add(mkpod("p"))
    fail(q, pop(q))  # no rejector: straight to backoffQ, 1 s
    assert q.queue_of("uid-default-p") == BACKOFF
    reconfigure(q, pod_initial_backoff=timedelta(seconds=5), pod_max_backoff=timedelta(seconds=20))
    clock.step(2)
    q.flush_backoff_q_completed()
    assert q.queue_of("uid-default-p") == BACKOFF
    clock.step(3)
    q.flush_backoff_q_completed()
    assert q.queue_of("uid-default-p") == ACTIVE


def test_unschedulable_pods_move_as_on_a_wildcard_event(clock: FakeClock) -> None:
    rec = Recorder()
    q = make_queue(clock, metrics=rec)
    waited = to_unschedulable(q, mkpod("waited"), FIT)
    fresh = to_unschedulable(q, mkpod("fresh"), FIT)
    fresh.attempts += 1  # a second failure: 2 s of backoff against waited's 1 s
    clock.step(1.5)
    assert q.pending_pods()[UNSCHEDULABLE] == 2
    reconfigure(q)
    assert (q.queue_of(waited.pod.uid), q.queue_of(fresh.pod.uid)) == (ACTIVE, BACKOFF)
    assert sorted(rec.incoming[-2:]) == [(ACTIVE, ev.ConfigReload.label), (BACKOFF, ev.ConfigReload.label)]


def test_gates_are_those_of_the_new_profiles(clock: FakeClock) -> None:
    old_gate, new_gate = Gate("Old"), Gate("New")
    q = make_queue(clock, pre_enqueue={PROFILE: [old_gate]})
    held = mkpod("held")
    q.add(held)
    assert q.queue_of(held.uid) == GATED
    old_gate.closed = False
    q.add(free := mkpod("free"))
    assert q.queue_of(free.uid) == ACTIVE
    reconfigure(q, pre_enqueue={PROFILE: [new_gate]})
    # The pod the old gate held is judged by the new one: held still, as is the pod that was active.
    assert (q.queue_of(held.uid), q.queue_of(free.uid)) == (GATED, GATED)
    assert q.get_pod(free.uid).gating_plugin == "New"  # type: ignore[union-attr]
    reconfigure(q)  # no PreEnqueue plugin at all: both are free
    assert (q.queue_of(held.uid), q.queue_of(free.uid)) == (ACTIVE, ACTIVE)


def test_a_pod_in_flight_during_the_reload_comes_back_through_backoff(clock: FakeClock) -> None:
    q = make_queue(clock)
    q.add(mkpod("p"))
    qpi = pop(q)
    cycle = q.scheduling_cycle
    reconfigure(q)
    fail(q, qpi, FIT, cycle=cycle)  # rejected under the old profile: the new one tries again after backoff
    assert q.queue_of(qpi.pod.uid) == BACKOFF
