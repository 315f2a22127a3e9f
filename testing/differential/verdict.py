"""A scheduler's first decision about a pod, in a shape both sides fill in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BOUND = "bound"
UNSCHEDULABLE = "unschedulable"
PREEMPTED = "preempted"
#: No decision seen (upstream timed out, or kubesched never attempted the pod).
NONE = "none"


@dataclass(frozen=True)
class Verdict:
    """``node`` is where the pod was bound, or the nominated node of a preemption; ``message`` the
    FailedScheduling text of a failed attempt (a preemption's too: its filter diagnosis);
    ``victims`` the names of the pods a preemption deletes; ``ties`` (kubesched only) the feasible
    nodes sharing the best total score."""

    kind: str
    node: str | None = None
    message: str | None = None
    victims: tuple[str, ...] = ()
    ties: tuple[str, ...] = field(default=(), compare=False)
    #: kubesched only: node -> {plugin: weighted score} of the feasible nodes, so that a comparison can
    #: recompute the ties under another version's scoring rules.
    scores: dict[str, dict[str, int]] = field(default_factory=dict, compare=False)
    #: A bound pod's claims, entry by entry, with the allocation written to each
    #: (:mod:`testing.differential.allocations`); empty for a pod without claims.
    devices: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.node is not None:
            out["node"] = self.node
        if self.message is not None:
            out["message"] = self.message
        if self.victims:
            out["victims"] = list(self.victims)
        if self.ties:
            out["ties"] = list(self.ties)
        if self.scores:
            out["scores"] = self.scores
        if self.devices:
            out["devices"] = self.devices
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            data["kind"],
            data.get("node"),
            data.get("message"),
            tuple(data.get("victims") or ()),
            tuple(data.get("ties") or ()),
            dict(data.get("scores") or {}),
            dict(data.get("devices") or {}),
        )

    def __str__(self) -> str:
        if self.kind == BOUND:
            ties = f" (ties: {', '.join(self.ties)})" if self.ties else ""
            return f"bound to {self.node}{ties}"
        if self.kind == PREEMPTED:
            return f"preempted on {self.node}, victims [{', '.join(sorted(self.victims))}]: {self.message}"
        if self.kind == UNSCHEDULABLE:
            return f"unschedulable: {self.message}"
        return "no decision"
