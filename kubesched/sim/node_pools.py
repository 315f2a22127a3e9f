"""Nodes grouped into pools for the HTML report, and how full each node is for every resource pods request.

A pool is the set of nodes sharing one label's value. Without ``--group-by`` the label is the
first of the managed node-pool labels that some node carries (GKE, EKS, Karpenter, AKS), else the
instance type, else the zone; with none of them every node is in one pool. Nodes without the chosen
label form a pool of their own. Pools and nodes come in natural order (``node-2`` before ``node-10``).

Usage is read from the cluster after the run, as the text summary's node table reads it: requests of
the pods bound to a node (terminal pods do not count) against the node's allocatable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.sim.pools import natural_key
from kubesched.sim.pools import pool_label as find_pool_label

ALL_NODES = "all nodes"


def natural_sorted(names: Iterable[str]) -> list[str]:
    return sorted(names, key=natural_key)


def pool_label(labels: Iterable[Mapping[str, str]], group_by: str | None = None) -> str | None:
    """The label that names the pools: ``group_by`` if given, else the one :mod:`kubesched.sim.pools`
    finds on the nodes, else None (one pool)."""
    return group_by or find_pool_label(labels)


def resource_order(names: Iterable[str]) -> list[str]:
    """cpu, memory and ephemeral-storage first, the others (extended resources) by name, pods last."""
    wanted = {CPU, MEMORY, *names}
    first = [n for n in (CPU, MEMORY, EPHEMERAL_STORAGE) if n in wanted]
    return first + sorted(wanted - {*first, PODS}) + [PODS]


@dataclass(frozen=True, slots=True)
class Pool:
    name: str
    #: Rows of :attr:`ClusterUsage.nodes` in this pool, in natural order.
    rows: np.ndarray


@dataclass(frozen=True, slots=True)
class ClusterUsage:
    """Requested and allocatable per node (rows, natural order) and resource (columns)."""

    nodes: list[str]
    cordoned: np.ndarray
    #: cpu, memory, every other resource some pod requests, and pods (the count of pods bound).
    resources: list[str]
    requested: np.ndarray
    allocatable: np.ndarray
    #: The label the pools are made from (None: one pool of every node).
    label: str | None
    pools: list[Pool]

    def percent(self) -> np.ndarray:
        """Requested as % of allocatable per node and resource; NaN where the node has none of it."""
        with np.errstate(divide="ignore", invalid="ignore"):
            out: np.ndarray = 100.0 * self.requested / self.allocatable
        out[self.allocatable <= 0] = np.nan
        return out


def cluster_usage(
    nodes: Iterable[Node], pods: Iterable[Pod], group_by: str | None = None, also_requested: Iterable[str] = ()
) -> ClusterUsage:
    """Usage of the cluster's ``nodes`` by its ``pods``, for cpu, memory, the resources any of the pods
    requests (and those in ``also_requested``, e.g. what pods that are gone requested), and pods."""
    ordered = sorted(nodes, key=lambda n: natural_key(n.name))
    row = {n.name: i for i, n in enumerate(ordered)}
    by_node: list[dict[str, int]] = [{} for _ in ordered]
    wanted: set[str] = set(also_requested)
    for pod in pods:
        wanted.update(name for name, value in pod.requests.items() if value)
        i = row.get(pod.node_name) if pod.node_name else None
        if i is None or pod.is_terminal:
            continue
        into = by_node[i]
        for name, value in pod.requests.items():
            into[name] = into.get(name, 0) + value
        into[PODS] = into.get(PODS, 0) + 1
    resources = resource_order(wanted)
    shape = (len(ordered), len(resources))
    requested = np.array([[req.get(r, 0) for r in resources] for req in by_node], dtype=np.float64).reshape(shape)
    allocatable = np.array([[n.allocatable.get(r, 0) for r in resources] for n in ordered], dtype=np.float64).reshape(
        shape
    )
    label = pool_label((n.labels for n in ordered), group_by)
    return ClusterUsage(
        nodes=[n.name for n in ordered],
        cordoned=np.array([n.unschedulable for n in ordered], bool),
        resources=resources,
        requested=requested,
        allocatable=allocatable,
        label=label,
        pools=make_pools(ordered, label),
    )


def make_pools(nodes: Sequence[Node], label: str | None) -> list[Pool]:
    """Nodes (already in natural order) grouped by ``label``'s value; those without it last."""
    if label is None:
        return [Pool(ALL_NODES, np.arange(len(nodes)))] if nodes else []
    members: dict[str | None, list[int]] = {}
    for i, node in enumerate(nodes):
        members.setdefault(node.labels.get(label), []).append(i)
    named = natural_sorted(k for k in members if k is not None)
    pools = [Pool(name, np.array(members[name])) for name in named]
    if None in members:
        pools.append(Pool(f"without {label}", np.array(members[None])))
    return pools


@dataclass(frozen=True, slots=True)
class PoolStats:
    """One resource over one pool's nodes that offer it: node utilisation quartiles and the pool's total."""

    pool: str
    nodes: int
    minimum: float
    q1: float
    median: float
    q3: float
    maximum: float
    mean: float
    requested: float
    allocatable: float

    @property
    def total_percent(self) -> float:
        return 100.0 * self.requested / self.allocatable if self.allocatable else 0.0


def pool_stats(usage: ClusterUsage, column: int) -> list[PoolStats]:
    """Per pool, for resource ``column``: the distribution of its nodes' requested % of allocatable.

    Nodes that offer none of the resource are left out; a pool with no such node has no entry."""
    percent = usage.percent()[:, column]
    out = []
    for pool in usage.pools:
        values = percent[pool.rows]
        offered = values[~np.isnan(values)]
        if not len(offered):
            continue
        low, q1, median, q3, high = (float(v) for v in np.percentile(offered, [0, 25, 50, 75, 100]))
        out.append(
            PoolStats(
                pool.name,
                len(offered),
                low,
                q1,
                median,
                q3,
                high,
                float(offered.mean()),
                float(usage.requested[pool.rows, column].sum()),
                float(usage.allocatable[pool.rows, column].sum()),
            )
        )
    return out
