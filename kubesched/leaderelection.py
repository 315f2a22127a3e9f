"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does it.

Several scheduler replicas may run; only the one holding the Lease schedules. The elector talks to the
cluster only through the cluster protocol (get / create / update with resourceVersion conflicts) and
keeps time only through the injected :class:`~kubesched.clock.Clock`, so the same code runs against a
live API server on the real clock and against the embedded cluster on a virtual clock in tests.

Public API::

    elector = LeaderElector(cluster, clock,
                            lease_namespace="kube-system", lease_name="kube-scheduler",
                            lease_duration=15, renew_deadline=10, retry_period=2,
                            on_started_leading=..., on_stopped_leading=..., on_new_leader=...,
                            metrics=scheduler.metrics)          # or LeaderElector.from_config(...)
    elector.start()          # begin trying to acquire (returns at once; work happens on clock timers)
    elector.is_leader()      # cheap, lock-free: gate for popping and binding (Scheduler(gate=...))
    elector.check(20.0)      # health check: None, or why the leader is stale (for /healthz, /readyz)
    elector.stop()           # stop trying; a leader releases the Lease (holderIdentity "", duration 1)
    elector.lost             # True once leadership ended because renewal failed (kube-scheduler exits 1)

How it behaves (client-go's semantics):

- Acquire: every ``retry_period`` (jittered by up to 1.2x, as ``wait.JitterUntil``) try to take the
  Lease. A Lease held by someone else is left alone until it has expired *as this elector observed it*:
  the holder's record must stay unchanged for ``leaseDurationSeconds`` of our own clock, measured from
  when we first saw that record (the renewTime written in the Lease is never compared with our clock,
  so clock skew between replicas does not matter). Taking over increments ``leaseTransitions``.
- Renew: while leading, a renewal round starts right away and then ``retry_period`` after each success;
  within a round, attempts repeat every ``retry_period``; if none succeeds within ``renew_deadline`` of
  the round's start, leadership is lost: ``on_stopped_leading`` runs and the elector ends (it does not
  compete again; kube-scheduler exits then, and a fresh process joins as a candidate).
- ``is_leader()`` is stricter than client-go's IsLeader (observed holder is us): it is also False
  before acquisition, after stop or loss, and once ``renew_deadline`` has passed since the renewTime
  of our last successful write, even if no timer has fired yet (a slow API call, a starved timer).
  Other candidates cannot take over before ``lease_duration`` after that write, so a scheduler that
  checks the gate before binding never binds once someone else may lead.
- Release on stop (``release_on_cancel``, kube-scheduler's setting): if the last observed record is
  still ours, write holderIdentity "", leaseDurationSeconds 1, acquireTime = renewTime = now and the
  same leaseTransitions: an empty holder is free at once, so a standby takes over at its next attempt.
- Spec fields are written as client-go's leaselock writes them: holderIdentity, leaseDurationSeconds,
  acquireTime, renewTime (MicroTime, ``2006-01-02T15:04:05.000000Z`` in UTC) and leaseTransitions.
  Events ``<identity> became leader`` / ``<identity> stopped leading`` (reason LeaderElection) are
  recorded on the Lease, best effort.

Callbacks run on the elector's timer (a thread timer with the real clock, inside ``advance`` with the
virtual clock). With the real clock ``on_started_leading`` may block (renewals have timers of their
own); with the virtual clock every callback must return. ``on_started_leading`` runs once on acquisition;
``on_stopped_leading`` runs once when a leader stops leading (lost or stopped), never for an elector
that never led; ``on_new_leader(identity)`` whenever the observed holder changes.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from kubesched.clock import Clock, TimerHandle
from kubesched.cluster.protocol import ApiError, Cluster, NotFound

if TYPE_CHECKING:
    from kubesched.config.types import LeaderElectionConfig

log = logging.getLogger(__name__)

#: wait.JitterUntil's factor in client-go's acquire loop: waits are retry_period * [1, 2.2).
JITTER_FACTOR = 1.2
#: How long past the lease duration a leader may go unrenewed before its health check fails
#: (kube-scheduler's ``NewLeaderHealthzAdaptor(20 * time.Second)``).
DEFAULT_HEALTH_TIMEOUT = 20.0
MICRO_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_micro_time(t: datetime) -> str:
    """metav1.MicroTime as JSON: RFC3339 with microseconds, in UTC (``2024-01-01T00:00:00.000000Z``)."""
    if t.tzinfo is not None:
        t = t.astimezone(UTC)
    return t.strftime(MICRO_TIME_FORMAT)


def parse_micro_time(value: object) -> datetime | None:
    """Read a MicroTime (or a second-precision Time) back; None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def default_identity() -> str:
    """``hostname_<uuid>``: the uuid keeps two processes on one host from both leading."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """What a Lease's spec says about its holder (client-go's LeaderElectionRecord)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    leader_transitions: int = 0
    preferred_holder: str = ""
    strategy: str = ""

    @classmethod
    def from_spec(cls, spec: dict | None) -> LeaderElectionRecord:
        spec = spec or {}
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=_int(spec.get("leaseDurationSeconds")),
            acquire_time=parse_micro_time(spec.get("acquireTime")),
            renew_time=parse_micro_time(spec.get("renewTime")),
            leader_transitions=_int(spec.get("leaseTransitions")),
            preferred_holder=str(spec.get("preferredHolder") or ""),
            strategy=str(spec.get("strategy") or ""),
        )

    def to_spec(self) -> dict:
        """The LeaseSpec client-go writes: every field set, holderIdentity "" included."""
        spec: dict = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": format_micro_time(self.acquire_time) if self.acquire_time else None,
            "renewTime": format_micro_time(self.renew_time) if self.renew_time else None,
            "leaseTransitions": self.leader_transitions,
        }
        if self.preferred_holder:
            spec["preferredHolder"] = self.preferred_holder
        if self.strategy:
            spec["strategy"] = self.strategy
        return spec


def _int(value: object) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


class LeaseLock:
    """The Lease as a lock: get / create / update of one object, remembering the last version seen so
    that every update carries its resourceVersion (a concurrent writer makes it a Conflict)."""

    def __init__(self, cluster: Cluster, namespace: str, name: str, identity: str) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease: dict | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self) -> tuple[LeaderElectionRecord, dict]:
        """The current record and the raw spec (compared to notice any change); NotFound if absent."""
        lease = self.cluster.get("Lease", self.namespace, self.name)
        self.lease = lease
        spec = dict(lease.get("spec") or {})
        return LeaderElectionRecord.from_spec(spec), spec

    def create(self, record: LeaderElectionRecord) -> None:
        self.lease = self.cluster.create({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        })

    def update(self, record: LeaderElectionRecord) -> None:
        if self.lease is None:
            raise ApiError("lease not initialized, call get or create first")
        lease = {**self.lease, "spec": record.to_spec()}
        self.lease = self.cluster.update(lease)

    def record_event(self, message: str) -> None:
        """A Normal LeaderElection event on the Lease (best effort, like an event recorder)."""
        meta = (self.lease or {}).get("metadata") or {}
        try:
            self.cluster.record_event({
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"namespace": self.namespace},
                "involvedObject": {
                    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "namespace": self.namespace,
                    "name": self.name, "uid": meta.get("uid", ""),
                    "resourceVersion": meta.get("resourceVersion", ""),
                },
                "type": "Normal",
                "reason": "LeaderElection",
                "message": f"{self.identity} {message}",
                "source": {"component": "kubesched"},
            })
        except Exception as err:
            log.warning("recording leader election event on %s failed: %s", self.describe(), err)


class LeaderMetrics(Protocol):
    """``leader_election_master_status{name}`` and ``leader_election_slowpath_total{name}``."""

    def leader_on(self, name: str) -> None: ...

    def leader_off(self, name: str) -> None: ...

    def leader_slowpath(self, name: str) -> None: ...


class LeaderElector:
    """One candidate for a Lease; see the module docstring for the protocol and the callbacks."""

    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        *,
        lease_namespace: str = "kube-system",
        lease_name: str = "kube-scheduler",
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        release_on_cancel: bool = True,
        name: str | None = None,
        metrics: LeaderMetrics | None = None,
        rng: random.Random | None = None,
        jitter_factor: float = JITTER_FACTOR,
    ) -> None:
        # The checks client-go's NewLeaderElector makes.
        if lease_duration <= renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if retry_period <= 0 or lease_duration <= 0:
            raise ValueError("leaseDuration and retryPeriod must be positive")
        self.clock = clock
        self.lock = LeaseLock(cluster, lease_namespace, lease_name, identity or default_identity())
        self.lease_duration = float(lease_duration)
        self.renew_deadline = float(renew_deadline)
        self.retry_period = float(retry_period)
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.release_on_cancel = release_on_cancel
        #: The lease's name in metrics and health messages (client-go's LeaderElectionConfig.Name).
        self.name = name or lease_name
        self.metrics = metrics
        self.rng = rng or random.Random()
        self.jitter_factor = jitter_factor

        self._mutex = threading.RLock()
        self._state = "new"  # new -> acquiring -> leading -> done
        self._epoch = 0  # bumped on stop: timers of an older epoch do nothing
        self._timer: TimerHandle | None = None
        self._observed = LeaderElectionRecord()
        self._observed_raw: dict | None = None
        self._observed_time = clock.now()
        self._reported_leader = ""
        self._round_deadline = clock.now()
        # Read without the mutex by is_leader(): a bool and an immutable datetime.
        self._leading = False
        self._valid_until = clock.now()
        self.lost = False
        self._led = threading.Event()
        self._leader_off()  # a standby reports 0 from the start, as client-go's elector does

    @classmethod
    def from_config(cls, cluster: Cluster, clock: Clock, config: LeaderElectionConfig,
                    **kwargs: object) -> LeaderElector:
        """An elector with a KubeSchedulerConfiguration's leaderElection settings (resourceLock leases)."""
        if config.resource_lock not in ("leases", ""):
            raise ValueError(
                f"leaderElection.resourceLock: unsupported value {config.resource_lock!r} (only 'leases')")
        return cls(
            cluster, clock,
            lease_namespace=config.resource_namespace,
            lease_name=config.resource_name,
            lease_duration=_seconds(config.lease_duration),
            renew_deadline=_seconds(config.renew_deadline),
            retry_period=_seconds(config.retry_period),
            **kwargs,  # type: ignore[arg-type]
        )

    # -- public -------------------------------------------------------------------------------------
    @property
    def identity(self) -> str:
        return self.lock.identity

    def is_leader(self) -> bool:
        """Whether this elector leads, last saw itself as the holder and renewed recently enough to act
        on it (lock-free)."""
        return (self._leading and self._observed.holder_identity == self.lock.identity
                and self.clock.now() < self._valid_until)

    def get_leader(self) -> str:
        """The holder this elector last observed ("" when none)."""
        return self._observed.holder_identity

    def start(self) -> None:
        """Start competing for the Lease; the first attempt runs at once."""
        with self._mutex:
            if self._state != "new":
                return
            self._state = "acquiring"
            log.info("attempting to acquire leader lease %s...", self.lock.describe())
            epoch = self._epoch
        self._acquire_tick(epoch)

    def stop(self) -> None:
        """Stop competing; a leader stops leading at once and releases the Lease if configured to."""
        with self._mutex:
            if self._state == "done":
                return
            was_leading = self._state == "leading"
            self._state = "done"
            self._epoch += 1
            self._leading = False
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if was_leading:
                self._leader_off()
                if self.release_on_cancel:
                    self._release()
                self.lock.record_event("stopped leading")
        if was_leading and self.on_stopped_leading is not None:
            self.on_stopped_leading()

    def wait_until_leading(self, timeout: float | None = None) -> bool:
        """Block until this elector has started leading (real clock only); False on timeout."""
        return self._led.wait(timeout)

    @property
    def leading(self) -> bool:
        """Whether the elector is in its leading state (without the freshness check of is_leader)."""
        return self._leading

    @property
    def done(self) -> bool:
        return self._state == "done"

    def check(self, max_tolerable_expired_lease: float = DEFAULT_HEALTH_TIMEOUT) -> str | None:
        """Health: an error when we are the observed holder but have not renewed for longer than the
        lease duration plus ``max_tolerable_expired_lease`` (client-go's LeaderElector.Check)."""
        if self._observed.holder_identity != self.identity:
            return None
        stale = (self.clock.now() - self._observed_time).total_seconds()
        if stale > self.lease_duration + max_tolerable_expired_lease:
            return f"failed election to renew leadership on lease {self.name}"
        return None

    # -- the loops ----------------------------------------------------------------------------------
    def _schedule(self, delay: float, fn: Callable[[int], None], epoch: int) -> None:
        self._timer = self.clock.call_later(delay, lambda: fn(epoch))

    def _jittered(self, period: float) -> float:
        return period + self.rng.random() * self.jitter_factor * period if self.jitter_factor > 0 else period

    def _acquire_tick(self, epoch: int) -> None:
        started = False
        with self._mutex:
            if epoch != self._epoch or self._state != "acquiring":
                return
            succeeded = self._try_acquire_or_renew()
            new_leader = self._maybe_report_transition()
            if not succeeded:
                self._schedule(self._jittered(self.retry_period), self._acquire_tick, epoch)
            else:
                log.info("successfully acquired lease %s", self.lock.describe())
                self.lock.record_event("became leader")
                self._state = "leading"
                self._leading = True
                self._leader_on()
                started = True
                # Renewals run on their own timer (at once), not after the callback: a callback that
                # blocks (kube-scheduler runs its loop in OnStartedLeading) must not starve them.
                self._schedule(0.0, self._renew_round, epoch)
        self._notify_new_leader(new_leader)
        if not started:
            return
        self._led.set()
        if self.on_started_leading is not None:
            self.on_started_leading()

    def _renew_round(self, epoch: int) -> None:
        """One wait.Until iteration: a poll of renewals bounded by the renew deadline."""
        with self._mutex:
            if epoch != self._epoch or self._state != "leading":
                return
            self._round_deadline = self.clock.now() + timedelta(seconds=self.renew_deadline)
        self._renew_attempt(epoch)

    def _renew_attempt(self, epoch: int) -> None:
        with self._mutex:
            if epoch != self._epoch or self._state != "leading":
                return
            succeeded = self._try_acquire_or_renew()
            new_leader = self._maybe_report_transition()
            now = self.clock.now()
            if succeeded and now < self._round_deadline:
                self._schedule(self.retry_period, self._renew_round, epoch)
            elif now + timedelta(seconds=self.retry_period) < self._round_deadline:
                self._schedule(self.retry_period, self._renew_attempt, epoch)
            else:
                delay = (self._round_deadline - now).total_seconds()
                self._schedule(max(delay, 0.0), self._renew_expired, epoch)
        self._notify_new_leader(new_leader)

    def _renew_expired(self, epoch: int) -> None:
        with self._mutex:
            if epoch != self._epoch or self._state != "leading":
                return
            log.error("failed to renew lease %s: timed out waiting for the condition", self.lock.describe())
            self._state = "done"
            self._epoch += 1
            self._leading = False
            self.lost = True
            self._leader_off()
            if self.release_on_cancel:
                self._release()
            self.lock.record_event("stopped leading")
        if self.on_stopped_leading is not None:
            self.on_stopped_leading()

    # -- one attempt (callers hold the mutex) -------------------------------------------------------
    def _try_acquire_or_renew(self) -> bool:
        """client-go's tryAcquireOrRenew: the fast path updates our own valid lease blindly (with the
        last resourceVersion); otherwise read, respect a live foreign holder, and write."""
        now = self.clock.now()
        desired = LeaderElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=int(self.lease_duration),
            acquire_time=now,
            renew_time=now,
        )
        if self._observed_is_us() and self._lease_valid(now):
            desired = dataclasses.replace(desired, acquire_time=self._observed.acquire_time,
                                          leader_transitions=self._observed.leader_transitions)
            try:
                self.lock.update(desired)
            except Exception as err:
                log.error("failed to update lock optimistically: %s, falling back to slow path", err)
            else:
                self._set_observed(desired)
                return True

        try:
            old, raw = self.lock.get()
        except NotFound:
            try:
                self.lock.create(desired)
            except Exception as err:
                log.error("error initially creating leader election record: %s", err)
                return False
            self._set_observed(desired)
            return True
        except Exception as err:
            log.error("error retrieving resource lock %s: %s", self.lock.describe(), err)
            return False

        if raw != self._observed_raw:
            self._set_observed(old)
            self._observed_raw = raw
        if old.holder_identity and self._lease_valid(now) and not self._observed_is_us():
            log.debug("lock is held by %s and has not yet expired", old.holder_identity)
            return False

        if self._observed_is_us():
            desired = dataclasses.replace(desired, acquire_time=old.acquire_time,
                                          leader_transitions=old.leader_transitions)
            if self.metrics is not None:
                self.metrics.leader_slowpath(self.name)
        else:
            desired = dataclasses.replace(desired, leader_transitions=old.leader_transitions + 1)
        try:
            self.lock.update(desired)
        except Exception as err:
            log.error("failed to update lock: %s", err)
            return False
        self._set_observed(desired)
        return True

    def _release(self) -> bool:
        """Give the Lease up: empty holder, a one-second duration, same transition count."""
        try:
            old, _ = self.lock.get()
        except Exception as err:
            log.error("error retrieving resource lock %s: %s", self.lock.describe(), err)
            return False
        if not self._observed_is_us():
            return True
        now = self.clock.now()
        record = LeaderElectionRecord(lease_duration_seconds=1, acquire_time=now, renew_time=now,
                                      leader_transitions=old.leader_transitions)
        try:
            self.lock.update(record)
        except Exception as err:
            log.error("failed to release lock: %s", err)
            return False
        self._set_observed(record)
        return True

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        self._observed = record
        self._observed_time = self.clock.now()
        if record.holder_identity == self.identity and record.renew_time is not None:
            self._valid_until = record.renew_time + timedelta(seconds=self.renew_deadline)

    def _observed_is_us(self) -> bool:
        return self._observed.holder_identity == self.identity

    def _lease_valid(self, now: datetime) -> bool:
        expiry = self._observed_time + timedelta(seconds=self._observed.lease_duration_seconds)
        return expiry > now

    def _maybe_report_transition(self) -> str | None:
        holder = self._observed.holder_identity
        if holder == self._reported_leader:
            return None
        self._reported_leader = holder
        return holder

    def _notify_new_leader(self, holder: str | None) -> None:
        if holder is not None:
            log.info("new leader elected: %s", holder or "<none>")
            if self.on_new_leader is not None:
                self.on_new_leader(holder)

    def _leader_on(self) -> None:
        if self.metrics is not None:
            self.metrics.leader_on(self.name)

    def _leader_off(self) -> None:
        if self.metrics is not None:
            self.metrics.leader_off(self.name)


def _seconds(value: timedelta | float) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
