"""The elector: client-go's LeaderElector (acquire, renew, release) on the cluster protocol and the Clock.

See :mod:`kubesched.live.leaderelection` for the behaviour and the public API.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.clock import Clock, TimerHandle
from kubesched.cluster.protocol import Cluster, NotFound
from kubesched.klog import level_for
from kubesched.live.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock

if TYPE_CHECKING:
    from kubesched.config.types import LeaderElectionConfig

log = logging.getLogger(__name__)

#: wait.JitterUntil's factor in client-go's acquire loop: waits are retry_period * [1, 2.2).
JITTER_FACTOR = 1.2
#: How long past the lease duration a leader may go unrenewed before its health check fails
#: (kube-scheduler's ``NewLeaderHealthzAdaptor(20 * time.Second)``).
DEFAULT_HEALTH_TIMEOUT = 20.0


def default_identity() -> str:
    """``hostname_<uuid>``: the uuid keeps two processes on one host from both leading."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


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
        self._observed_raw: dict[str, Any] | None = None
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
    def from_config(
        cls, cluster: Cluster, clock: Clock, config: LeaderElectionConfig, **kwargs: object
    ) -> LeaderElector:
        """An elector with a KubeSchedulerConfiguration's leaderElection settings (resourceLock leases)."""
        if config.resource_lock not in ("leases", ""):
            raise ValueError(f"leaderElection.resourceLock: unsupported value {config.resource_lock!r} (only 'leases')")
        return cls(
            cluster,
            clock,
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
        return (
            self._leading
            and self._observed.holder_identity == self.lock.identity
            and self.clock.now() < self._valid_until
        )

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

    def _acquire_delay(self) -> float:
        """How long a candidate waits before its next attempt.

        While another holder's lease is valid as observed: every retry period, without jitter, and never
        past the moment that lease expires. A holder that dies was last seen renewing at most one retry
        period (and a request) before, so a standby takes over within leaseDuration + retryPeriod of the
        death; client-go's jittered wait alone (up to 2.2 retry periods, before and after expiry) lets it
        take up to leaseDuration + 4.4 retry periods. Otherwise (an error, a conflict) jittered as client-go.
        """
        now = self.clock.now()
        holder = self._observed.holder_identity
        if holder and holder != self.identity and self._lease_valid(now):
            expiry = self._observed_time + timedelta(seconds=self._observed.lease_duration_seconds)
            return min(self.retry_period, (expiry - now).total_seconds())
        return self._jittered(self.retry_period)

    def _acquire_tick(self, epoch: int) -> None:
        started = False
        with self._mutex:
            if epoch != self._epoch or self._state != "acquiring":
                return
            succeeded = self._try_acquire_or_renew()
            new_leader = self._maybe_report_transition()
            if not succeeded:
                self._schedule(self._acquire_delay(), self._acquire_tick, epoch)
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
            desired = dataclasses.replace(
                desired, acquire_time=self._observed.acquire_time, leader_transitions=self._observed.leader_transitions
            )
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
            log.log(level_for(4), "lock is held by %s and has not yet expired", old.holder_identity)
            return False

        if self._observed_is_us():
            desired = dataclasses.replace(
                desired, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions
            )
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
        # client-go looks only at what it last observed; a leader that lost the Lease to a slow renewal may
        # find someone else holding it by now, and blanking their record would let a third replica lead.
        if not self._observed_is_us() or old.holder_identity != self.identity:
            return True
        now = self.clock.now()
        record = LeaderElectionRecord(
            lease_duration_seconds=1, acquire_time=now, renew_time=now, leader_transitions=old.leader_transitions
        )
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
