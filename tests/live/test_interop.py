"""kubesched and upstream kube-scheduler v1.34 contend for the same Lease, ``kube-system/kube-scheduler``,
both scheduling the pods of ``default-scheduler``, while pods arrive at a steady rate.

The Lease is handed over four times, each way with each signal: SIGKILL of kubesched (kube-scheduler
takes over once the Lease expires), SIGTERM of kube-scheduler (kubesched takes the Lease kube-scheduler
released), SIGTERM of kubesched (kube-scheduler takes the Lease kubesched released), SIGKILL of
kube-scheduler. Each side must read the other's record and write its own the same way (client-go's
LeaseSpec: holderIdentity, leaseDurationSeconds, acquireTime and renewTime as MicroTimes,
leaseTransitions), or a takeover would not happen, a release would not be honoured, or the count of
transitions would go astray. Judged by the audit log, as test_failover: they never lead at once, each
binds only in its own terms, every pod is bound exactly once.
"""

from __future__ import annotations

import functools
import re
import signal
from collections import Counter
from datetime import UTC, datetime

import pytest

from testing.controlplane.audit import AuditReader, LeaseWrite, bindings, leadership_terms, lease_writes, outside_terms
from tests.live.conftest import Live, node
from tests.live.replicas import (
    LEASE,
    UPSTREAM_USER,
    PodStream,
    Replica,
    Replicas,
    current_holder,
    election_flags,
    wait_for_a_leader_that_binds,
)

pytestmark = pytest.mark.controlplane

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 4.0, 3.0, 1.0
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
SPEC_FIELDS = {"holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime", "leaseTransitions"}
#: (who is signalled, how); after each, the signalled side is started again as a standby.
HANDOVERS = [
    ("kubesched", signal.SIGKILL),
    ("upstream", signal.SIGTERM),
    ("kubesched", signal.SIGTERM),
    ("upstream", signal.SIGKILL),
]


def start(replicas: Replicas, side: str) -> Replica:
    return replicas.start() if side == "kubesched" else replicas.start_upstream()


def side_of(user: str) -> str:
    return "upstream" if user == UPSTREAM_USER else "kubesched"


def led_by_another(audit: AuditReader, holder: str) -> bool:
    write = current_holder(audit)
    return write is not None and write.holder != holder


def hand_over(live: Live, audit: AuditReader, replicas: Replicas, stream: PodStream) -> list[tuple[str, datetime]]:
    """Run HANDOVERS; when each signal was sent."""
    sent = []
    previous = ""
    for side, sig in HANDOVERS:
        replicas.wait_started()
        leader = wait_for_a_leader_that_binds(live, audit, stream, previous)
        assert side_of(leader.user) == side, f"{side} should lead before it is signalled"
        replica = replicas.running(leader.user)
        sent.append((side, datetime.now(UTC)))
        replicas.signal(replica, sig)
        assert replica.proc.wait(30) in ((0,) if sig == signal.SIGTERM else (-signal.SIGKILL,))
        # The replacement only once the other side leads: started earlier, it could take a released Lease.
        live.wait(functools.partial(led_by_another, audit, leader.holder), 30, "the other side to take over")
        start(replicas, side)
        previous = leader.holder
    wait_for_a_leader_that_binds(live, audit, stream, previous)
    return sent


def test_kubesched_and_kube_scheduler_share_the_lease_and_never_lead_at_once(audited_live: Live) -> None:
    live = audited_live
    audit = AuditReader(live.plane.audit_log)
    replicas = Replicas(live, "interop", election_flags(LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD))
    try:
        live.apply(*(node(f"n{i}", cpu="8", memory="16Gi") for i in range(3)))
        stream = PodStream(live, 0.25)
        stream.start()
        try:
            replicas.start()  # kubesched creates the Lease and leads first
            wait_for_a_leader_that_binds(live, audit, stream, "")
            replicas.start_upstream()
            sent = hand_over(live, audit, replicas, stream)
        finally:
            stream.stop()
        live.wait_bound(*stream.names, timeout=60)
        stopping = datetime.now(UTC)
        codes = replicas.stop_all()
    finally:
        replicas.remove_accounts()
    requests = audit.requests()
    writes = lease_writes(requests, *LEASE)
    terms = leadership_terms(writes)
    accepted = bindings(requests)

    assert outside_terms(accepted, terms) == []
    assert Counter(b.key for b in accepted) == Counter(f"default/{n}" for n in stream.names)
    assert codes == dict.fromkeys(codes, 0)
    sides = [side_of(t.user) for t in terms if t.start < stopping]
    assert sides == ["kubesched", "upstream", "kubesched", "upstream", "kubesched"]
    assert {side_of(b.user) for b in accepted} == {"kubesched", "upstream"}
    assert writes[-1].spec["leaseTransitions"] == len(terms) - 1  # both count every change of holder
    check_records(writes)
    check_releases(writes, sent, terms)
    took = [
        (side, sig.name, round((next(t for t in terms if t.start > at).start - at).total_seconds(), 3))
        for (side, at), (_, sig) in zip(sent, HANDOVERS, strict=True)
    ]
    print("\nhandover seconds (signalled side, signal, until the other led):", took)


def check_records(writes: list[LeaseWrite]) -> None:
    """Both write the same LeaseSpec: every field, MicroTimes in UTC, their own lease duration, and an
    acquireTime kept through a term's renewals."""
    for w in writes:
        assert set(w.spec) == SPEC_FIELDS, (w.user, w.spec)
        assert MICRO_TIME.match(w.spec["acquireTime"]) and MICRO_TIME.match(w.spec["renewTime"]), w.spec
        assert w.spec["leaseDurationSeconds"] == (LEASE_DURATION if w.holder else 1)
    for term in leadership_terms(writes):
        held = [w for w in writes if w.holder == term.holder]
        assert {w.spec["acquireTime"] for w in held} == {term.acquire.spec["acquireTime"]}


def check_releases(writes: list[LeaseWrite], sent: list[tuple[str, datetime]], terms: list) -> None:
    """After each SIGTERM the signalled side released the Lease and the other took it well before it
    could have expired: each honours the other's release."""
    for (side, at), (_, sig) in zip(sent, HANDOVERS, strict=True):
        if sig != signal.SIGTERM:
            continue
        release = next(w for w in writes if w.completed >= at and not w.holder)
        assert side_of(release.user) == side
        taken = next(t for t in terms if t.start >= release.completed)
        assert side_of(taken.user) != side
        assert (taken.start - release.completed).total_seconds() < LEASE_DURATION
