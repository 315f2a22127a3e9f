"""The cheapest mix of several node templates that schedules every pending pod: ``plan`` with several
``--node-template``.

Each template may carry its price, ``kubesched.io/cost`` (per node-hour, a decimal such as ``"1.25"``).
When every template does, the answer is the mix of the least total cost; when none does, the mix of the
fewest nodes (each node costs 1); some priced and some not is an error. A mix (n_1, …, n_k) is a full
simulation of the scenario with n_i copies of template i; pods still pending with ``max_nodes`` of every
template are beyond what any mix does and are left out of the goal, as ``plan`` does for one template.

The search:

1. **An upper bound from each template alone**: ``plan``'s search (:func:`~kubesched.sim.plan.fewest_fitting`)
   for each template by itself; the cheapest that works is the incumbent (without one, every template's
   ``max_nodes``, which works by the definition of the goal).
2. **Every cheaper mix, cheapest first** (then fewest nodes), except those that cannot be enough: a mix
   must bring, for every resource, at least what the goal's pods request beyond all the free capacity the
   cluster had after the scenario's own run (a necessary condition, so nothing that could fit is skipped).
3. **Pruned by dominance**: adding nodes can only help (``plan`` relies on it too), so once a mix fails,
   no mix with as many or fewer of every template is simulated. The first mix that fits is the answer.

Steps 2 and 3 are exact: the answer is the cheapest mix, as long as adding nodes never hurts. They stop
after ``max_simulations`` simulations; the answer is then the cheapest mix found to fit so far (or the
incumbent), and ``exact`` is False. Small counts are searched whole within the default budget; large ones
get the best of the single-template answers improved by as many cheaper mixes as the budget allows.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.config import KubeSchedulerConfiguration
from kubesched.scenario.manifests import Manifest
from kubesched.scenario.pipeline import Scenario, field_validation, load_scenario
from kubesched.sim.node_templates import NodeTemplate, load_node_template
from kubesched.sim.plan import DEFAULT_MAX_NODES, fewest_fitting, pending_after
from kubesched.sim.simulate import Simulation, SimulationError, SimulationResult, resolve_config

COST_ANNOTATION = "kubesched.io/cost"
DEFAULT_MAX_SIMULATIONS = 200
#: Mixes enumerated at most in step 2.
MAX_CANDIDATES = 200_000

Mix = tuple[int, ...]


@dataclass
class MixResult:
    """The mix found (template name -> nodes), its cost, and how the search went."""

    templates: list[str]
    mix: Mix
    objective: str
    costs: list[Decimal]
    scheduled: int
    pending: list[str]
    exact: bool
    simulations: int
    tried: dict[Mix, int] = field(default_factory=dict)
    simulation: SimulationResult | None = field(default=None, repr=False)

    @property
    def cost(self) -> Decimal:
        return sum((c * n for c, n in zip(self.costs, self.mix, strict=True)), Decimal(0))

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodesToAdd": dict(zip(self.templates, self.mix, strict=True)),
            "objective": self.objective,
            **({"costPerHour": str(self.cost)} if self.objective == "cost" else {}),
            "scheduled": self.scheduled,
            "pending": list(self.pending),
            "exact": self.exact,
            "simulations": self.simulations,
        }


def template_cost(template: Mapping[str, Any], where: str) -> Decimal | None:
    """The template's ``kubesched.io/cost`` (None without one); a SimulationError for a value that is no
    positive decimal."""
    text = ((template.get("metadata") or {}).get("annotations") or {}).get(COST_ANNOTATION)
    if text is None:
        return None
    try:
        cost = Decimal(str(text))
    except InvalidOperation:
        cost = Decimal(-1)
    if not cost.is_finite() or cost <= 0:
        raise SimulationError(
            f"{where}: metadata.annotations[{COST_ANNOTATION}]: expected a positive decimal "
            f'(cost per node-hour, e.g. "1.25"), got {text!r}'
        )
    return cost


def plan_mix(
    objects_or_paths: Iterable[Any] | str | Path,
    node_templates: Sequence[str | Path | Mapping[str, Any]],
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None = None,
    *,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_simulations: int = DEFAULT_MAX_SIMULATIONS,
    seed: int = 0,
    tie_break: str = "random",
    emulated_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    validate: str | bool = "strict",
) -> MixResult:
    """The cheapest mix of ``node_templates`` (see the module docstring)."""
    if max_nodes < 0 or max_simulations < 1:
        raise SimulationError("--max-nodes must be 0 or more and --max-simulations 1 or more")
    fields = field_validation(validate)
    templates = [load_node_template(t, fields) for t in node_templates]
    names = [t.name for t in templates]
    costs = [template_cost(t.node.obj, str(given)) for t, given in zip(templates, node_templates, strict=True)]
    if any(c is None for c in costs) and any(c is not None for c in costs):
        unpriced = ", ".join(n for n, c in zip(names, costs, strict=True) if c is None)
        raise SimulationError(
            f"--node-template: some templates carry {COST_ANNOTATION} and {unpriced} not: "
            "price all of them (cheapest mix) or none (fewest nodes)"
        )
    scenario = load_scenario(objects_or_paths, fields)
    cfg = resolve_config(config, emulated_version=emulated_version, feature_gates=feature_gates)
    search = _MixSearch(scenario, cfg, templates, max_nodes, seed=seed, tie_break=tie_break)
    objective = "nodes" if costs[0] is None else "cost"
    prices = [c if c is not None else Decimal(1) for c in costs]
    mix, exact = search.cheapest(prices, max_simulations)
    final = search.result(mix)
    return MixResult(
        names,
        mix,
        objective,
        prices,
        sum(1 for n in final.final.values() if n is not None),
        pending_after(final),
        exact,
        len(search.pending),
        {m: len(p) for m, p in search.pending.items()},
        final,
    )


class _MixSearch:
    def __init__(
        self,
        scenario: Scenario,
        config: KubeSchedulerConfiguration,
        templates: Sequence[NodeTemplate],
        max_nodes: int,
        *,
        seed: int,
        tie_break: str,
    ) -> None:
        self.scenario, self.config, self.max_nodes = scenario, config, max_nodes
        self.seed, self.tie_break = seed, tie_break
        self.copies = [t.copies(max_nodes) for t in templates]
        self.allocatable = [Node.from_dict(t.node.obj).allocatable for t in templates]
        names = [group[0]["metadata"]["name"] for copies in self.copies for group in copies]
        existing = {m.obj.get("metadata", {}).get("name") for m in scenario.manifests if m.kind == "Node"}
        clash = sorted((existing & set(names)) | {n for n, c in Counter(names).items() if c > 1})
        if clash:
            raise SimulationError(
                f"--node-template: the added nodes' names clash: {', '.join(clash[:5])}; "
                "give the templates distinct names"
            )
        #: Every mix simulated -> the pods it left pending, in the order tried.
        self.pending: dict[Mix, list[str]] = {}
        #: Whole results of the mixes that fit (one of them is the answer) and of no added node (read
        #: by ``_need``): a cluster kept for every mix tried would hold up to ``budget`` of them.
        self._kept: dict[Mix, SimulationResult] = {}
        most = tuple(max_nodes for _ in templates)
        self.hopeless: set[str] = set()
        self.hopeless = set(self._pending(most, keep=True))

    def _simulate(self, mix: Mix) -> SimulationResult:
        added = [o for copies, count in zip(self.copies, mix, strict=True) for group in copies[:count] for o in group]
        sim = Simulation(
            self.scenario.extended([Manifest("<node template>", i + 1, n) for i, n in enumerate(added)]),
            self.config,
            seed=self.seed,
            tie_break=self.tie_break,
        )
        sim.load()
        return sim.run()

    def _pending(self, mix: Mix, *, keep: bool = False) -> list[str]:
        if mix not in self.pending:
            result = self._simulate(mix)
            self.pending[mix] = pending_after(result)
            if keep or not any(mix) or set(self.pending[mix]) <= self.hopeless:
                self._kept[mix] = result
        return self.pending[mix]

    def result(self, mix: Mix) -> SimulationResult:
        """The whole result of ``mix`` (simulated again if it was not kept)."""
        kept = self._kept.get(mix)
        return kept if kept is not None else self._simulate(mix)

    def fits(self, mix: Mix) -> bool:
        return set(self._pending(mix)) <= self.hopeless

    def cheapest(self, prices: Sequence[Decimal], budget: int) -> tuple[Mix, bool]:
        k = len(prices)
        zero = tuple(0 for _ in prices)
        if self.fits(zero):
            return zero, True
        best = tuple(self.max_nodes for _ in prices)
        for i in range(k):  # step 1: each template alone
            alone = tuple(self.max_nodes if j == i else 0 for j in range(k))
            if self.fits(alone):
                count = fewest_fitting(self._alone(i, k), self.max_nodes, 1)
                mix = tuple(count if j == i else 0 for j in range(k))
                if _cost(mix, prices) < _cost(best, prices):
                    best = mix
        failed: list[Mix] = [m for m, p in self.pending.items() if not set(p) <= self.hopeless]
        need = self._need()
        for mix in _cheaper_mixes(prices, _cost(best, prices), self.max_nodes):  # steps 2 and 3
            if not self._enough(mix, need) or any(_dominated(mix, f) for f in failed):
                continue
            if len(self.pending) >= budget and mix not in self.pending:
                return best, False
            if self.fits(mix):
                return mix, True
            failed.append(mix)
        return best, True

    def _alone(self, i: int, k: int) -> Callable[[int], bool]:
        """Whether ``count`` nodes of template ``i`` alone fit."""
        return lambda count: self.fits(tuple(count if j == i else 0 for j in range(k)))

    def _need(self) -> dict[str, int]:
        """What the goal's pods request beyond every node's free capacity after the scenario's own run."""
        base = self.result(tuple(0 for _ in self.copies))
        goal = set(pending_after(base)) - self.hopeless
        need: Counter[str] = Counter()
        free: Counter[str] = Counter()
        for raw in base.pods():
            pod = Pod.from_dict(raw)
            if pod.key in goal:
                need.update(pod.requests)
            elif pod.node_name and not pod.is_terminal:
                free.subtract(pod.requests)
        for raw in base.nodes():
            free.update({r: v for r, v in Node.from_dict(raw).allocatable.items() if r in need})
        return {r: need[r] - max(0, free[r]) for r in need if need[r] > free[r]}

    def _enough(self, mix: Mix, need: Mapping[str, int]) -> bool:
        return all(
            sum(n * a.get(r, 0) for n, a in zip(mix, self.allocatable, strict=True)) >= v for r, v in need.items()
        )


def _cost(mix: Mix, prices: Sequence[Decimal]) -> Decimal:
    return sum((p * n for p, n in zip(prices, mix, strict=True)), Decimal(0))


def _dominated(mix: Mix, failed: Mix) -> bool:
    """Whether ``mix`` has no more of any template than a mix that failed (so it fails too)."""
    return all(a <= b for a, b in zip(mix, failed, strict=True))


def _cheaper_mixes(prices: Sequence[Decimal], limit: Decimal, max_nodes: int) -> list[Mix]:
    """Every mix costing less than ``limit`` (each count up to ``max_nodes``), cheapest first, then the
    fewest nodes; past MAX_CANDIDATES mixes, the first that many enumerated (fewer of the first templates
    first), so that a huge space costs a bounded time."""

    def walk(i: int, left: Decimal) -> Iterator[Mix]:
        if i == len(prices):
            yield ()
            return
        most = min(max_nodes, math.ceil(left / prices[i]))
        for n in range(most + 1):
            spent = prices[i] * n
            if spent >= left and n:
                break
            for rest in walk(i + 1, left - spent):
                yield (n, *rest)

    mixes = []
    for mix in walk(0, limit):
        if any(mix) and _cost(mix, prices) < limit:
            mixes.append(mix)
            if len(mixes) >= MAX_CANDIDATES:
                break
    return sorted(mixes, key=lambda m: (_cost(m, prices), sum(m), m))


def format_mix(result: MixResult) -> str:
    """The text ``kubesched plan`` prints for several templates."""
    parts = [f"{n} x {name}" for name, n in zip(result.templates, result.mix, strict=True) if n]
    lines = [f"Add {', '.join(parts)}" if parts else "No nodes needed"]
    if result.objective == "cost" and parts:
        lines[0] += f" (cost {result.cost} per hour)"
    total = result.scheduled + len(result.pending)
    lines[0] += f": then {result.scheduled} of {total} pods are scheduled."
    how = "cheapest by " + ("cost" if result.objective == "cost" else "node count")
    lines.append(
        f"The {how}, {'proven' if result.exact else 'best found, not proven'} ({result.simulations} simulations)."
    )
    if result.pending:
        lines.append(
            f"{len(result.pending)} stay pending with every template at its maximum (no mix helps them): "
            + ", ".join(result.pending[:10])
            + (" …" if len(result.pending) > 10 else "")
        )
    return "\n".join(lines)
