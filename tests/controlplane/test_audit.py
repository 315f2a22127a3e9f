"""Reading kube-apiserver's audit log back (testing.controlplane.audit): one request per auditID, the
Lease's writes in etcd's order, leadership terms, and the actions no term of their own covers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testing.controlplane.audit import (
    AuditReader,
    binding_target,
    bindings,
    deletions,
    leadership_terms,
    lease_writes,
    outside_terms,
)

LEASE = {"apiGroup": "coordination.k8s.io", "resource": "leases", "namespace": "kube-system", "name": "kube-scheduler"}


def event(
    audit_id: str,
    user: str,
    verb: str,
    ref: dict[str, Any],
    received: float,
    done: float,
    *,
    code: int = 200,
    stage: str = "ResponseComplete",
    **extra: Any,
) -> dict[str, Any]:
    def at(second: float) -> str:
        return f"2026-01-01T00:00:{second:09.6f}Z"

    return {
        "auditID": audit_id,
        "stage": stage,
        "user": {"username": user},
        "verb": verb,
        "objectRef": ref,
        "responseStatus": {"code": code},
        "requestReceivedTimestamp": at(received),
        "stageTimestamp": at(done),
        **extra,
    }


def lease_write(audit_id: str, user: str, holder: str, rv: int, received: float, done: float) -> dict[str, Any]:
    return event(
        audit_id,
        user,
        "update",
        LEASE,
        received,
        done,
        responseObject={"metadata": {"resourceVersion": str(rv)}, "spec": {"holderIdentity": holder}},
    )


def binding(
    audit_id: str, user: str, pod: str, node: str, received: float, done: float, code: int = 201
) -> dict[str, Any]:
    ref = {"resource": "pods", "subresource": "binding", "namespace": "default", "name": pod}
    return event(audit_id, user, "create", ref, received, done, code=code, requestObject={"target": {"name": node}})


def write(path: Path, events: list[dict[str, Any]]) -> None:
    with open(path, "a") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")


def test_the_reader_follows_the_log_keeps_the_last_stage_and_skips_a_partial_line(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    write(log, [event("old", "u", "get", {}, 0, 0)])
    reader = AuditReader(log)  # from the end: "old" is not seen
    watch = {"resource": "pods"}
    write(log, [event("w", "u", "watch", watch, 1, 1.5, stage="ResponseStarted")])
    assert [(r.verb, r.completed.second) for r in reader.requests()] == [("watch", 1)]
    write(log, [event("w", "u", "watch", watch, 1, 9)])
    line = json.dumps(event("g", "u", "get", watch, 2, 2)) + "\n"
    with open(log, "a") as f:
        f.write(line[:25])  # the API server is still writing it
    assert [(r.verb, r.completed.second) for r in reader.requests()] == [("watch", 9)]
    with open(log, "a") as f:
        f.write(line[25:])
    assert [r.verb for r in reader.requests()] == ["watch", "get"]
    assert [r.verb for r in AuditReader(log, 0).requests()] == ["get", "watch", "get"]


def test_terms_follow_etcds_order_and_a_release_ends_one_without_starting_another(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    reader = AuditReader(log)
    write(
        log,
        [
            lease_write("1", "a", "A", 10, 0.0, 0.1),
            lease_write("3", "a", "", 30, 5.0, 5.1),  # logged out of order: etcd's order is by resourceVersion
            lease_write("2", "a", "A", 20, 2.0, 2.1),
            lease_write("4", "b", "B", 40, 6.0, 6.1),
            event("5", "b", "update", LEASE, 7.0, 7.1, code=409),  # refused writes are no writes
        ],
    )
    writes = lease_writes(reader.requests(), "kube-system", "kube-scheduler")
    assert [w.holder for w in writes] == ["A", "A", "", "B"]
    terms = leadership_terms(writes)
    assert [(t.holder, t.user, t.start.second + t.start.microsecond / 1e6) for t in terms] == [
        ("A", "a", 0.1),
        ("B", "b", 6.1),
    ]
    assert terms[0].end is not None and terms[0].end.second == 5  # the release was received at 5 s
    assert terms[1].end is None


def test_actions_outside_their_users_terms_are_reported(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    reader = AuditReader(log)
    write(
        log,
        [
            lease_write("l1", "a", "A", 10, 0.0, 0.1),
            lease_write("l2", "b", "B", 20, 5.0, 5.1),
            binding("inside", "a", "p1", "n1", 1.0, 1.1),
            binding("early", "a", "p0", "n1", 0.05, 0.2),  # received before a's acquiring write returned
            binding("late", "a", "p2", "n1", 4.9, 5.05),  # completed after b's takeover was received
            binding("foreign", "b", "p3", "n2", 3.0, 3.1),  # b was not leading yet
            binding("b-ok", "b", "p4", "n2", 6.0, 6.1),
            binding("refused", "a", "p5", "n1", 7.0, 7.1, code=409),
        ],
    )
    requests = reader.requests()
    accepted = bindings(requests)
    assert [b.name for b in accepted] == ["p0", "p1", "p3", "p2", "p4"]
    assert [b.name for b in bindings(requests, successful=False)][-1] == "p5"
    terms = leadership_terms(lease_writes(requests, "kube-system", "kube-scheduler"))
    assert sorted(b.name for b in outside_terms(accepted, terms)) == ["p0", "p2", "p3"]
    assert binding_target(accepted[0]) == "n1"


def test_deletions_are_the_first_successful_delete_of_each_name(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    reader = AuditReader(log)
    node = {"resource": "nodes", "name": "n1"}
    write(
        log,
        [
            event("d0", "admin", "delete", node, 1, 1.1, code=404),
            event("d1", "admin", "delete", node, 2, 2.1),
            event("d2", "admin", "delete", node, 3, 3.1),
        ],
    )
    assert deletions(reader.requests(), "nodes")["n1"].received.second == 2
