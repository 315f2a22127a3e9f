"""The summary as one JSON document (``kubesched simulate -o json``), for scripts and dashboards.

The document holds what the text summary says, in full: every pod's outcome, every deletion with its
reason, every node (the text lists a few past 20 nodes). Its shape is versioned by ``schemaVersion``
and documented field by field in docs/simulation.md ("The summary as JSON"); a field is only ever
added within a version, so readers may ignore what they do not know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.sim.deletions import COMPLETED, PREEMPTED
from kubesched.sim.pools import pool_label, pool_of
from kubesched.sim.report import group_warnings, pending_pods, pod_groups, workload_pods
from kubesched.sim.usage import NodeUsage, node_usage, pool_usage

if TYPE_CHECKING:
    from kubesched.sim.simulate import SimulationResult

SCHEMA_VERSION = 1
KIND = "SimulationSummary"

SCHEDULED = "Scheduled"
COMPLETED_OUTCOME = "Completed"
PENDING = "Pending"
DELETED = "Deleted"


def summary_document(result: SimulationResult, *, group_by: str | None = None) -> dict[str, Any]:
    """The summary of ``result`` as plain data (see the module docstring); ``group_by`` names the pools'
    label (default: :func:`~kubesched.sim.pools.pool_label`)."""
    pods = pod_outcomes(result)
    usage = node_usage(result)
    label = group_by or pool_label(u.labels for u in usage)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "emulatedVersion": result.emulated,
        "kind": KIND,
        "total": len(pods),
        "scheduled": sum(1 for p in pods if p["outcome"] in (SCHEDULED, COMPLETED_OUTCOME)),
        "pending": sum(1 for p in pods if p["outcome"] == PENDING),
        "deleted": sum(1 for p in pods if p["outcome"] == DELETED),
        "attempts": result.attempt_count,
        "virtualSeconds": result.virtual_seconds,
        "timed": result.timed,
        "pods": pods,
        "preemptions": [
            {"victim": d.pod, "preemptor": d.by, "node": d.node, "at": d.at}
            for d in result.deletions
            if d.reason == PREEMPTED
        ],
        "deletions": [d.to_dict() for d in result.deletions],
        "workloads": [
            {"workload": w.workload, "pods": w.total, "scheduled": w.scheduled, "pending": list(w.pending)}
            for w in workload_pods(result)
        ],
        "podGroups": pod_groups(result),
        "overTime": over_time(result),
        "warnings": group_warnings(result.warnings),
        "poolLabel": label,
        "pools": [
            {"pool": p.pool, "nodes": p.nodes, "cordoned": p.cordoned, **_resources(p.total)}
            for p in pool_usage(usage, label)
        ],
        "nodes": [
            {
                "name": u.name,
                "pool": pool_of(u.labels, label),
                "unschedulable": u.unschedulable,
                "use": round(u.use, 4),
                **_resources(u),
            }
            for u in usage
        ],
    }


def pod_outcomes(result: SimulationResult) -> list[dict[str, Any]]:
    """Per pod of ``result.final``: outcome, node, workload and, pending or deleted, why."""
    pending = {p.pod: p for p in pending_pods(result)}
    removed = set(result.removed)
    last_deletion = {d.pod: d for d in result.deletions}
    out = []
    for key, node in result.final.items():
        entry: dict[str, Any] = {
            "pod": key,
            "outcome": SCHEDULED,
            "node": node,
            "workload": result.workloads.get(key),
            "reason": None,
        }
        deletion = last_deletion.get(key)
        if key in removed:
            entry.update(
                outcome=DELETED, node=deletion.node if deletion else None, reason=deletion.reason if deletion else None
            )
        elif key in pending:
            entry.update(outcome=PENDING, reason=pending[key].reason, nominatedNode=pending[key].nominated_node)
        elif node is not None and deletion is not None and deletion.reason == COMPLETED:
            entry["outcome"] = COMPLETED_OUTCOME
        out.append(entry)
    return out


def over_time(result: SimulationResult) -> dict[str, Any] | None:
    """The run over virtual time (samples, pending pods, use, latency); None when nothing was sampled."""
    series = result.series
    if series is None or not series.times:
        return None
    return {
        "samples": len(series.times),
        "completed": result.completed,
        "pendingMax": max(series.pending),
        "pendingAtEnd": series.pending[-1],
        "utilisation": series.utilisation(),
        "latencySeconds": series.latency_percentiles(),
    }


def _resources(u: NodeUsage) -> dict[str, Any]:
    return {
        "cpu": {"requested": u.cpu_requested, "allocatable": u.cpu_allocatable},
        "memory": {"requested": u.memory_requested, "allocatable": u.memory_allocatable},
        "pods": {"requested": u.pods, "allocatable": u.pods_allocatable},
        "extended": {name: {"requested": req, "allocatable": alloc} for name, (req, alloc) in u.extended.items()},
    }
