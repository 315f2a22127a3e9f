"""The elector (kubesched.live.leaderelection.elector), as client-go's leaderelection package.

Two electors share one embedded cluster and one virtual clock; API failures come from a wrapper
cluster, so every timing below is exact: acquire at once, renew every retry period, give up
``renew_deadline`` after a failed round starts, take over ``lease_duration`` after last seeing a change.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.cluster.protocol import ApiError, Conflict
from kubesched.config.types import LeaderElectionConfig
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.live.leaderelection import (
    LeaderElectionRecord,
    LeaderElector,
    default_identity,
)
from kubesched.metrics import SchedulerMetrics
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import Harness

NS, NAME = "kube-system", "kube-scheduler"


class FlakyCluster:
    """The embedded cluster, except that Lease calls fail while ``failing`` is set (an API outage as
    one replica sees it: the other replica still reaches the server)."""

    def __init__(self, inner: EmbeddedCluster) -> None:
        self.inner = inner
        self.failing = False
        self.calls = 0

    def _guard(self, kind: str) -> None:
        if kind == "Lease":
            self.calls += 1
            if self.failing:
                raise ApiError("etcdserver: request timed out", code=500, reason="InternalError")

    def get(self, kind: str, namespace: str | None, name: str) -> dict:
        self._guard(kind)
        return self.inner.get(kind, namespace, name)

    def create(self, obj: dict) -> dict:
        self._guard(obj.get("kind", ""))
        return self.inner.create(obj)

    def update(self, obj: dict) -> dict:
        self._guard(obj.get("kind", ""))
        return self.inner.update(obj)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Log:
    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []

    def callbacks(self, who: str) -> dict[str, Any]:
        return {
            "on_started_leading": lambda: self.entries.append((who, "started")),
            "on_stopped_leading": lambda: self.entries.append((who, "stopped")),
        }


def elector(cluster: Any, clock: VirtualClock, who: str, log: Log | None = None, **kw: Any) -> LeaderElector:
    return LeaderElector(cluster, clock, identity=who, jitter_factor=0.0, **(log.callbacks(who) if log else {}), **kw)


def lease(cluster: EmbeddedCluster) -> dict:
    return cluster.get("Lease", NS, NAME)


def spec(cluster: EmbeddedCluster) -> dict:
    return lease(cluster)["spec"]


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def cluster(clock: VirtualClock) -> EmbeddedCluster:
    return EmbeddedCluster(clock.now)


# -- acquisition and renewal -----------------------------------------------------------------------------
def test_first_candidate_creates_the_lease_as_client_go_writes_it(
    cluster: EmbeddedCluster, clock: VirtualClock
) -> None:
    log = Log()
    a, b = elector(cluster, clock, "a", log), elector(cluster, clock, "b", log)
    a.start()
    b.start()
    assert a.is_leader() and not b.is_leader()
    assert log.entries == [("a", "started")]
    assert lease(cluster)["apiVersion"] == "coordination.k8s.io/v1"
    assert spec(cluster) == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-01-01T00:00:00.000000Z",
        "renewTime": "2024-01-01T00:00:00.000000Z",
        "leaseTransitions": 0,
    }
    assert b.get_leader() == "a"
    events = [e for e in cluster.list("Event")[0] if e["reason"] == "LeaderElection"]
    assert [(e["involvedObject"]["kind"], e["message"]) for e in events] == [("Lease", "a became leader")]


def test_leader_renews_every_retry_period_and_keeps_its_acquire_time(
    cluster: EmbeddedCluster, clock: VirtualClock
) -> None:
    a, b = elector(cluster, clock, "a"), elector(cluster, clock, "b")
    a.start()
    b.start()
    clock.advance(1.5)
    rv = lease(cluster)["metadata"]["resourceVersion"]
    clock.advance(0.5)  # t = 2 s
    assert spec(cluster)["renewTime"] == "2024-01-01T00:00:02.000000Z"
    assert lease(cluster)["metadata"]["resourceVersion"] != rv
    clock.advance(58)
    assert spec(cluster)["renewTime"] == "2024-01-01T00:01:00.000000Z"
    assert spec(cluster)["acquireTime"] == "2024-01-01T00:00:00.000000Z"
    assert spec(cluster)["leaseTransitions"] == 0
    assert a.is_leader() and not b.is_leader()


def test_a_stale_lease_is_taken_over_only_after_its_duration_as_observed(
    cluster: EmbeddedCluster, clock: VirtualClock
) -> None:
    # A lease left by a process that died: its renewTime is long past, but the elector trusts only its
    # own observation and waits a full lease duration after first seeing the record.
    cluster.create(
        {
            "kind": "Lease",
            "apiVersion": "coordination.k8s.io/v1",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {
                "holderIdentity": "gone",
                "leaseDurationSeconds": 15,
                "leaseTransitions": 4,
                "acquireTime": "2023-01-01T00:00:00.000000Z",
                "renewTime": "2023-01-01T00:00:00.000000Z",
            },
        }
    )
    log = Log()
    b = elector(cluster, clock, "b", log)
    b.start()
    assert not b.is_leader() and b.get_leader() == "gone"
    clock.advance(14.9)
    assert not b.is_leader()
    clock.advance(0.1)  # an attempt at the very moment the observed record expires: t = 15 s
    assert b.is_leader()
    assert log.entries == [("b", "started")]
    assert spec(cluster)["holderIdentity"] == "b"
    assert spec(cluster)["leaseTransitions"] == 5
    assert spec(cluster)["acquireTime"] == "2024-01-01T00:00:15.000000Z"


# -- losing the lease ------------------------------------------------------------------------------------
def test_leader_that_cannot_renew_stops_and_a_standby_takes_over(clock: VirtualClock) -> None:
    inner = EmbeddedCluster(clock.now)
    flaky = FlakyCluster(inner)
    metrics = SchedulerMetrics()
    log = Log()
    leaders: list[str] = []
    a = elector(flaky, clock, "a", log, metrics=metrics)
    b = elector(inner, clock, "b", log, on_new_leader=leaders.append)
    assert metrics.registry.get_sample_value("leader_election_master_status", {"name": NAME}) == 0
    a.start()
    b.start()
    clock.advance(10)  # last successful renewal at t = 10 s
    assert a.is_leader()
    assert metrics.registry.get_sample_value("leader_election_master_status", {"name": NAME}) == 1
    flaky.failing = True
    # The round starting at t = 12 s fails until its deadline at t = 22 s. The gate closes already at
    # t = 20 s: renew_deadline after the renewTime of the last successful write.
    clock.advance(9.9)
    assert a.is_leader()
    clock.advance(0.2)
    assert not a.is_leader() and a.leading
    assert log.entries == [("a", "started")]
    clock.advance(2)  # t = 22.1 s
    assert not a.leading and a.lost and a.done
    assert log.entries == [("a", "started"), ("a", "stopped")]
    assert metrics.registry.get_sample_value("leader_election_master_status", {"name": NAME}) == 0
    # b reads the Lease every 2 s, just before a renews it at the same instant: the last change it saw
    # was a's renewal of t = 10 s, read at t = 12 s. For b the record expires at t = 27 s, when b tries
    # once more and takes the Lease.
    clock.advance(4.8)  # t = 26.9 s
    assert not b.is_leader()
    clock.advance(0.1)  # t = 27 s
    assert b.is_leader()
    assert spec(inner)["acquireTime"] == "2024-01-01T00:00:27.000000Z"
    assert log.entries[-1] == ("b", "started")
    assert spec(inner)["holderIdentity"] == "b"
    assert spec(inner)["leaseTransitions"] == 1
    assert leaders == ["a", "b"]
    # a never comes back, even once the API answers again.
    flaky.failing = False
    calls = flaky.calls
    clock.advance(60)
    assert flaky.calls == calls and not a.is_leader()


def test_a_failed_round_retries_every_retry_period_and_recovers(clock: VirtualClock) -> None:
    inner = EmbeddedCluster(clock.now)
    flaky = FlakyCluster(inner)
    a = elector(flaky, clock, "a")
    a.start()
    clock.advance(0)  # the first renewal runs at once, on its own timer
    flaky.failing = True
    clock.advance(4.5)  # round at t = 2 s fails (fast path + slow path), retries at t = 4 s
    # t = 0: get (not found) + create, then the first renewal (fast-path update); then each failed
    # attempt is a fast-path update plus a get.
    assert flaky.calls == 2 + 1 + 2 + 2
    flaky.failing = False
    clock.advance(2)  # t = 6 s: the retry succeeds within the deadline
    assert a.is_leader() and not a.lost
    assert spec(inner)["renewTime"] == "2024-01-01T00:00:06.000000Z"


def test_a_concurrent_writer_turns_the_fast_path_into_a_read_and_is_respected(
    cluster: EmbeddedCluster, clock: VirtualClock
) -> None:
    a = elector(cluster, clock, "a")
    a.start()
    # Another writer takes the lease behind a's back (a's cached copy is now stale).
    current = lease(cluster)
    current["spec"] = {**current["spec"], "holderIdentity": "intruder"}
    cluster.update(current)
    with pytest.raises(Conflict):
        a.lock.update(LeaderElectionRecord(holder_identity="a", lease_duration_seconds=15))
    clock.advance(2)
    assert a.get_leader() == "intruder"
    assert spec(cluster)["holderIdentity"] == "intruder"
    assert not a.is_leader()


# -- release and transitions -----------------------------------------------------------------------------
def test_stop_releases_the_lease_so_a_standby_takes_over_within_seconds(
    cluster: EmbeddedCluster, clock: VirtualClock
) -> None:
    log = Log()
    a, b = elector(cluster, clock, "a", log), elector(cluster, clock, "b", log)
    a.start()
    b.start()
    clock.advance(5)
    a.stop()
    assert not a.is_leader()
    assert spec(cluster) == {
        "holderIdentity": "",
        "leaseDurationSeconds": 1,
        "acquireTime": "2024-01-01T00:00:05.000000Z",
        "renewTime": "2024-01-01T00:00:05.000000Z",
        "leaseTransitions": 0,
    }
    assert log.entries == [("a", "started"), ("a", "stopped")]
    clock.advance(1)  # an empty holderIdentity is free at once: b takes it at its next attempt (t = 6 s)
    assert b.is_leader()
    assert spec(cluster)["leaseTransitions"] == 1
    assert spec(cluster)["acquireTime"] == "2024-01-01T00:00:06.000000Z"
    a.stop()  # idempotent
    assert log.entries == [("a", "started"), ("a", "stopped"), ("b", "started")]


def test_without_release_on_cancel_the_lease_is_left_to_expire(cluster: EmbeddedCluster, clock: VirtualClock) -> None:
    a = elector(cluster, clock, "a", release_on_cancel=False)
    a.start()
    a.stop()
    assert spec(cluster)["holderIdentity"] == "a"


def test_lease_transitions_count_every_change_of_holder(cluster: EmbeddedCluster, clock: VirtualClock) -> None:
    holders = []
    for i in range(4):
        e = elector(cluster, clock, f"r{i}")
        e.start()
        clock.advance(4)
        assert e.is_leader()
        holders.append(spec(cluster)["holderIdentity"])
        e.stop()
    assert holders == ["r0", "r1", "r2", "r3"]
    assert spec(cluster)["leaseTransitions"] == 3


def test_a_standby_never_leads_and_never_stops(cluster: EmbeddedCluster, clock: VirtualClock) -> None:
    log = Log()
    a, b = elector(cluster, clock, "a", log), elector(cluster, clock, "b", log)
    a.start()
    b.start()
    clock.advance(100)
    b.stop()
    assert log.entries == [("a", "started")]
    assert spec(cluster)["holderIdentity"] == "a"


# -- health ----------------------------------------------------------------------------------------------
def test_health_check_fails_when_the_leader_has_not_renewed_for_lease_duration_plus_timeout(
    clock: VirtualClock,
) -> None:
    inner = EmbeddedCluster(clock.now)
    flaky = FlakyCluster(inner)
    a = elector(flaky, clock, "a")
    b = elector(inner, clock, "b")
    assert a.check(20) is None
    a.start()
    b.start()
    flaky.failing = True
    clock.advance(34.9)  # last observation at t = 0: 15 s + 20 s have not passed yet
    assert a.check(20) is None
    clock.advance(0.2)
    assert a.check(20) == "failed election to renew leadership on lease kube-scheduler"
    assert b.check(20) is None  # a replica that does not hold the lease is healthy


# -- configuration and records ---------------------------------------------------------------------------
def test_from_config_takes_the_lease_and_timings_from_the_configuration(
    cluster: EmbeddedCluster, clock: VirtualClock
) -> None:
    config = LeaderElectionConfig(
        lease_duration=timedelta(seconds=30),
        renew_deadline=timedelta(seconds=20),
        retry_period=timedelta(seconds=5),
        resource_name="kubesched",
        resource_namespace="schedulers",
    )
    e = LeaderElector.from_config(cluster, clock, config, identity="x", jitter_factor=0.0)
    e.start()
    assert cluster.get("Lease", "schedulers", "kubesched")["spec"]["leaseDurationSeconds"] == 30
    clock.advance(5)
    assert cluster.get("Lease", "schedulers", "kubesched")["spec"]["renewTime"] == "2024-01-01T00:00:05.000000Z"
    with pytest.raises(ValueError, match="resourceLock"):
        LeaderElector.from_config(cluster, clock, LeaderElectionConfig(resource_lock="endpoints"))


@pytest.mark.parametrize(
    ("durations", "message"),
    [
        ((10, 10, 2), "leaseDuration must be greater than renewDeadline"),
        ((15, 2, 2), "renewDeadline must be greater than retryPeriod"),
        ((15, 10, 0), "must be positive"),
    ],
)
def test_invalid_timings_are_refused(
    cluster: EmbeddedCluster, clock: VirtualClock, durations: tuple[float, float, float], message: str
) -> None:
    lease_duration, renew_deadline, retry_period = durations
    with pytest.raises(ValueError, match=message):
        LeaderElector(
            cluster, clock, lease_duration=lease_duration, renew_deadline=renew_deadline, retry_period=retry_period
        )


def test_retries_after_errors_are_jittered_between_one_and_two_point_two_retry_periods(clock: VirtualClock) -> None:
    import random

    flaky = FlakyCluster(EmbeddedCluster(clock.now))
    flaky.failing = True
    e = LeaderElector(flaky, clock, identity="e", rng=random.Random(1))
    e.start()
    fired = []
    start = clock.now()
    for _ in range(20):
        due = clock.next_timer()
        assert due is not None
        fired.append((due - start).total_seconds())
        clock.advance_to(due)
        start = due
    assert all(2.0 <= gap < 4.4 for gap in fired)
    assert len({round(g, 3) for g in fired}) > 10


def test_while_a_live_holder_leads_a_standby_polls_every_retry_period_without_jitter(
    cluster: EmbeddedCluster, clock: VirtualClock
) -> None:
    import random

    cluster.create(
        {
            "kind": "Lease",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {"holderIdentity": "other", "leaseDurationSeconds": 3600},
        }
    )
    e = LeaderElector(cluster, clock, identity="e", rng=random.Random(1))
    e.start()
    gaps = []
    start = clock.now()
    for _ in range(10):
        due = clock.next_timer()
        assert due is not None
        gaps.append((due - start).total_seconds())
        clock.advance_to(due)
        start = due
    assert gaps == [2.0] * 10


@pytest.mark.parametrize("killed_at", [0.01, 0.5, 1.0, 1.3, 1.99])
def test_a_standby_takes_over_within_lease_duration_plus_retry_period_of_the_leaders_death(
    clock: VirtualClock, killed_at: float
) -> None:
    # Jitter on, as in production: the bound holds whatever the phases of the two replicas.
    import random

    inner = EmbeddedCluster(clock.now)
    flaky = FlakyCluster(inner)
    a = LeaderElector(flaky, clock, identity="a", rng=random.Random(7))
    a.start()
    clock.advance(0.7)
    b = LeaderElector(inner, clock, identity="b", rng=random.Random(3))
    b.start()
    clock.advance(20 + killed_at)  # a renews every 2 s from t = 0
    flaky.failing = True  # a dies: it writes nothing more
    died = clock.now()
    while not b.is_leader():
        due = clock.next_timer()
        assert due is not None
        clock.advance_to(due)
    took = (clock.now() - died).total_seconds()
    assert took <= b.lease_duration + b.retry_period
    assert took >= b.lease_duration - b.retry_period


def test_a_leader_that_lost_the_lease_does_not_blank_the_new_holders_record(clock: VirtualClock) -> None:
    inner = EmbeddedCluster(clock.now)
    flaky = FlakyCluster(inner)
    a = elector(flaky, clock, "a")
    b = elector(inner, clock, "b")
    a.start()
    b.start()
    flaky.failing = True
    clock.advance(40)  # a lost the lease at its renew deadline, b took over after the lease duration
    assert a.lost and b.is_leader()
    flaky.failing = False
    a._release()  # as at a late stop: the Lease now names b
    assert spec(inner)["holderIdentity"] == "b"
    assert b.is_leader()


def test_default_identity_is_hostname_underscore_uuid() -> None:
    import socket
    import uuid

    host, _, rest = default_identity().rpartition("_")
    assert host == socket.gethostname()
    uuid.UUID(rest)
    assert default_identity() != default_identity()


# -- the scheduler behind the gate -----------------------------------------------------------------------
def test_a_scheduler_that_lost_its_lease_pops_and_binds_nothing() -> None:
    h = Harness(objects=[node_dict("n1", cpu="8")])
    flaky = FlakyCluster(h.cluster)
    e = elector(flaky, h.clock, "me")
    h.scheduler.gate = e.is_leader
    h.create(pod_dict("early", cpu="1"))
    assert h.run() == 0  # not leading yet: nothing popped
    assert h.where("early") == "active"
    e.start()
    h.run()
    assert h.node_of("early") == "n1"

    # A scheduling cycle completes, then the lease is lost before its binding cycle runs.
    h.create(pod_dict("in-flight", cpu="1"), pod_dict("queued", cpu="1"))
    flaky.failing = True
    assert h.scheduler.schedule_next()
    assert h.scheduler.has_pending_tasks()
    h.clock.advance(12.5)
    assert not e.is_leader()
    h.settle()
    assert h.node_of("in-flight") is None
    assert h.where("in-flight") == "backoff"
    current = h.scheduler.current_pod(_pod(h, "in-flight"))
    assert current is not None and not h.scheduler.cache.is_assumed(current)
    assert h.events("in-flight") == []  # a replica that does not lead writes nothing about the pod
    assert h.condition("in-flight") == {}
    h.clock.advance(60)
    h.scheduler.run_periodic()
    assert h.run() == 0
    assert h.node_of("queued") is None
    assert {h.where("in-flight"), h.where("queued")} == {"active"}


def _pod(h: Harness, name: str) -> Any:
    from kubesched.api.objects import Pod

    return Pod.from_dict(h.pod(name))


def test_on_the_real_clock_timers_run_on_threads_and_hand_over() -> None:
    from kubesched.clock import RealClock

    cluster = EmbeddedCluster()
    timings: dict[str, Any] = {"lease_duration": 2.0, "renew_deadline": 1.0, "retry_period": 0.2}
    a = LeaderElector(cluster, RealClock(), identity="a", **timings)
    b = LeaderElector(cluster, RealClock(), identity="b", **timings)
    a.start()
    assert a.wait_until_leading(5)
    b.start()
    assert not b.is_leader() and b.get_leader() == "a"
    a.stop()
    assert b.wait_until_leading(10)
    assert b.is_leader() and not a.is_leader()
    b.stop()
    assert spec(cluster)["holderIdentity"] == ""
    assert spec(cluster)["leaseTransitions"] == 1


def test_a_blocking_on_started_leading_does_not_starve_renewals() -> None:
    import threading

    from kubesched.clock import RealClock

    cluster = EmbeddedCluster()
    release = threading.Event()
    renewed = threading.Event()

    def lead() -> None:
        release.wait(30)

    a = LeaderElector(
        cluster,
        RealClock(),
        identity="a",
        lease_duration=2.0,
        renew_deadline=1.0,
        retry_period=0.2,
        on_started_leading=lead,
    )
    starter = threading.Thread(target=a.start)  # kube-scheduler runs its whole loop in this callback
    starter.start()

    def watch() -> None:
        while not release.is_set():
            s = spec(cluster) if cluster.list("Lease")[0] else {}
            if s.get("renewTime") and s["renewTime"] != s["acquireTime"]:
                renewed.set()
                return
            release.wait(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        assert renewed.wait(10)
        assert a.is_leader()
    finally:
        release.set()
        starter.join(10)
        watcher.join(10)
        a.stop()


def test_a_gate_closing_mid_cycle_stops_preemption_and_status_writes() -> None:
    from tests.test_metrics import pod_of_class, priority_class

    h = Harness(objects=[priority_class("low", 0), priority_class("high", 1000), node_dict("n1", cpu="2")])
    h.create(pod_of_class("victim", "low", "2"))
    h.run()
    assert h.node_of("victim") == "n1"
    answers = iter([True])  # open for the pop, closed from then on
    h.scheduler.gate = lambda: next(answers, False)
    h.create(pod_of_class("preemptor", "high", "2"))
    assert h.step()
    assert h.node_of("victim") == "n1"  # not preempted
    assert h.events("preemptor") == [] and h.condition("preemptor") == {}
    assert h.where("preemptor") == "unschedulable"  # still queued for when the gate opens
