"""The human summary of a simulation: what got scheduled, what did not and why, and how full each node is.

A pending pod's reason is its last attempt's message, the FailedScheduling text kube-scheduler
would have put in an event (``0/12 nodes are available: …``), so the summary explains rather than
merely counts. Utilisation is read from the cluster after the run: requests of the pods bound to a
node against the node's allocatable, exactly what NodeResourcesFit compares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY, PODS, is_extended_resource_name
from kubesched.sim.node_pools import natural_key

if TYPE_CHECKING:
    from kubesched.sim.simulate import SimulationResult


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """Requested vs allocatable on one node (cpu in millicores, memory in bytes)."""

    name: str
    cpu_requested: int
    cpu_allocatable: int
    memory_requested: int
    memory_allocatable: int
    pods: int
    pods_allocatable: int
    unschedulable: bool = False
    #: Extended resources (e.g. ``nvidia.com/gpu``): name -> (requested, allocatable).
    extended: Mapping[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PendingPod:
    pod: str
    reason: str
    nominated_node: str | None = None


def node_usage(result: SimulationResult) -> list[NodeUsage]:
    """Per node usage after the run, in natural name order (node-2 before node-10); terminal pods do not count."""
    requested: dict[str, dict[str, int]] = {}
    counts: dict[str, int] = {}
    for raw in result.pods():
        pod = Pod.from_dict(raw)
        if not pod.node_name or pod.is_terminal:
            continue
        into = requested.setdefault(pod.node_name, {})
        for name, value in pod.requests.items():
            into[name] = into.get(name, 0) + value
        counts[pod.node_name] = counts.get(pod.node_name, 0) + 1
    usage = []
    for raw in result.nodes():
        node = Node.from_dict(raw)
        req = requested.get(node.name, {})
        extended = {name: (req.get(name, 0), alloc) for name, alloc in sorted(node.allocatable.items())
                    if is_extended_resource_name(name)}
        usage.append(NodeUsage(
            name=node.name,
            cpu_requested=req.get(CPU, 0),
            cpu_allocatable=node.allocatable.get(CPU, 0),
            memory_requested=req.get(MEMORY, 0),
            memory_allocatable=node.allocatable.get(MEMORY, 0),
            pods=counts.get(node.name, 0),
            pods_allocatable=node.allocatable.get(PODS, 0),
            unschedulable=node.unschedulable,
            extended=extended,
        ))
    return sorted(usage, key=lambda u: natural_key(u.name))


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
    deleted = set(result.deleted)
    for key, node in result.final.items():
        if node is not None or key in deleted:
            continue
        if key in last_message:
            reason = last_message[key]
            if key in looping:
                reason += " (retried with no cluster change; the simulation stopped retrying it)"
        elif key in gated:
            reason = f"waiting for scheduling gates {gated[key]}"
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
    """The simulated pods grouped by owning workload, in order of first appearance."""
    deleted = set(result.deleted)
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for key, node in result.final.items():
        workload = result.workloads.get(key)
        if workload is None or key in deleted:
            continue
        groups.setdefault(workload, []).append((key, node))
    return [WorkloadPods(w, len(members), sum(1 for _, n in members if n),
                         tuple(k for k, n in members if not n)) for w, members in groups.items()]


def preemptions(result: SimulationResult) -> dict[str, tuple[str, str]]:
    """Victim -> (preemptor, node it was nominated to), from the attempts that preempted."""
    out = {}
    for summary in result.summaries:
        for victim in summary.victims:
            out[victim] = (summary.pod, summary.nominated_node or "?")
    return out


def _condition_messages(result: SimulationResult) -> dict[str, str]:
    """Pod -> message of its PodScheduled=False condition (what the scheduler last said about it)."""
    out = {}
    for raw in result.pods():
        for condition in (raw.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                meta = raw.get("metadata") or {}
                out[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = str(condition.get("message") or "")
    return out


_LEFT_OUT = re.compile(r'^profile "(?P<profile>[^"]*)": plugin (?P<plugin>\S+) is not implemented in kubesched yet; '
                       r"it is left out of the effective plugin set$")


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
        f'profile "{w}": not implemented in kubesched yet, left out: {", ".join(left_out[w])}'
        if w in left_out else w
        for w in out
    ]


def _gated_pods(result: SimulationResult) -> dict[str, list[str]]:
    gated = {}
    for raw in result.pods():
        pod = Pod.from_dict(raw)
        if pod.scheduling_gates and not pod.node_name:
            gated[pod.key] = list(pod.scheduling_gates)
    return gated


def format_summary(result: SimulationResult, *, verbose: bool = False) -> str:
    """The text ``kubesched simulate`` prints."""
    lines: list[str] = []
    total = len(result.final)
    scheduled = {k: n for k, n in result.final.items() if n is not None}
    lines.append(
        f"Scheduled {len(scheduled)}/{total} pending pods in {result.attempt_count} attempts "
        f"({result.virtual_seconds:.1f}s of virtual time)."
    )
    if verbose and scheduled:
        lines.append("")
        lines.append("Scheduled:")
        width = max(len(k) for k in scheduled)
        lines.extend(f"  {key:<{width}}  -> {node}" for key, node in scheduled.items())
    if result.deleted:
        preemptors = preemptions(result)
        lines.append("")
        lines.append(f"Preempted {len(result.deleted)} (deleted as victims):")
        for key in result.deleted:
            by = preemptors.get(key)
            lines.append(f"  {key}: preempted by {by[0]} on {by[1]}" if by else f"  {key}")
    workloads = workload_pods(result)
    if workloads:
        lines.append("")
        lines.append("Workloads:")
        for w in workloads:
            line = f"  {w.workload}: {w.scheduled}/{w.total} scheduled"
            if w.pending:
                names = [k.split("/", 1)[1] for k in w.pending]
                shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
                line += f"; {len(w.pending)} pending: {shown}"
            lines.append(line)
    if shows_over_time(result):
        lines.append("")
        lines.extend(format_over_time(result))
    pending = pending_pods(result)
    if pending:
        lines.append("")
        lines.append(f"Pending {len(pending)}:")
        for p in pending:
            nominated = f" [nominated: {p.nominated_node}]" if p.nominated_node else ""
            lines.append(f"  {p.pod}{nominated}: {p.reason}")
    groups = pod_groups(result)
    if groups:
        lines.append("")
        lines.append(f"Pod groups {len(groups)}:")
        lines.extend(f"  {g}" for g in groups)
    if result.warnings:
        lines.append("")
        lines.append("Warnings:")
        lines.extend(f"  {w}" for w in group_warnings(result.warnings))
    usage = node_usage(result)
    if usage:
        lines.append("")
        lines.append(format_usage_table(usage))
    return "\n".join(lines)


def shows_over_time(result: SimulationResult) -> bool:
    """Whether the run is told over virtual time (a timed run, or one whose pods completed): the summary's
    "Over …" lines and the HTML report's chart then read the same samples, ``result.series``."""
    return result.series is not None and bool(result.series.times) and bool(result.timed or result.completed)


def format_over_time(result: SimulationResult) -> list[str]:
    """Pending pods, requested share of allocatable and bind latency over the run's virtual time."""
    series = result.series
    if series is None or not series.times:
        return []
    lines = [f"Over {result.virtual_seconds:.0f}s of virtual time ({len(series.times)} samples, "
             f"{result.completed} pods completed):",
             f"  pending pods: max {max(series.pending)}, at the end {series.pending[-1]}"]
    for name, share in series.utilisation().items():
        lines.append(f"  {name} requested/allocatable: mean {share['mean']:.0%}, peak {share['peak']:.0%}")
    latency = series.latency_percentiles()
    if latency:
        lines.append("  creation-to-bound latency: " + ", ".join(
            f"{k} {_seconds(v)}" for k, v in latency.items()))
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
        line = (f"{full}: {phase}, {status.get('scheduled', 0)}/{(group.get('spec') or {}).get('minMember', 0)} "
                "members scheduled")
        why = next((reasons[k] for k in sorted(reasons) if group_of.get(k) == full), "")
        if why:
            line += f"; pending: {why}"
        out.append(line)
    return out


def format_usage_table(usage: list[NodeUsage]) -> str:
    """A fixed-width table: cpu, memory and pods requested vs allocatable per node."""
    extended_names = sorted({name for u in usage for name in u.extended})
    header = ["NODE", "CPU", "CPU%", "MEMORY", "MEM%", "PODS", *extended_names]
    rows = [header]
    for u in usage:
        name = u.name + (" (cordoned)" if u.unschedulable else "")
        rows.append([
            name,
            f"{format_cpu(u.cpu_requested)}/{format_cpu(u.cpu_allocatable)}",
            _percent(u.cpu_requested, u.cpu_allocatable),
            f"{format_bytes(u.memory_requested)}/{format_bytes(u.memory_allocatable)}",
            _percent(u.memory_requested, u.memory_allocatable),
            f"{u.pods}/{u.pods_allocatable}",
            *(f"{u.extended[n][0]}/{u.extended[n][1]}" if n in u.extended else "-" for n in extended_names),
        ])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {2, 4}
    return "\n".join(
        "  ".join(cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths,
                                                                                                     strict=True)))
        .rstrip()
        for row in rows
    )


def format_cpu(milli: int) -> str:
    """Cores, trailing zeros trimmed: ``7910`` -> ``7.91``, ``250`` -> ``0.25``, ``4000`` -> ``4``."""
    whole, frac = divmod(milli, 1000)
    return f"{whole}.{frac:03d}".rstrip("0") if frac else str(whole)


def format_bytes(value: int) -> str:
    """Binary units with one decimal at most: ``1.5Gi``, ``512Mi``, ``0``."""
    for suffix, scale in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if value >= scale:
            amount = value / scale
            return f"{amount:.0f}{suffix}" if amount == int(amount) or amount >= 100 else f"{amount:.1f}{suffix}"
    return str(value)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"
