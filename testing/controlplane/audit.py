"""kube-apiserver's audit log read back: who made which request, when, and with what answer.

The server's own record is what the failover, interop and RBAC tests judge by: it cannot be lost with a
process that was killed, and it sees every replica through one clock. A plane started with
``ControlPlane.start(audit_policy=POLICY)`` writes it::

    audit = AuditReader(plane.audit_log)                # from the log's end: what the test does next
    requests = audit.requests()                         # every request since, one per auditID
    writes = lease_writes(requests, "kube-system", "kube-scheduler")
    for term in leadership_terms(writes): ...           # who held the Lease, from when until when
    outside_terms(bindings(requests), leadership_terms(writes))   # bindings nobody was leading for

:data:`POLICY` logs what those questions need: Lease writes with their bodies (the holder is in them),
bindings with their target node, node changes by anyone, and every other request's metadata except the
administrator's (the test driver) and the API server's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

POLICY: dict[str, Any] = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "users": ["system:apiserver"]},
        {
            "level": "RequestResponse",
            "verbs": ["create", "update", "patch", "delete"],
            "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}],
        },
        {"level": "Request", "resources": [{"group": "", "resources": ["pods/binding"]}]},
        {
            "level": "Metadata",
            "verbs": ["create", "update", "patch", "delete"],
            "resources": [{"group": "", "resources": ["nodes"]}],
        },
        {"level": "None", "userGroups": ["system:masters"]},
        {"level": "Metadata"},
    ],
}


@dataclass(frozen=True, slots=True)
class Request:
    """One request as the API server answered it (the last stage logged for its auditID)."""

    user: str
    verb: str
    group: str  # "" for the core group
    resource: str  # "" for a non-resource URL (discovery, /version)
    subresource: str
    namespace: str
    name: str
    code: int
    received: datetime
    completed: datetime
    uri: str
    user_agent: str
    request_object: dict[str, Any] | None
    response_object: dict[str, Any] | None

    @property
    def succeeded(self) -> bool:
        return 200 <= self.code < 300

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def log_size(path: Path) -> int:
    """Where the log ends now: read from here to see only what comes after."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def parse_event(event: dict[str, Any]) -> Request:
    ref = event.get("objectRef") or {}
    return Request(
        user=(event.get("user") or {}).get("username", ""),
        verb=event.get("verb", ""),
        group=ref.get("apiGroup", ""),
        resource=ref.get("resource", ""),
        subresource=ref.get("subresource", ""),
        namespace=ref.get("namespace", ""),
        name=ref.get("name", ""),
        code=int((event.get("responseStatus") or {}).get("code") or 0),
        received=_time(event["requestReceivedTimestamp"]),
        completed=_time(event["stageTimestamp"]),
        uri=event.get("requestURI", ""),
        user_agent=event.get("userAgent", ""),
        request_object=event.get("requestObject"),
        response_object=event.get("responseObject"),
    )


class AuditReader:
    """Follows the log from byte ``since`` (its end when None: only what comes after), reading only
    what was appended since the last call, so a test may poll it while replicas run."""

    def __init__(self, path: Path, since: int | None = None) -> None:
        self.path = path
        self.offset = log_size(path) if since is None else since
        self._last: dict[str, Request] = {}

    def requests(self) -> list[Request]:
        """Every request logged so far, in the order they were received; a watch still open shows as
        its ResponseStarted stage, anything finished as ResponseComplete (or Panic)."""
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return []
        with f:
            f.seek(self.offset)
            for line in f:
                if not line.endswith(b"\n"):
                    break  # a line still being written: read again next time
                self.offset += len(line)
                event = json.loads(line)
                self._last[event["auditID"]] = parse_event(event)  # later stages replace earlier ones
        return sorted(self._last.values(), key=lambda r: r.received)


def read_requests(path: Path, since: int = 0) -> list[Request]:
    """Every request logged after byte ``since`` (see :meth:`AuditReader.requests`)."""
    return AuditReader(path, since).requests()


# -- leadership ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LeaseWrite:
    """A successful create or update of a Lease, with the holder it wrote."""

    holder: str
    user: str
    received: datetime
    completed: datetime
    resource_version: int
    spec: dict[str, Any]


def lease_writes(requests: Iterable[Request], namespace: str, name: str) -> list[LeaseWrite]:
    """The Lease's successful writes in the order etcd committed them (by resourceVersion)."""
    writes = []
    for r in requests:
        if (r.group, r.resource, r.subresource, r.namespace, r.name) != (
            "coordination.k8s.io",
            "leases",
            "",
            namespace,
            name,
        ):
            continue
        if r.verb not in ("create", "update", "patch") or not r.succeeded or not r.response_object:
            continue
        spec = r.response_object.get("spec") or {}
        writes.append(
            LeaseWrite(
                holder=spec.get("holderIdentity") or "",
                user=r.user,
                received=r.received,
                completed=r.completed,
                resource_version=int(r.response_object["metadata"]["resourceVersion"]),
                spec=spec,
            )
        )
    writes.sort(key=lambda w: w.resource_version)
    return writes


@dataclass(frozen=True, slots=True)
class Term:
    """One holder's uninterrupted hold of the Lease.

    ``start``: its acquiring write returned (it may act from then on); ``end``: the next write naming
    another holder, or none (a release), was received (it must have stopped acting by then); None
    while it still holds the Lease. ``acquire`` is that first write."""

    holder: str
    user: str
    start: datetime
    end: datetime | None
    acquire: LeaseWrite


def leadership_terms(writes: list[LeaseWrite]) -> list[Term]:
    """The terms in order; a released Lease (empty holder) is nobody's term."""
    terms: list[Term] = []
    i = 0
    while i < len(writes):
        first = writes[i]
        j = i
        while j + 1 < len(writes) and writes[j + 1].holder == first.holder:
            j += 1
        end = writes[j + 1].received if j + 1 < len(writes) else None
        if first.holder:
            terms.append(Term(first.holder, first.user, first.completed, end, first))
        i = j + 1
    return terms


def outside_terms(actions: Iterable[Request], terms: list[Term]) -> list[Request]:
    """The actions (bindings, say) that no term of their own user covers from receipt to completion."""
    strays = []
    for action in actions:
        covered = any(
            t.user == action.user and t.start <= action.received and (t.end is None or action.completed <= t.end)
            for t in terms
        )
        if not covered:
            strays.append(action)
    return strays


# -- scheduling -----------------------------------------------------------------------------------------
def bindings(requests: Iterable[Request], *, successful: bool = True) -> list[Request]:
    """``POST pods/{name}/binding`` requests (only the accepted ones unless ``successful`` is False)."""
    return [
        r
        for r in requests
        if r.resource == "pods"
        and r.subresource == "binding"
        and r.verb == "create"
        and (r.succeeded or not successful)
    ]


def binding_target(binding: Request) -> str:
    """The node a binding names (the policy logs the request body of bindings)."""
    body = binding.request_object or {}
    return str((body.get("target") or {}).get("name") or "")


def deletions(requests: Iterable[Request], resource: str, group: str = "") -> dict[str, Request]:
    """The first successful delete of each object of ``resource``, by name."""
    found: dict[str, Request] = {}
    for r in requests:
        if r.verb == "delete" and r.group == group and r.resource == resource and r.succeeded and r.name:
            found.setdefault(r.name, r)
    return found
