"""How full each node is after a simulation, and the node table of the summary at any cluster size.

Use is read from the cluster after the run: requests of the pods bound to a node against the node's
allocatable, exactly what NodeResourcesFit compares. A small cluster's table lists every node; past
:data:`LIST_ALL_UP_TO` nodes the summary shows each pool's total (:mod:`kubesched.sim.pools`) and the
:data:`DEFAULT_SHOWN` most and least used nodes, a node's use being the larger of its cpu and memory
shares, so that 5,000 nodes take a screen rather than 5,000 lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY, PODS, is_extended_resource_name
from kubesched.sim.pools import natural_key, pool_label, pool_of

if TYPE_CHECKING:
    from kubesched.sim.simulate import SimulationResult

#: Clusters up to this many nodes list every node by default.
LIST_ALL_UP_TO = 20
#: How many of the most and of the least used nodes a larger cluster's summary lists by default.
DEFAULT_SHOWN = 5
#: ``--nodes``: "all", a count, or None for the default above.
NodesShown = int | Literal["all"] | None


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
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def use(self) -> float:
        """The larger of the cpu and memory shares requested (0 to 1; above 1 when overcommitted)."""
        return max(
            _share(self.cpu_requested, self.cpu_allocatable), _share(self.memory_requested, self.memory_allocatable)
        )


def node_usage(result: SimulationResult) -> list[NodeUsage]:
    """Per node usage after the run, in natural name order (node-2 before node-10); terminal pods do not
    count."""
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
        extended = {
            name: (req.get(name, 0), alloc)
            for name, alloc in sorted(node.allocatable.items())
            if is_extended_resource_name(name)
        }
        usage.append(
            NodeUsage(
                name=node.name,
                cpu_requested=req.get(CPU, 0),
                cpu_allocatable=node.allocatable.get(CPU, 0),
                memory_requested=req.get(MEMORY, 0),
                memory_allocatable=node.allocatable.get(MEMORY, 0),
                pods=counts.get(node.name, 0),
                pods_allocatable=node.allocatable.get(PODS, 0),
                unschedulable=node.unschedulable,
                extended=extended,
                labels=node.labels,
            )
        )
    return sorted(usage, key=lambda u: natural_key(u.name))


@dataclass(frozen=True, slots=True)
class PoolUsage:
    """The nodes of one pool added up: what :class:`NodeUsage` holds for one node."""

    pool: str
    nodes: int
    cordoned: int
    total: NodeUsage


def pool_usage(usage: Iterable[NodeUsage], label: str | None) -> list[PoolUsage]:
    """Per pool (the value of ``label``), the nodes' requests and allocatable summed, pools in natural order."""
    members: dict[str, list[NodeUsage]] = {}
    for u in usage:
        members.setdefault(pool_of(u.labels, label), []).append(u)
    return [
        PoolUsage(pool, len(nodes), sum(u.unschedulable for u in nodes), _sum(pool, nodes))
        for pool, nodes in sorted(members.items(), key=lambda kv: natural_key(kv[0]))
    ]


def _sum(name: str, nodes: Sequence[NodeUsage]) -> NodeUsage:
    extended: dict[str, tuple[int, int]] = {}
    for u in nodes:
        for resource, (req, alloc) in u.extended.items():
            have = extended.get(resource, (0, 0))
            extended[resource] = (have[0] + req, have[1] + alloc)
    return NodeUsage(
        name=name,
        cpu_requested=sum(u.cpu_requested for u in nodes),
        cpu_allocatable=sum(u.cpu_allocatable for u in nodes),
        memory_requested=sum(u.memory_requested for u in nodes),
        memory_allocatable=sum(u.memory_allocatable for u in nodes),
        pods=sum(u.pods for u in nodes),
        pods_allocatable=sum(u.pods_allocatable for u in nodes),
        extended=dict(sorted(extended.items())),
    )


def most_and_least_used(usage: Sequence[NodeUsage], count: int) -> tuple[list[NodeUsage], list[NodeUsage]]:
    """The ``count`` most used nodes (most first) and the ``count`` least used (least first); ties in
    natural name order. When they would overlap, every node is in the first list."""
    if 2 * count >= len(usage):
        return sorted(usage, key=lambda u: natural_key(u.name)), []
    most = sorted(usage, key=lambda u: (-u.use, natural_key(u.name)))[:count]
    least = sorted(usage, key=lambda u: (u.use, natural_key(u.name)))[:count]
    return most, least


def format_nodes(usage: Sequence[NodeUsage], *, shown: NodesShown = None, group_by: str | None = None) -> str:
    """The summary's node section: every node, or the pools and the most and least used nodes.

    ``shown`` is "all", a count of most and least used nodes, or None (every node up to
    :data:`LIST_ALL_UP_TO` nodes, else :data:`DEFAULT_SHOWN`); ``group_by`` names the pool label
    (default: :func:`~kubesched.sim.pools.pool_label`). Pools are shown when grouping was asked for or
    when some nodes are left out."""
    if shown is None:
        shown = "all" if len(usage) <= LIST_ALL_UP_TO else DEFAULT_SHOWN
    count = len(usage) if shown == "all" else shown
    most, least = most_and_least_used(usage, count)
    left_out = len(usage) - len(most) - len(least)
    parts: list[str] = []
    label = group_by or pool_label(u.labels for u in usage)
    if group_by is not None or left_out:
        parts.append(format_pool_table(pool_usage(usage, label), label, len(usage)))
    if not least:
        if most:
            parts.append(format_usage_table(most))
    else:
        pools = {u.name: pool_of(u.labels, label) for u in usage} if label is not None else None
        extended = _extended_names(usage)  # the same columns in both tables
        parts.append(f"Most used {len(most)} of {len(usage)} nodes:\n" + format_usage_table(most, pools, extended))
        parts.append(f"Least used {len(least)}:\n" + format_usage_table(least, pools, extended))
    if left_out:
        parts[-1] += f"\n{left_out} nodes not shown: --nodes all lists every node, --nodes N the N most and least used."
    return "\n\n".join(parts)


def format_pool_table(pools: Sequence[PoolUsage], label: str | None, nodes: int) -> str:
    """The pools' totals under a heading naming the label that groups them."""
    by = f" by {label}" if label is not None else ""
    heading = f"{nodes} nodes in {len(pools)} pool{'s' if len(pools) != 1 else ''}{by}:"
    rows = [([p.pool + (f" ({p.cordoned} cordoned)" if p.cordoned else ""), str(p.nodes)], p.total) for p in pools]
    return heading + "\n" + _table(["POOL", "NODES"], rows)


def format_usage_table(
    usage: Sequence[NodeUsage], pools: Mapping[str, str] | None = None, extended: Sequence[str] | None = None
) -> str:
    """A fixed-width table: cpu, memory and pods requested vs allocatable per node (and its pool), and the
    ``extended`` resources (default: those of these nodes)."""
    rows = [
        ([u.name + (" (cordoned)" if u.unschedulable else ""), *(() if pools is None else (pools[u.name],))], u)
        for u in usage
    ]
    return _table(["NODE", *(() if pools is None else ("POOL",))], rows, extended)


def _extended_names(usage: Iterable[NodeUsage]) -> list[str]:
    return sorted({name for u in usage for name in u.extended})


def _table(
    keys: list[str], rows: Sequence[tuple[Sequence[str], NodeUsage]], extended: Sequence[str] | None = None
) -> str:
    """The ``keys`` columns (each row's leading cells), then the usage columns of the row's usage."""
    extended_names = list(extended) if extended is not None else _extended_names(u for _, u in rows)
    header = [*keys, "CPU", "CPU%", "MEMORY", "MEM%", "PODS", *extended_names]
    table = [header]
    for cells, u in rows:
        table.append(
            [
                *cells,
                f"{format_cpu(u.cpu_requested)}/{format_cpu(u.cpu_allocatable)}",
                _percent(u.cpu_requested, u.cpu_allocatable),
                f"{format_bytes(u.memory_requested)}/{format_bytes(u.memory_allocatable)}",
                _percent(u.memory_requested, u.memory_allocatable),
                f"{u.pods}/{u.pods_allocatable}",
                *(f"{u.extended[n][0]}/{u.extended[n][1]}" if n in u.extended else "-" for n in extended_names),
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    right = {len(keys) + 1, len(keys) + 3}
    return "\n".join(
        "  ".join(
            cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in table
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


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"
