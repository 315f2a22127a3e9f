"""Pending pods grouped by cause: the diagnosis of each pod's last attempt, pods alike counted together.

kube-scheduler's FailedScheduling message counts the nodes each Filter plugin rejected for each reason
(``0/12 nodes are available: 3 Insufficient nvidia.com/gpu, 9 node(s) had untolerated taint …``). The
cause of a pending pod is that diagnosis without the counts: the set of (plugin, reason) pairs its last
attempt's rejected nodes carry (a node short of cpu and memory counts for both). Pods with the same set
are one group, whatever the node counts, so 20 replicas short of GPUs are one line, not twenty; a pod
never attempted (gated, no profile) is grouped by why. The per-node verdicts stay with each pod (its
last attempt in the trace's shape), for :mod:`kubesched.sim.explain` to render.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.recording.trace import SCHEDULED
from kubesched.sim.report import pending_pods

if TYPE_CHECKING:
    from kubesched.sim.simulate import SimulationResult

#: A cause: (Filter plugin, its reasons joined), or ("", why) for a pod no node was evaluated for.
Cause = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Why one pod is pending: its last attempt's message, its causes with how many nodes each, the
    record of that attempt (the trace's shape; None when never attempted) and how many attempts it had."""

    pod: str
    message: str
    causes: Mapping[Cause, int]
    record: Mapping[str, Any] | None = None
    attempts: int = 0

    @property
    def key(self) -> tuple[Cause, ...]:
        return tuple(sorted(self.causes))


@dataclass
class PendingGroup:
    """Pods pending for the same causes."""

    key: tuple[Cause, ...]
    pods: list[Diagnosis] = field(default_factory=list)

    @property
    def plugins(self) -> set[str]:
        return {plugin for plugin, _ in self.key if plugin}

    def node_counts(self, cause: Cause) -> tuple[int, int]:
        """The fewest and most nodes any pod of the group was rejected on for ``cause``."""
        counts = [d.causes.get(cause, 0) for d in self.pods]
        return min(counts), max(counts)

    def describe(self) -> str:
        """``NodeResourcesFit: Insufficient cpu (3 nodes), Insufficient memory (1 node); TaintToleration: …``;
        a node count that differs between the group's pods is a range."""
        by_plugin: dict[str, list[str]] = {}
        for cause in self.key:
            plugin, reason = cause
            low, high = self.node_counts(cause)
            if not plugin:
                by_plugin.setdefault("", []).append(reason)
                continue
            nodes = f"{low}" if low == high else f"{low}-{high}"
            by_plugin.setdefault(plugin, []).append(f"{reason} ({nodes} node{'' if high == 1 else 's'})")
        return "; ".join(
            f"{plugin}: {', '.join(parts)}" if plugin else ", ".join(parts) for plugin, parts in by_plugin.items()
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "causes": [{"plugin": p, "reason": r, "nodes": list(self.node_counts((p, r)))} for p, r in self.key],
            "summary": self.describe(),
            "count": len(self.pods),
            "pods": [d.pod for d in self.pods],
        }


def causes_of(record: Mapping[str, Any] | None, message: str) -> dict[Cause, int]:
    """(plugin, reason) -> nodes, from an attempt's rejected nodes; ("", message) when there are none."""
    causes: dict[Cause, int] = {}
    for entry in ((record or {}).get("filter") or {}).values():
        plugin = str(entry.get("plugin") or "")
        # Each reason counts on its own, as the FailedScheduling message counts them.
        for reason in [str(r) for r in entry.get("reasons") or []] or [str(entry.get("code") or "")]:
            causes[(plugin, reason)] = causes.get((plugin, reason), 0) + 1
    return causes or {("", _first_sentence(message)): 0}


def _first_sentence(message: str) -> str:
    """The diagnosis part of a message without node counts (``0/0 nodes are available`` and the like)."""
    return message.split(" preemption: ")[0].strip() or "no reason recorded"


def group(diagnoses: Iterable[Diagnosis]) -> list[PendingGroup]:
    """Pods grouped by cause, the largest group first (then the order of their first pod)."""
    groups: dict[tuple[Cause, ...], PendingGroup] = {}
    for diagnosis in diagnoses:
        groups.setdefault(diagnosis.key, PendingGroup(diagnosis.key)).pods.append(diagnosis)
    return sorted(groups.values(), key=lambda g: -len(g.pods))


def diagnoses_of_result(result: SimulationResult) -> list[Diagnosis]:
    """The pods a simulation left pending, each with its last attempt (the run must have kept full records
    for the per-node verdicts; without them the message alone is the cause)."""
    attempts: Sequence[Any] = getattr(result.records, "attempts", ())
    last: dict[str, int] = {}
    counts: dict[str, int] = {}
    for index, attempt in enumerate(attempts):
        last[attempt.pod] = index
        counts[attempt.pod] = counts.get(attempt.pod, 0) + 1
    out = []
    for pending in pending_pods(result):
        at = last.get(pending.pod)
        record = result.records[at].to_dict(raw_scores=True) if at is not None else None
        out.append(
            Diagnosis(
                pending.pod, pending.reason, causes_of(record, pending.reason), record, counts.get(pending.pod, 0)
            )
        )
    return out


def diagnoses_of_trace(records: Iterable[Mapping[str, Any]]) -> list[Diagnosis]:
    """The pods whose last attempt in a trace did not schedule them, with that attempt."""
    last: dict[str, Mapping[str, Any]] = {}
    counts: dict[str, int] = {}
    for record in records:
        pod = str(record.get("pod"))
        last.pop(pod, None)  # re-inserted: the order is the pods' last attempts
        last[pod] = record
        counts[pod] = counts.get(pod, 0) + 1
    out = []
    for pod, record in last.items():
        if record.get("result") == SCHEDULED:
            continue
        message = " ".join(str(record.get("message") or record.get("result") or "").split())
        out.append(Diagnosis(pod, message, causes_of(record, message), record, counts[pod]))
    return out
