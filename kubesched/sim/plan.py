"""How many nodes to add so that every pending pod is scheduled: alibaba/open-simulator's question.

Pods that stay pending even with the most nodes allowed (``max_nodes``) are beyond what this node
shape can do (too big for it, an untolerated taint, no matching profile); they are reported and left
out of the goal. Each candidate count N is a full simulation of the scenario with N copies of the node template added
(``<template>-1`` … ``<template>-N``). Adding nodes usually cannot hurt, so the search gallops up (1, 2,
4, …) to a count that leaves no pod pending and bisects below it. It cannot be taken for granted (preemption,
spreading and tie-breaks can make one more node change earlier decisions), so the answer N is checked:
N-1 and N+1 are simulated too, and if any two counts tried contradict each other (fewer nodes
succeeding where more failed), the search falls back to trying every count from one upwards. A
count below N-1 that would also succeed while N-1 fails goes unnoticed: only the linear search
would see it, at N simulations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.config import KubeSchedulerConfiguration
from kubesched.scenario.manifests import Manifest
from kubesched.scenario.pipeline import Scenario, field_validation, load_scenario
from kubesched.sim.node_templates import NodeTemplate, load_node_template
from kubesched.sim.simulate import Simulation, SimulationError, SimulationResult, resolve_config

DEFAULT_MAX_NODES = 100


@dataclass
class PlanResult:
    """``nodes_to_add``, and the placement with that many; ``pending``: pods no added node helps."""

    nodes_to_add: int
    scheduled: int
    pending: list[str]
    #: Every count simulated -> pods left pending, in the order tried.
    tried: dict[int, int] = field(default_factory=dict)
    monotone: bool = True
    simulation: SimulationResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"nodesToAdd": self.nodes_to_add, "scheduled": self.scheduled, "pending": list(self.pending)}


def pending_after(result: SimulationResult) -> list[str]:
    """Pods of the scenario left without a node (pods deleted during the run, victims or others, are gone,
    not pending)."""
    removed = set(result.removed)
    return [key for key, node in result.final.items() if node is None and key not in removed]


def plan(
    objects_or_paths: Iterable[Any] | str | Path,
    node_template: str | Path | Mapping[str, Any] | NodeTemplate,
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None = None,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    seed: int = 0,
    tie_break: str = "random",
    emulated_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    validate: str | bool = "strict",
) -> PlanResult:
    """The fewest copies of ``node_template`` to add so that no pod of the scenario stays pending.

    Pods that stay pending even with ``max_nodes`` copies (the node shape cannot take them) are
    left out of the goal and reported in ``pending``. ``validate``: unknown and duplicate fields of
    the scenario and the template, as for ``simulate``.
    """
    if max_nodes < 0:
        raise SimulationError(f"--max-nodes: must be 0 or more, got {max_nodes}")
    fields = field_validation(validate)
    template = load_node_template(node_template, fields)
    scenario = load_scenario(objects_or_paths, fields)
    cfg = resolve_config(config, emulated_version=emulated_version, feature_gates=feature_gates)
    added = _added_nodes(scenario, template, max_nodes)
    per_node = 1 + len(template.slices)  # each copy: the node, then its slices

    def run(count: int) -> SimulationResult:
        sim = Simulation(scenario.extended(added[: count * per_node]), cfg, seed=seed, tie_break=tie_break)
        sim.load()
        return sim.run()

    # Pods still pending with the most nodes allowed cannot be helped by this node shape (too big,
    # untolerated taints, no matching profile): the search is for everything else.
    runs = _Runs(run, max_nodes)
    found = fewest_fitting(runs.fits, max_nodes)
    monotone = _monotone({n: runs.fits(n) for n in runs.pending})
    if not monotone:
        found = next(n for n in range(0, max_nodes + 1) if runs.fits(n))
    final = runs.result(found)
    pending = pending_after(final)
    return PlanResult(
        nodes_to_add=found,
        scheduled=sum(1 for node in final.final.values() if node is not None),
        pending=pending,
        tried={n: len(p) for n, p in sorted(runs.pending.items())},
        monotone=monotone,
        simulation=final,
    )


class _Runs:
    """The simulations of the search, by count of added nodes: what each left pending, and the whole
    result of the fewest nodes that fit so far only (every result kept would hold a cluster per count)."""

    def __init__(self, run: Callable[[int], SimulationResult], max_nodes: int) -> None:
        self._run = run
        self.pending: dict[int, list[str]] = {}
        self._best: tuple[int, SimulationResult] | None = None
        result = self._simulate(max_nodes)
        self.hopeless = set(self.pending[max_nodes])
        self._keep(max_nodes, result)

    def _simulate(self, count: int) -> SimulationResult:
        result = self._run(count)
        self.pending[count] = pending_after(result)
        return result

    def _keep(self, count: int, result: SimulationResult) -> None:
        if self.fits(count) and (self._best is None or count < self._best[0]):
            self._best = (count, result)

    def fits(self, count: int) -> bool:
        if count not in self.pending:
            self._keep(count, self._simulate(count))
        return set(self.pending[count]) <= self.hopeless

    def result(self, count: int) -> SimulationResult:
        """The result for ``count`` (simulated again unless it is the fewest that fit)."""
        if self._best is not None and self._best[0] == count:
            return self._best[1]
        return self._run(count)


def _added_nodes(scenario: Scenario, template: NodeTemplate, max_nodes: int) -> list[Manifest]:
    """The ``max_nodes`` copies of the template a plan may add, each the node then its slices (a count N
    takes the first N copies); their names must not clash with the scenario's nodes or slices."""
    added = template.manifests(max_nodes)
    clash = added_clashes(scenario, added)
    if clash:
        raise SimulationError(
            f"node template: the added nodes' names clash with the scenario's nodes: "
            f"{', '.join(clash[:5])}; rename the template"
        )
    return added


def added_clashes(scenario: Scenario, added: Iterable[Manifest]) -> list[str]:
    """Names of added Nodes and ResourceSlices the scenario already has (both kinds are cluster-scoped)."""
    existing = {
        (m.kind, m.obj.get("metadata", {}).get("name"))
        for m in scenario.manifests
        if m.kind in ("Node", "ResourceSlice")
    }
    return sorted(name for kind, name in {(m.kind, m.obj["metadata"]["name"]) for m in added} & existing)


def fewest_fitting(fits: Callable[[int], bool], max_nodes: int, at_least: int = 0) -> int:
    """The fewest added nodes that fit, found by galloping and bisecting (see the module docstring);
    ``at_least`` is a count known not to be too many (a lower bound: fewer cannot fit)."""
    at_least = max(0, min(at_least, max_nodes))
    if fits(at_least):
        return at_least
    # Gallop up (1, 2, 4, ... above the bound) to the first count that fits, then bisect below it:
    # answers are usually small, so this runs fewer simulations than bisecting over [0, max_nodes].
    lo, hi = at_least, min(at_least + 1, max_nodes)
    while not fits(hi) and hi < max_nodes:
        lo, hi = hi, min(at_least + (hi - at_least) * 2, max_nodes)
    while hi - lo > 1:  # fits(lo) is False, fits(hi) is True
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    # The check: the search's own runs agree with each other by construction, so look one
    # step either side: N-1 must leave pods pending and N+1 must not.
    fits(hi - 1)
    if hi < max_nodes:
        fits(hi + 1)
    return hi


def pending_reasons(result: SimulationResult) -> dict[str, str]:
    from kubesched.sim.report import pending_pods

    return {p.pod: p.reason for p in pending_pods(result)}


def _monotone(outcomes: Mapping[int, bool]) -> bool:
    """No count that fits below one that does not."""
    seen_fail_above = False
    for count in sorted(outcomes, reverse=True):
        if not outcomes[count]:
            seen_fail_above = True
        elif seen_fail_above:
            return False
    return True


def format_plan(result: PlanResult, max_nodes: int) -> str:
    """The text ``kubesched plan`` prints."""
    lines = []
    total = result.scheduled + len(result.pending)
    if result.nodes_to_add == 0:
        lines.append("No nodes needed: adding nodes schedules no more pods than are scheduled already.")
    else:
        nodes = "1 node" if result.nodes_to_add == 1 else f"{result.nodes_to_add} nodes"
        lines.append(f"Add {nodes}: then {result.scheduled} of {total} pods are scheduled.")
    if result.pending:
        lines.append(
            f"{len(result.pending)} stay pending even with {max_nodes} added nodes (this node shape cannot take them)."
        )
    tried = ", ".join(f"{n} nodes: {p} pending" for n, p in sorted(result.tried.items()))
    lines.append(f"Tried {tried}" + ("" if result.monotone else " (not monotone: searched every count)") + ".")
    if result.pending:
        lines.append("")
        lines.append(f"Pending {len(result.pending)}:")
        reasons = pending_reasons(result.simulation) if result.simulation is not None else {}
        lines.extend(f"  {key}: {reasons.get(key, '')}".rstrip(": ") for key in result.pending)
    if result.simulation is not None and result.nodes_to_add:
        placed: dict[str, int] = {}
        for node in result.simulation.final.values():
            if node is not None:
                placed[node] = placed.get(node, 0) + 1
        lines.append("")
        lines.append("Where the scenario's pending pods went (pods per node):")
        width = max(len(n) for n in placed)
        lines.extend(f"  {node:<{width}}  {count}" for node, count in sorted(placed.items()))
    return "\n".join(lines)
