"""Failover: three ``kubesched run`` replicas with leader election share the real control plane while pods
arrive at a steady rate; the leader is killed ten times, SIGKILL and SIGTERM in turn, and nodes come and
go meanwhile.

Judged by kube-apiserver's own record (testing.controlplane.audit), which no killed process can take
with it: every replica runs under a ServiceAccount of its own, so each binding and each Lease write
names its replica, and the Lease's writes in etcd's order give the leadership terms. Then:

- a standby leads within leaseDuration + retryPeriod of a SIGKILL (plus the requests it makes), and
  within a retry period of the Lease's release after a SIGTERM, never waiting for the lease to expire;
  the new leader goes on binding;
- every pod ends bound, by exactly one accepted binding, made by the replica leading at the time (from
  before the request was received to after it completed: no two replicas ever bind in the same
  interval), to a node that existed then (nodes are retired as a drain retires them, cordoned and
  deleted a second later, while the Lease changes hands);
- ``leaseTransitions`` counts each change of holder, as client-go's writers count it.

Short lease settings keep it to about a minute.
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from testing.controlplane.audit import (
    AuditReader,
    LeaseWrite,
    Request,
    Term,
    binding_target,
    bindings,
    deletions,
    leadership_terms,
    lease_writes,
    outside_terms,
)
from tests.live.conftest import Live, node, pod
from tests.live.replicas import LEASE, PodStream, Replicas, election_flags, wait_for_a_leader_that_binds

pytestmark = pytest.mark.controlplane

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 4.0, 3.0, 1.0
ELECTION = election_flags(LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD)
#: What a takeover may take beyond the protocol's bound: the standby's read and write of the Lease, and its
#: timer firing late, on a machine loaded by the three replicas, the API server and the test.
REQUEST_ALLOWANCE = 1.0
POD_INTERVAL = 0.25
KILLS = 10
CHURN_AT = (1, 4, 7)  # the kills during which a node is retired and another added


class Nodes:
    """The cluster's nodes: four to start with; ``churn`` retires the oldest and adds one."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.created: list[str] = []
        for _ in range(4):
            self.add()
        self.retired: list[str] = []

    def add(self) -> None:
        name = f"n{len(self.created)}"
        self.live.apply(node(name, cpu="6", memory="16Gi"))
        self.created.append(name)

    def churn(self) -> None:
        """Cordon the oldest node, delete it a second later (as a drain would: no new pod lands there
        meanwhile), and add a new one."""
        oldest = next(n for n in self.created if n not in self.retired)
        self.retired.append(oldest)
        self.live.kubectl("cordon", oldest)
        self.add()
        time.sleep(1.0)
        self.live.kubectl("delete", "node", oldest)


@dataclass
class Kill:
    sig: signal.Signals
    user: str
    holder: str
    at: datetime
    exit_code: int


def kill_leaders(live: Live, audit: AuditReader, replicas: Replicas, nodes: Nodes, stream: PodStream) -> list[Kill]:
    kills: list[Kill] = []
    previous = ""
    for i in range(KILLS):
        replicas.wait_started()  # the replacement of the last one killed stands by
        leader = wait_for_a_leader_that_binds(live, audit, stream, previous)
        replica = replicas.running(leader.user)
        sig = signal.SIGKILL if i % 2 == 0 else signal.SIGTERM
        at = datetime.now(UTC)
        replicas.signal(replica, sig)
        if i in CHURN_AT:
            nodes.churn()  # while the Lease changes hands
        kills.append(Kill(sig, leader.user, leader.holder, at, replica.proc.wait(30)))
        replicas.start()  # a fresh replica (a new identity) takes the killed one's place
        previous = leader.holder
    wait_for_a_leader_that_binds(live, audit, stream, previous)
    return kills


def takeover(kill: Kill, terms: list[Term], writes: list[LeaseWrite]) -> tuple[float, float | None]:
    """Seconds from the signal until the next holder's acquiring write returned; for SIGTERM also from
    the release (the killed holder's write of an empty holder) until then."""
    term = next(t for t in terms if t.holder != kill.holder and t.start > kill.at)
    release = next((w for w in writes if w.user == kill.user and not w.holder and w.completed >= kill.at), None)
    since_release = (term.start - release.completed).total_seconds() if release is not None else None
    return (term.start - kill.at).total_seconds(), since_release


def test_ten_leader_kills_lose_double_and_misplace_nothing(audited_live: Live, tmp_path: Path) -> None:
    live = audited_live
    audit = AuditReader(live.plane.audit_log)
    replicas = Replicas(live, "failover", ELECTION)
    try:
        nodes = Nodes(live)
        for _ in range(3):
            replicas.start()
        stream = PodStream(live, POD_INTERVAL)
        stream.start()
        try:
            kills = kill_leaders(live, audit, replicas, nodes, stream)
        finally:
            stream.stop()
        live.wait_bound(*stream.names, timeout=60)
        stopping = datetime.now(UTC)  # from here on the standbys take over as the leaders are stopped
        codes = replicas.stop_all()
    finally:
        replicas.remove_accounts()
    requests = audit.requests()
    writes = lease_writes(requests, *LEASE)
    terms = leadership_terms(writes)
    accepted = bindings(requests)
    assert outside_terms(accepted, terms) == []
    assert Counter(b.key for b in accepted) == Counter(f"default/{n}" for n in stream.names)
    assert codes == dict.fromkeys(codes, 0)  # no replica ended on its own (a lost Lease exits 1)
    assert [k.exit_code for k in kills if k.sig == signal.SIGTERM] == [0] * (KILLS // 2)
    assert writes[-1].spec["leaseTransitions"] == len(terms) - 1
    check_binding_targets(accepted, nodes, requests)
    # Every term after the first began with a kill; each killed leader had bound pods in its term.
    assert len([t for t in terms if t.start < stopping]) == KILLS + 1
    binders = {b.user for b in accepted}
    assert {k.user for k in kills} <= binders
    report = check_takeovers(kills, terms, writes)
    (tmp_path / "takeovers.json").write_text(json.dumps(report, indent=2))
    print("\ntakeover seconds:", json.dumps(report))


def check_takeovers(kills: list[Kill], terms: list[Term], writes: list[LeaseWrite]) -> list[dict]:
    report = []
    for kill in kills:
        total, since_release = takeover(kill, terms, writes)
        report.append(
            {
                "signal": kill.sig.name,
                "takeover": round(total, 3),
                "after_release": None if since_release is None else round(since_release, 3),
            }
        )
        if kill.sig == signal.SIGKILL:
            assert since_release is None
            assert total <= LEASE_DURATION + RETRY_PERIOD + REQUEST_ALLOWANCE, report
        else:
            assert since_release is not None, report  # released (ReleaseOnCancel), not left to expire
            assert since_release <= RETRY_PERIOD + REQUEST_ALLOWANCE, report
            assert total < LEASE_DURATION, report
    return report


def check_binding_targets(accepted: list[Request], nodes: Nodes, requests: list[Request]) -> None:
    """Every binding names a node the test made, and none reached the API server after its deletion."""
    deleted = deletions(requests, "nodes")
    assert set(deleted) == set(nodes.retired)
    for b in accepted:
        target = binding_target(b)
        assert target in nodes.created, b
        if target in deleted:
            assert b.completed <= deleted[target].received, (b, deleted[target])


def test_a_standby_is_ready_and_both_are_live(audited_live: Live) -> None:
    """As kube-scheduler: /readyz of a standby is 200 (its informers synced; the leader-election check
    only fails for a holder that stopped renewing), so a rollout or a budget counts it available."""
    import urllib.request

    from testing.controlplane.fixture import free_port

    live = audited_live
    live.apply(node("n1"))
    ports = [free_port(), free_port()]
    for port in ports:
        live.start_scheduler(
            *ELECTION, "--plain-http", "--secure-port", str(port), "--bind-address", "127.0.0.1", name=f"replica-{port}"
        )

    def status(port: int, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                return resp.status, resp.read().decode()
        except OSError:
            return 0, ""

    live.wait(lambda: all(status(p, "/readyz")[0] == 200 for p in ports), 30, "both replicas ready")
    lease = live.get("lease", LEASE[1], namespace=LEASE[0])
    assert lease["spec"]["holderIdentity"]
    for port in ports:
        code, body = status(port, "/readyz?verbose")
        assert code == 200
        assert "[+]leaderElection ok" in body and "[+]sched-handler-sync ok" in body
        assert status(port, "/livez")[0] == 200
        assert status(port, "/healthz")[0] == 200
    live.apply(pod("p"))
    live.wait_bound("p")
