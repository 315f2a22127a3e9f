"""The human summary of a simulation: what got scheduled, what did not and why, and how full each node is.

A pending pod's reason is its last attempt's message, the FailedScheduling text kube-scheduler
would have put in an event (``0/12 nodes are available: …``), so the summary explains rather than
merely counts. Pods deleted during the run are told apart by why (:mod:`kubesched.sim.deletions`):
preemption victims with their preemptor, timeline deletions with their step, completions and
scale-downs counted. The node section (:mod:`kubesched.sim.usage`) fits any cluster size.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubesched.api.objects import Pod
from kubesched.embedded.workloads.manager import GARBAGE_COLLECTED, SCALE_DOWN
from kubesched.sim.deletions import COMPLETED, OTHER, PREEMPTED, TIMELINE, Deletion
from kubesched.sim.usage import (  # noqa: F401  (re-exported: the summary's node figures)
    NodesShown,
    NodeUsage,
    format_bytes,
    format_cpu,
    format_nodes,
    format_usage_table,
    node_usage,
)

if TYPE_CHECKING:
    from kubesched.sim.simulate import SimulationResult

#: How many deletions of one kind the summary lists (all of them with ``verbose``).
LISTED_DELETIONS = 10


@dataclass(frozen=True, slots=True)
class PendingPod:
    pod: str
    reason: str
    nominated_node: str | None = None


def pending_pods(result: SimulationResult) -> list[PendingPod]:
    """Every pending pod left without a node, with why (the last attempt's message, or with nothing
    recorded the message of the pod's PodScheduled condition, which carries the same text)."""
    last_message: dict[str, str] = {}
    for summary in result.summaries:
        last_message[summary.pod] = summary.message or summary.result
    if not result.summaries and result.cluster is not None:
        last_message = _condition_messages(result)
    never = set(result.never_attempted)
    looping = set(result.looping)
    gated = _gated_pods(result)
    out = []
    removed = set(result.removed)
    for key, node in result.final.items():
        if node is not None or key in removed:
            continue
        if key in last_message:
            reason = last_message[key]
            if key in looping:
                reason += " (retried with no cluster change; the simulation stopped retrying it)"
        elif key in gated:
            reason = f"waiting for scheduling gates {gated[key]}"
        elif key in result.claims_not_made:
            reason = f"waiting for its ResourceClaims: {result.claims_not_made[key]}"
        elif key in never:
            reason = "never attempted: its schedulerName matches no profile"
        else:
            reason = "never attempted"
        out.append(PendingPod(key, reason, result.nominated.get(key)))
    return out


@dataclass(frozen=True, slots=True)
class WorkloadPods:
    """The pods of one workload (its top owner: a ReplicaSet's Deployment), scheduled or not."""

    workload: str
    total: int
    scheduled: int
    pending: tuple[str, ...]


def workload_pods(result: SimulationResult) -> list[WorkloadPods]:
    """The simulated pods grouped by owning workload, in order of first appearance; pods removed before
    they ran their course (preempted, scaled down, deleted) no longer count."""
    removed = set(result.removed)
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for key, node in result.final.items():
        workload = result.workloads.get(key)
        if workload is None or key in removed:
            continue
        groups.setdefault(workload, []).append((key, node))
    return [
        WorkloadPods(w, len(members), sum(1 for _, n in members if n), tuple(k for k, n in members if not n))
        for w, members in groups.items()
    ]


def preemptions(result: SimulationResult) -> dict[str, tuple[str, str]]:
    """Victim -> (preemptor, the node it was deleted from), for every pod deleted as a victim."""
    return {d.pod: (d.by or "?", d.node or "?") for d in result.deletions if d.reason == PREEMPTED}


def _condition_messages(result: SimulationResult) -> dict[str, str]:
    """Pod -> message of its PodScheduled=False condition (what the scheduler last said about it)."""
    out = {}
    for raw in result.pods():
        for condition in (raw.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                meta = raw.get("metadata") or {}
                out[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = str(condition.get("message") or "")
    return out


_LEFT_OUT = re.compile(
    r'^profile "(?P<profile>[^"]*)": plugin (?P<plugin>\S+) is not implemented in kubesched yet; '
    r"it is left out of the effective plugin set$"
)


def group_warnings(warnings: list[str]) -> list[str]:
    """The scheduler's warnings, with the "plugin not implemented" ones folded into one line per profile."""
    left_out: dict[str, list[str]] = {}
    out: list[str] = []
    for warning in warnings:
        match = _LEFT_OUT.match(warning)
        if match is None:
            out.append(warning)
            continue
        if match["profile"] not in left_out:
            left_out[match["profile"]] = []
            out.append(match["profile"])  # placeholder, keeps the first occurrence's position
        left_out[match["profile"]].append(match["plugin"])
    return [
        f'profile "{w}": not implemented in kubesched yet, left out: {", ".join(left_out[w])}' if w in left_out else w
        for w in out
    ]


def _gated_pods(result: SimulationResult) -> dict[str, list[str]]:
    gated = {}
    for raw in result.pods():
        pod = Pod.from_dict(raw)
        if pod.scheduling_gates and not pod.node_name:
            gated[pod.key] = list(pod.scheduling_gates)
    return gated


def format_summary(
    result: SimulationResult, *, verbose: bool = False, nodes: NodesShown = None, group_by: str | None = None
) -> str:
    """The text ``kubesched simulate`` prints; ``nodes`` and ``group_by`` shape the node section
    (:func:`~kubesched.sim.usage.format_nodes`)."""
    total = len(result.final)
    scheduled = {k: n for k, n in result.final.items() if n is not None}
    # Pods deleted before they ran their course are neither scheduled nor pending: say so, so that it adds up.
    removed = f"; {len(result.removed)} deleted" if result.removed else ""
    decided_by = f"; kube-scheduler v{result.emulated}" if result.emulated else ""
    sections = [
        [
            f"Scheduled {len(scheduled)}/{total} pending pods in {result.attempt_count} attempts "
            f"({result.virtual_seconds:.1f}s of virtual time{decided_by}){removed}."
        ]
    ]
    if verbose and scheduled:
        width = max(len(k) for k in scheduled)
        sections.append(["Scheduled:", *(f"  {key:<{width}}  -> {node}" for key, node in scheduled.items())])
    sections += [format_preempted(result), format_deletions(result, verbose=verbose), format_workloads(result)]
    if shows_over_time(result):
        sections.append(format_over_time(result))
    pending = pending_pods(result)
    if pending:
        sections.append(
            [
                f"Pending {len(pending)}:",
                *(
                    f"  {p.pod}{f' [nominated: {p.nominated_node}]' if p.nominated_node else ''}: {p.reason}"
                    for p in pending
                ),
            ]
        )
    groups = pod_groups(result)
    if groups:
        sections.append([f"Pod groups {len(groups)}:", *(f"  {g}" for g in groups)])
    if result.warnings:
        sections.append(["Warnings:", *(f"  {w}" for w in group_warnings(result.warnings))])
    usage = node_usage(result)
    if usage:
        sections.append([format_nodes(usage, shown=nodes, group_by=group_by)])
    return "\n\n".join("\n".join(lines) for lines in sections if lines)


def format_preempted(result: SimulationResult) -> list[str]:
    """The preemption victims, each with its preemptor and node."""
    victims = [d for d in result.deletions if d.reason == PREEMPTED]
    if not victims:
        return []
    return [
        f"Preempted {len(victims)} (deleted as victims):",
        *(f"  {d.pod}: preempted by {d.by or '?'} on {d.node or '?'}" for d in victims),
    ]


#: The summary's heading for each reason but preemption, in the order shown; which reasons list pods.
_DELETION_HEADINGS = (
    (TIMELINE, "Deleted by the timeline", True),
    (SCALE_DOWN, "Scaled down", False),
    (GARBAGE_COLLECTED, "Garbage-collected with their owner", False),
    (COMPLETED, "Completed", False),
    (OTHER, "Deleted", True),
)


def format_deletions(result: SimulationResult, *, verbose: bool = False) -> list[str]:
    """Pods deleted for any reason but preemption: a count per reason, the timeline's pods listed
    (every pod of every reason with ``verbose``)."""
    counts = Counter(d.reason for d in result.deletions)
    lines: list[str] = []
    for reason, heading, listed in _DELETION_HEADINGS:
        if not counts[reason]:
            continue
        lines.append(f"{heading}: {counts[reason]}")
        if listed or verbose:
            of_reason = [d for d in result.deletions if d.reason == reason]
            shown = of_reason if verbose else of_reason[:LISTED_DELETIONS]
            lines.extend(f"  {_deletion_line(d)}" for d in shown)
            if len(shown) < len(of_reason):
                lines.append(f"  and {len(of_reason) - len(shown)} more (-v lists them)")
    return lines


def _deletion_line(d: Deletion) -> str:
    where = f" from {d.node}" if d.node else " before it was placed"
    by = f" by {d.by}" if d.by else ""
    return f"{d.pod}{where} at {d.at:.1f}s{by}"


def format_workloads(result: SimulationResult) -> list[str]:
    """Each workload with how many of its pods were scheduled, naming a few pending ones."""
    workloads = workload_pods(result)
    if not workloads:
        return []
    lines = ["Workloads:"]
    for w in workloads:
        line = f"  {w.workload}: {w.scheduled}/{w.total} scheduled"
        if w.pending:
            names = [k.split("/", 1)[1] for k in w.pending]
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            line += f"; {len(w.pending)} pending: {shown}"
        lines.append(line)
    return lines


def shows_over_time(result: SimulationResult) -> bool:
    """Whether the run is told over virtual time (a timed run, or one whose pods completed): the summary's
    "Over …" lines and the HTML report's chart then read the same samples, ``result.series``."""
    return result.series is not None and bool(result.series.times) and bool(result.timed or result.completed)


def format_over_time(result: SimulationResult) -> list[str]:
    """Pending pods, requested share of allocatable and bind latency over the run's virtual time."""
    series = result.series
    if series is None or not series.times:
        return []
    lines = [
        f"Over {result.virtual_seconds:.0f}s of virtual time ({len(series.times)} samples, "
        f"{result.completed} pods completed):",
        f"  pending pods: max {max(series.pending)}, at the end {series.pending[-1]}",
    ]
    for name, share in series.utilisation().items():
        lines.append(f"  {name} requested/allocatable: mean {share['mean']:.0%}, peak {share['peak']:.0%}")
    latency = series.latency_percentiles()
    if latency:
        lines.append("  creation-to-bound latency: " + ", ".join(f"{k} {_seconds(v)}" for k, v in latency.items()))
    return lines


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f}ms" if value < 1 else f"{value:.1f}s"


def pod_groups(result: SimulationResult) -> list[str]:
    """One line per PodGroup (Coscheduling): its phase, members bound against minMember and, for a
    group not scheduled, why (the FailedScheduling reason of a pending member)."""
    if result.cluster is None:
        return []
    groups, _ = result.cluster.list("PodGroup")
    if not groups:
        return []
    group_of = {}
    for pod in result.cluster.list("Pod")[0]:
        meta = pod.get("metadata") or {}
        name = (meta.get("labels") or {}).get("scheduling.x-k8s.io/pod-group")
        if name:
            group_of[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = f"{meta.get('namespace')}/{name}"
    reasons = {p.pod: p.reason for p in pending_pods(result)}
    out = []
    for group in groups:
        meta = group.get("metadata") or {}
        full = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        status = group.get("status") or {}
        phase = status.get("phase") or "Pending"
        line = (
            f"{full}: {phase}, {status.get('scheduled', 0)}/{(group.get('spec') or {}).get('minMember', 0)} "
            "members scheduled"
        )
        why = next((reasons[k] for k in sorted(reasons) if group_of.get(k) == full), "")
        if why:
            line += f"; pending: {why}"
        out.append(line)
    return out
