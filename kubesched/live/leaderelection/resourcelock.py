"""The Lease as a lock: the record client-go keeps in a Lease's spec, and get / create / update of it.

client-go's ``resourcelock`` package (leaselock.go): the spec fields are written as it writes them
(holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions; MicroTimes in UTC,
``2006-01-02T15:04:05.000000Z``), and every update carries the resourceVersion last seen, so a
concurrent writer makes it a Conflict.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubesched.cluster.protocol import ApiError, Cluster

log = logging.getLogger(__name__)

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
    def from_spec(cls, spec: dict[str, Any] | None) -> LeaderElectionRecord:
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

    def to_spec(self) -> dict[str, Any]:
        """The LeaseSpec client-go writes: every field set, holderIdentity "" included."""
        spec: dict[str, Any] = {
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


def _int(value: Any) -> int:
    """A number from the Lease's JSON, 0 when it is missing or not one."""
    try:
        return int(value)
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
        self.lease: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self) -> tuple[LeaderElectionRecord, dict[str, Any]]:
        """The current record and the raw spec (compared to notice any change); NotFound if absent."""
        lease = self.cluster.get("Lease", self.namespace, self.name)
        self.lease = lease
        spec = dict(lease.get("spec") or {})
        return LeaderElectionRecord.from_spec(spec), spec

    def create(self, record: LeaderElectionRecord) -> None:
        self.lease = self.cluster.create(
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": record.to_spec(),
            }
        )

    def update(self, record: LeaderElectionRecord) -> None:
        if self.lease is None:
            raise ApiError("lease not initialized, call get or create first")
        lease = {**self.lease, "spec": record.to_spec()}
        self.lease = self.cluster.update(lease)

    def record_event(self, message: str) -> None:
        """A Normal LeaderElection event on the Lease (best effort, like an event recorder)."""
        meta = (self.lease or {}).get("metadata") or {}
        try:
            self.cluster.record_event(
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {"namespace": self.namespace},
                    "involvedObject": {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "namespace": self.namespace,
                        "name": self.name,
                        "uid": meta.get("uid", ""),
                        "resourceVersion": meta.get("resourceVersion", ""),
                    },
                    "type": "Normal",
                    "reason": "LeaderElection",
                    "message": f"{self.identity} {message}",
                    "source": {"component": "kubesched"},
                }
            )
        except Exception as err:
            log.warning("recording leader election event on %s failed: %s", self.describe(), err)
