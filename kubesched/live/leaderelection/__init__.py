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

- Acquire: try to take the Lease at once, then again and again. A Lease held by someone else is left
  alone until it has expired *as this elector observed it*: the holder's record must stay unchanged for
  ``leaseDurationSeconds`` of our own clock, measured from when we first saw that record (the renewTime
  written in the Lease is never compared with our clock, so clock skew between replicas does not
  matter). Taking over increments ``leaseTransitions``; an empty holderIdentity (a released Lease) is
  free at once.
- When to try again: while another holder's Lease is valid, every ``retry_period`` and once more at the
  moment it expires as observed, so a standby takes over within ``lease_duration + retry_period`` of the
  holder's death (plus a request); after an error or a conflict, ``retry_period`` jittered by up to
  1.2x as client-go's ``wait.JitterUntil`` (whose jitter alone would allow up to ``lease_duration`` +
  4.4 retry periods). Only the timing of attempts differs from client-go, never what an attempt writes
  or when it may take over.
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
  still ours and the Lease read just before still names us, write holderIdentity "",
  leaseDurationSeconds 1, acquireTime = renewTime = now and the same leaseTransitions: an empty holder
  is free at once, so a standby takes over at its next attempt (within ``retry_period``). The second
  condition is stricter than client-go, which would blank a record a faster replica already took over.
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

from kubesched.live.leaderelection.elector import (
    DEFAULT_HEALTH_TIMEOUT,
    JITTER_FACTOR,
    LeaderElector,
    LeaderMetrics,
    default_identity,
)
from kubesched.live.leaderelection.resourcelock import (
    MICRO_TIME_FORMAT,
    LeaderElectionRecord,
    LeaseLock,
    format_micro_time,
    parse_micro_time,
)

__all__ = [
    "DEFAULT_HEALTH_TIMEOUT",
    "JITTER_FACTOR",
    "MICRO_TIME_FORMAT",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaderMetrics",
    "LeaseLock",
    "default_identity",
    "format_micro_time",
    "parse_micro_time",
]
