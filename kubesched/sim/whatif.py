"""What would let a group of pending pods schedule: the smallest changes, each checked by a simulation.

For a group of pods pending for the same cause (:mod:`kubesched.sim.pending_groups`), four kinds of
change are tried on the scenario (:mod:`kubesched.sim.whatif_edits`) and the whole scenario simulated
again with it, so that an answer is what the scheduler then does, not a guess:

- **the closest node**: of the nodes NodeResourcesFit rejected the group's first pod on (and that offer
  every resource it asks for), the one short of the least (each resource's shortfall as a share of the
  node's allocatable, added up), and by how much per resource; checked by giving that node that much
  more, and more again (as measured in that run) when other pods took part of it first;
- **preemption**: the group's pods given a priority above every pod's (a PriorityClass of the
  what-if's own), so that DefaultPreemption may evict anything: which pods it evicts, from which nodes;
- **more nodes of an existing pool**: copies of a pool's first node (the pool as the summary groups
  nodes), the fewest that schedule the whole group, found as ``plan`` finds them
  (:func:`~kubesched.sim.plan.fewest_fitting`) from a lower bound (what the group requests beyond all
  the free capacity, in template nodes); pools whose node the group's first pod was refused on for a
  reason a copy shares (taints, affinity, cordoned) are not tried, and at most ``max_pools`` are;
- **a constraint relaxed**: for the plugins in the diagnosis, one hard topology spread constraint,
  the node selector, the required node affinity, the required pod (anti-)affinity dropped, or the
  taint that kept the most nodes out tolerated.

A change helps when some of the group's pods then schedule; ``schedules`` says how many of them.
Pods created by a workload are changed through the workload's template; pods whose spec the scenario
does not hold are left as they are.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.config import KubeSchedulerConfiguration
from kubesched.scenario.pipeline import Scenario
from kubesched.sim.deletions import PREEMPTED
from kubesched.sim.node_templates import node_copies, renamed_slice
from kubesched.sim.pending_groups import PendingGroup
from kubesched.sim.plan import fewest_fitting, pending_after
from kubesched.sim.pools import natural_key, pool_label, pool_of
from kubesched.sim.simulate import Simulation, SimulationResult
from kubesched.sim.whatif_edits import (
    HIGHEST_USER_PRIORITY,
    ScenarioEdits,
    SpecEdit,
    preemptor,
    preemptor_class,
    quantity,
    tolerating,
    with_node_selector_dropped,
    without_required,
    without_spread,
)

#: Filter plugins whose verdict on a node a copy of it would share: adding such nodes cannot help.
NODE_PROPERTY_PLUGINS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"})
FIT = "NodeResourcesFit"
DEFAULT_MAX_POOLS = 3
#: Simulations the closest node is grown over at most.
CLOSEST_ROUNDS = 3
#: The most nodes of one pool a what-if adds.
MAX_ADDED = 100


@dataclass
class Remedy:
    """One change tried for a group: what it is, and how many of the group's pods schedule with it."""

    kind: str
    change: str
    schedules: int
    of: int
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def helps(self) -> bool:
        return self.schedules > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "change": self.change,
            "checked": True,
            "helps": self.helps,
            "schedules": self.schedules,
            "of": self.of,
            **self.details,
        }


class WhatIf:
    """The what-if checks for the pending pods of one simulated scenario (see the module docstring)."""

    def __init__(
        self,
        scenario: Scenario,
        config: KubeSchedulerConfiguration,
        base: SimulationResult,
        *,
        seed: int = 0,
        tie_break: str = "random",
        max_pools: int = DEFAULT_MAX_POOLS,
    ) -> None:
        self.config = config
        self.seed = seed
        self.tie_break = tie_break
        self.max_pools = max_pools
        self.base = base
        self.edits = ScenarioEdits(scenario, base)
        self.simulations = 0
        self.nodes = sorted((Node.from_dict(n) for n in base.nodes()), key=lambda n: natural_key(n.name))
        self.pods = {p.key: p for p in (Pod.from_dict(raw) for raw in base.pods())}
        self.requested, self.counts = _node_load(self.pods.values())

    # -- running ----------------------------------------------------------------------------------------
    def run(self, scenario: Scenario) -> SimulationResult:
        self.simulations += 1
        sim = Simulation(scenario, self.config, seed=self.seed, tie_break=self.tie_break)
        sim.load()
        return sim.run()

    def still_pending(self, group: PendingGroup, run: SimulationResult) -> int:
        """How many of the group's pods ``run`` leaves pending; a workload's pods are counted by workload
        (a changed template renames them)."""
        pending = set(pending_after(run))
        by_workload = Counter(run.workloads[k] for k in pending if k in run.workloads)
        count = 0
        for d in group.pods:
            workload = self.base.workloads.get(d.pod)
            if workload is None:
                count += d.pod in pending or d.pod not in run.final
            elif by_workload[workload] > 0:
                by_workload[workload] -= 1
                count += 1
        return count

    def remedies(self, group: PendingGroup) -> list[Remedy]:
        """Every change tried for the group, in the order of the module docstring."""
        if not group.plugins:
            return []  # never attempted (gated, no profile): no change to the cluster helps
        return [*self.closest_node(group), *self.preemption(group), *self.added_nodes(group), *self.relaxed(group)]

    def _remedy(self, group: PendingGroup, kind: str, change: str, run: SimulationResult, **details: Any) -> Remedy:
        of = len(group.pods)
        return Remedy(kind, change, of - self.still_pending(group, run), of, details)

    # -- the closest node -------------------------------------------------------------------------------
    def shortfall(self, pod: Pod, node: Node, requested: Mapping[str, int], count: int) -> dict[str, int]:
        """What ``pod`` needs on ``node`` beyond what is free there (scheduler units; ``pods`` for a slot),
        the node holding ``requested`` for ``count`` pods."""
        short = {r: amount - (node.allocatable.get(r, 0) - requested.get(r, 0)) for r, amount in pod.requests.items()}
        out = {r: v for r, v in short.items() if v > 0}
        if count + 1 > node.allocatable.get("pods", 0):
            out["pods"] = 1
        return out

    def closest_node(self, group: PendingGroup) -> list[Remedy]:
        """The node nearest to taking the group's first pod, grown until a simulation places the pod
        (other pods may take part of what it is given first: up to ``CLOSEST_ROUNDS`` rounds)."""
        first = group.pods[0]
        pod = self.pods.get(first.pod)
        rejected = (first.record or {}).get("filter") or {}
        candidates = [
            n
            for n in self.nodes
            if (rejected.get(n.name) or {}).get("plugin") == FIT
            and pod is not None
            and all(n.allocatable.get(r) for r in pod.requests)
        ]
        if pod is None or not candidates:
            return []

        def short_on(node: Node) -> dict[str, int]:
            return self.shortfall(pod, node, self.requested.get(node.name, {}), self.counts.get(node.name, 0))

        node = min(candidates, key=lambda n: sum(v / (n.allocatable.get(r) or 1) for r, v in short_on(n).items()))
        more: Counter[str] = Counter(short_on(node))
        if not more:
            return []
        for _ in range(CLOSEST_ROUNDS):
            run = self.run(self.edits.node_resized(node.name, more))
            landed = run.final.get(first.pod)
            if landed is not None:
                break
            requested, counts = _node_load(
                Pod.from_dict(p) for p in run.pods() if (p.get("spec") or {}).get("nodeName") == node.name
            )
            grown = node_with(node, more)
            further = self.shortfall(pod, grown, requested.get(node.name, {}), counts.get(node.name, 0))
            if not further:
                break  # room enough, refused for another reason: growing does not help
            more.update(further)
        return [
            Remedy(
                "closestNode",
                f"{node.name} with {_amounts(more)} more",
                int(landed is not None),
                1,
                {
                    "pod": first.pod,
                    "node": node.name,
                    "short": {r: quantity(r, v) for r, v in more.items()},
                    "landedOn": landed,
                },
            )
        ]

    # -- preemption ---------------------------------------------------------------------------------------
    def preemption(self, group: PendingGroup) -> list[Remedy]:
        value = min(HIGHEST_USER_PRIORITY, max((p.priority for p in self.pods.values()), default=0) + 1)
        edited = self.edits.pod_specs_edited([d.pod for d in group.pods], preemptor, [preemptor_class(value)])
        if edited is None:
            return []
        run = self.run(edited[0])
        before = set(self.base.deleted)
        victims = [d for d in run.deletions if d.reason == PREEMPTED and d.pod not in before]
        return [
            self._remedy(
                group,
                "preemption",
                f"priority {value} (above every pod's), preempting "
                f"{len(victims)} pod{'' if len(victims) == 1 else 's'}",
                run,
                priority=value,
                victims=[d.pod for d in victims],
                nodes=sorted({d.node for d in victims if d.node}),
            )
        ]

    # -- more nodes of a pool -------------------------------------------------------------------------------
    def added_nodes(self, group: PendingGroup) -> list[Remedy]:
        out = []
        for pool, template, at_least in self.candidate_pools(group)[: self.max_pools]:
            copies = self._with_slices(template, node_copies(_template(template), min(len(group.pods), MAX_ADDED)))
            runs: dict[int, SimulationResult] = {}

            def fits(
                count: int, copies: list[list[dict[str, Any]]] = copies, runs: dict[int, SimulationResult] = runs
            ) -> bool:
                if count not in runs:
                    runs[count] = self.run(self.edits.nodes_added(o for added in copies[:count] for o in added))
                return self.still_pending(group, runs[count]) == 0

            most = len(copies)
            if not fits(most):
                out.append(
                    self._remedy(
                        group,
                        "addNodes",
                        f"{most} nodes like {template.name} (pool {pool})",
                        runs[most],
                        pool=pool,
                        template=template.name,
                        nodes=most,
                    )
                )
                continue
            count = fewest_fitting(fits, most, at_least)
            out.append(
                self._remedy(
                    group,
                    "addNodes",
                    f"{count} node{'' if count == 1 else 's'} like {template.name} (pool {pool})",
                    runs[count],
                    pool=pool,
                    template=template.name,
                    nodes=count,
                )
            )
        return sorted(out, key=lambda r: (not r.helps, r.details["nodes"]))

    def _with_slices(self, node: Node, copies: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        """Each copy of a pool's node with its own copies of that node's ResourceSlices (its devices)."""
        slices = [
            m.obj
            for m in self.edits.scenario.manifests
            if m.kind == "ResourceSlice" and (m.obj.get("spec") or {}).get("nodeName") == node.name
        ]
        return [[added, *(renamed_slice(s, node.name, added["metadata"]["name"]) for s in slices)] for added in copies]

    def candidate_pools(self, group: PendingGroup) -> list[tuple[str, Node, int]]:
        """(pool, its first schedulable node, the fewest copies that could be enough) for every pool whose
        node the group's first pod was not refused for a reason a copy shares, fewest first."""
        label = pool_label(n.labels for n in self.nodes)
        rejected = (group.pods[0].record or {}).get("filter") or {}
        need: Counter[str] = Counter()
        pods = [self.pods[d.pod] for d in group.pods if d.pod in self.pods]
        for pod in pods:
            need.update(pod.requests)
        free: Counter[str] = Counter()
        for node in self.nodes:
            used = self.requested.get(node.name, {})
            free.update({r: max(0, v - used.get(r, 0)) for r, v in node.allocatable.items()})
        pools: dict[str, Node] = {}
        for node in self.nodes:
            pools.setdefault(f"{label}={pool_of(node.labels, label)}" if label else "all", node)
        out = []
        for pool, node in pools.items():
            if node.unschedulable or (rejected.get(node.name) or {}).get("plugin") in NODE_PROPERTY_PLUGINS:
                continue
            if any(pod.requests.get(r, 0) > node.allocatable.get(r, 0) for pod in pods for r in pod.requests):
                continue  # some pod is bigger than a whole node of the pool
            bound = max(
                (math.ceil(max(0, need[r] - free[r]) / node.allocatable[r]) for r in need if node.allocatable.get(r)),
                default=1,
            )
            out.append((pool, node, max(bound, 1)))
        return sorted(out, key=lambda c: (c[2], natural_key(c[0])))

    # -- a constraint relaxed -----------------------------------------------------------------------------
    def relaxed(self, group: PendingGroup) -> list[Remedy]:
        out = []
        for change, edit in self.relaxations(group):
            edited = self.edits.pod_specs_edited([d.pod for d in group.pods], edit)
            if edited is not None:
                out.append(self._remedy(group, "relax", change, self.run(edited[0]), constraint=change))
        return out

    def relaxations(self, group: PendingGroup) -> list[tuple[str, SpecEdit]]:
        """The constraints worth dropping for the plugins that rejected the group's pods."""
        plugins = group.plugins
        pod = self.pods.get(group.pods[0].pod)
        out: list[tuple[str, SpecEdit]] = []
        if "PodTopologySpread" in plugins and pod is not None:
            hard = [c for c in pod.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]
            out += [
                (f"drop the topology spread constraint on {c.topology_key} (maxSkew {c.max_skew})", without_spread(i))
                for i, c in enumerate(hard)
            ]
        if "NodeAffinity" in plugins:
            out += [
                ("drop the node selector", with_node_selector_dropped),
                ("drop the required node affinity", without_required("nodeAffinity")),
            ]
        if "InterPodAffinity" in plugins:
            out += [
                ("drop the required pod affinity", without_required("podAffinity")),
                ("drop the required pod anti-affinity", without_required("podAntiAffinity")),
            ]
        if "TaintToleration" in plugins and pod is not None:
            taint = self._commonest_taint(group, pod)
            if taint is not None:
                shown = f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
                out.append((f"tolerate the taint {shown}", tolerating(taint.key, taint.value, taint.effect)))
        return out

    def _commonest_taint(self, group: PendingGroup, pod: Pod) -> Any:
        rejected = (group.pods[0].record or {}).get("filter") or {}
        taints = Counter(
            find_untolerated_taint(n.taints, pod.tolerations, ("NoSchedule", "NoExecute"))
            for n in self.nodes
            if (rejected.get(n.name) or {}).get("plugin") == "TaintToleration"
        )
        taints.pop(None, None)
        return taints.most_common(1)[0][0] if taints else None


def _node_load(pods: Sequence[Pod] | Any) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """Requests and pod counts per node of the bound, running pods."""
    requested: dict[str, dict[str, int]] = {}
    counts: dict[str, int] = {}
    for pod in pods:
        if not pod.node_name or pod.is_terminal:
            continue
        into = requested.setdefault(pod.node_name, {})
        for name, value in pod.requests.items():
            into[name] = into.get(name, 0) + value
        counts[pod.node_name] = counts.get(pod.node_name, 0) + 1
    return requested, counts


def node_with(node: Node, more: Mapping[str, int]) -> Node:
    """``node`` as a parsed view with ``more`` allocatable (for measuring, not for the cluster)."""
    allocatable = dict(node.allocatable)
    for resource, amount in more.items():
        allocatable[resource] = allocatable.get(resource, 0) + amount
    return Node(node.raw, node.meta, node.unschedulable, node.taints, allocatable, node.capacity, node.images)


def _template(node: Node) -> dict[str, Any]:
    """A node of a pool as a template for new ones: its labels, taints and size; no identity, no images."""
    raw = node.raw
    meta = raw.get("metadata") or {}
    spec = {k: copy.deepcopy(v) for k, v in (raw.get("spec") or {}).items() if k == "taints"}
    status = {k: copy.deepcopy(v) for k, v in (raw.get("status") or {}).items() if k in ("allocatable", "capacity")}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"{node.name}-whatif", "labels": dict(meta.get("labels") or {})},
        "spec": spec,
        "status": status,
    }


def _amounts(amounts: Mapping[str, int]) -> str:
    from kubesched.sim.usage import format_bytes, format_cpu

    parts = []
    for resource, amount in amounts.items():
        if resource == "cpu":
            parts.append(f"{format_cpu(amount)} cpu")
        elif resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
            parts.append(f"{format_bytes(amount)} {resource}")
        elif resource == "pods":
            parts.append("1 pod slot")
        else:
            parts.append(f"{amount} {resource}")
    return ", ".join(parts)
