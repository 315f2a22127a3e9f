"""Sweeps: scenarios x configurations x seeds, each a simulation, compared with confidence intervals.

A *variant* is a configuration: a ``KubeSchedulerConfiguration`` file (or the v1 defaults), possibly
changed by one point of a parameter grid (``NodeResourcesFit.weight=1,2,5`` sets that Score plugin's
weight in every profile; ``NodeResourcesFit.args.scoringStrategy.type=LeastAllocated,MostAllocated`` sets a
field of its pluginConfig args). Every scenario is simulated under every variant with every seed; each
run is measured (:class:`RunMetrics`) and the runs of a (scenario, variant) pair are summarised as a
mean with a 95% confidence interval over the seeds (Student's t).

Fragmentation is the share of the free cpu that sits on nodes where the scenario's median pod (the
median cpu and the median memory request of the pods it schedules) no longer fits, by cpu, memory or a
pod slot: free capacity that the typical pod cannot use. 0 is none wasted, 1 all of it.

Runs are independent, so they go to a pool: local processes by default
(:class:`concurrent.futures.ProcessPoolExecutor`), or a running dask.distributed cluster given by its
scheduler's address (:mod:`kubesched.sim.sweep_engine`). A task carries the scenario's objects (read
and checked once, here), so workers need kubesched installed, not the scenario's files.
"""

from __future__ import annotations

import copy
import math
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import yaml

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, MEMORY, PODS
from kubesched.scenario.pipeline import SimulationError, field_validation, scenario_manifests
from kubesched.sim.plan import pending_after

#: The metrics a comparison shows, in order, with their headings.
METRICS: tuple[tuple[str, str], ...] = (
    ("scheduled", "scheduled"),
    ("pending", "pending"),
    ("cpu_utilisation", "cpu used"),
    ("memory_utilisation", "memory used"),
    ("fragmentation", "fragmentation"),
    ("preemptions", "preemptions"),
    ("p99_latency", "p99 latency (s)"),
)
#: Two-sided 95% Student's t quantiles by degrees of freedom (1-30); beyond, the normal's 1.96.
_T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


@dataclass(frozen=True)
class Variant:
    """A configuration to compare: its label, and the config as a dict (None: the v1 defaults)."""

    label: str
    config: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class SweepTask:
    """One run: a scenario's objects under one variant with one seed (picklable, for any worker)."""

    scenario: str
    objects: tuple[Mapping[str, Any], ...]
    variant: Variant
    seed: int
    tie_break: str = "random"
    emulated_version: str | None = None


@dataclass(frozen=True)
class RunMetrics:
    scenario: str
    variant: str
    seed: int
    scheduled: int
    pending: int
    cpu_utilisation: float
    memory_utilisation: float
    fragmentation: float
    preemptions: int
    p99_latency: float
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Interval:
    """A mean over seeds and the half-width of its 95% confidence interval (0 for one seed)."""

    mean: float
    half_width: float
    n: int

    def to_dict(self) -> dict[str, float]:
        return {
            "mean": self.mean,
            "ci95": self.half_width,
            "low": self.mean - self.half_width,
            "high": self.mean + self.half_width,
            "n": self.n,
        }


@dataclass
class Comparison:
    """Every run, and per (scenario, variant) each metric's interval, in the order of the sweep."""

    runs: list[RunMetrics]
    rows: dict[tuple[str, str], dict[str, Interval]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "metrics": [name for name, _ in METRICS],
            "rows": [
                {"scenario": s, "variant": v, **{m: i.to_dict() for m, i in row.items()}}
                for (s, v), row in self.rows.items()
            ],
            "runs": [r.to_dict() for r in self.runs],
        }


def interval(values: Sequence[float]) -> Interval:
    n = len(values)
    mean = statistics.fmean(values) if values else 0.0
    if n < 2:
        return Interval(mean, 0.0, n)
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    return Interval(mean, t * statistics.stdev(values) / math.sqrt(n), n)


def compare(runs: Iterable[RunMetrics]) -> Comparison:
    out = Comparison(list(runs))
    groups: dict[tuple[str, str], list[RunMetrics]] = {}
    for run in out.runs:
        groups.setdefault((run.scenario, run.variant), []).append(run)
    for key, members in groups.items():
        out.rows[key] = {name: interval([float(getattr(r, name)) for r in members]) for name, _ in METRICS}
    return out


# -- the runs --------------------------------------------------------------------------------------------
def run_task(task: SweepTask) -> RunMetrics:
    """Simulate one task and measure it (what a worker runs)."""
    from kubesched.sim.simulate import simulate

    started = time.perf_counter()
    result = simulate(
        list(task.objects),
        config=dict(task.variant.config) if task.variant.config else None,
        seed=task.seed,
        tie_break=task.tie_break,
        emulated_version=task.emulated_version,
        record="summary",
    )
    pods = [Pod.from_dict(raw) for raw in result.pods()]
    nodes = [Node.from_dict(raw) for raw in result.nodes()]
    scheduled = sum(1 for n in result.final.values() if n)
    used = _requested(pods)
    alloc_cpu = sum(n.allocatable.get(CPU, 0) for n in nodes)
    alloc_mem = sum(n.allocatable.get(MEMORY, 0) for n in nodes)
    mine = set(result.final)
    return RunMetrics(
        scenario=task.scenario,
        variant=task.variant.label,
        seed=task.seed,
        scheduled=scheduled,
        pending=len(pending_after(result)),
        cpu_utilisation=sum(u.get(CPU, 0) for u in used.values()) / alloc_cpu if alloc_cpu else 0.0,
        memory_utilisation=sum(u.get(MEMORY, 0) for u in used.values()) / alloc_mem if alloc_mem else 0.0,
        fragmentation=fragmentation(nodes, pods, [p for p in pods if p.key in mine]),
        preemptions=len(result.deleted),
        p99_latency=float(result.latency().get("p99", 0.0)),
        seconds=time.perf_counter() - started,
    )


def _requested(pods: Iterable[Pod]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for pod in pods:
        if pod.node_name and not pod.is_terminal:
            into = out.setdefault(pod.node_name, {PODS: 0})
            for name, value in pod.requests.items():
                into[name] = into.get(name, 0) + value
            into[PODS] += 1
    return out


def fragmentation(nodes: Sequence[Node], pods: Sequence[Pod], typical: Sequence[Pod]) -> float:
    """The share of free cpu on nodes where the median of ``typical`` pods does not fit (module docstring)."""
    if not typical:
        return 0.0
    cpu = statistics.median(p.requests.get(CPU, 0) for p in typical)
    memory = statistics.median(p.requests.get(MEMORY, 0) for p in typical)
    used = _requested(pods)
    free_total = unusable = 0
    for node in nodes:
        load = used.get(node.name, {})
        free_cpu = max(0, node.allocatable.get(CPU, 0) - load.get(CPU, 0))
        free_memory = node.allocatable.get(MEMORY, 0) - load.get(MEMORY, 0)
        free_slots = node.allocatable.get(PODS, 0) - load.get(PODS, 0)
        free_total += free_cpu
        if node.unschedulable or free_cpu < cpu or free_memory < memory or free_slots < 1:
            unusable += free_cpu
    return unusable / free_total if free_total else 0.0


# -- building the tasks -------------------------------------------------------------------------------------
def scenario_objects(paths: Sequence[Any], validate: str = "strict") -> tuple[dict[str, Any], ...]:
    """A scenario's objects, read and checked once here (the workers get the objects, not the files)."""
    from kubesched.scenario.pipeline import load_scenario

    fields = field_validation(validate)
    manifests = scenario_manifests(paths, fields)
    load_scenario([m.obj for m in manifests], validate)  # the checks a run would make, before the sweep
    return tuple(m.obj for m in manifests)


def parse_grid(specs: Sequence[str]) -> list[list[tuple[str, Any]]]:
    """``Plugin.weight=1,2,5`` / ``Plugin.args.a.b=x,y`` -> per spec, its (path, value) points."""
    out = []
    for spec in specs:
        path, sep, values = spec.partition("=")
        parts = path.split(".")
        if (
            not sep
            or len(parts) < 2
            or not values
            or (parts[1] not in ("weight", "args"))
            or (parts[1] == "args" and len(parts) < 3)
            or (parts[1] == "weight" and len(parts) != 2)
        ):
            raise SimulationError(f"--grid {spec!r}: expected PLUGIN.weight=V1,V2,… or PLUGIN.args.FIELD[.FIELD…]=V1,…")
        points = [(path, yaml.safe_load(v)) for v in values.split(",")]
        if parts[1] == "weight" and not all(isinstance(v, int) and not isinstance(v, bool) for _, v in points):
            raise SimulationError(f"--grid {spec!r}: weights are whole numbers")
        out.append(points)
    return out


def grid_variants(base: Variant, grid: Sequence[Sequence[tuple[str, Any]]]) -> list[Variant]:
    """``base`` changed by every point of the grid's cross product (``base`` itself without a grid)."""
    variants = [base]
    for axis in grid:
        variants = [
            Variant(f"{v.label} {path}={value}".strip(), with_setting(v.config, path, value))
            for v in variants
            for path, value in axis
        ]
    return variants


def with_setting(config: Mapping[str, Any] | None, path: str, value: Any) -> dict[str, Any]:
    """A copy of ``config`` (or of an empty v1 config) with a plugin's weight or args field set in every profile."""
    out: dict[str, Any] = (
        copy.deepcopy(dict(config))
        if config
        else {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    )
    plugin, kind, *fields = path.split(".")
    if not out.get("profiles"):
        out["profiles"] = [{"schedulerName": "default-scheduler"}]
    profiles: list[dict[str, Any]] = out["profiles"]
    for profile in profiles:
        if kind == "weight":
            enabled = profile.setdefault("plugins", {}).setdefault("score", {}).setdefault("enabled", [])
            entry = next((e for e in enabled if e.get("name") == plugin), None)
            if entry is None:
                enabled.append({"name": plugin, "weight": value})
            else:
                entry["weight"] = value
            continue
        configs = profile.setdefault("pluginConfig", [])
        entry = next((e for e in configs if e.get("name") == plugin), None)
        if entry is None:
            entry = {"name": plugin, "args": {}}
            configs.append(entry)
        node = entry.setdefault("args", {})
        for name in fields[:-1]:
            node = node.setdefault(name, {})
        node[fields[-1]] = value
    return out


def tasks_for(
    scenarios: Mapping[str, tuple[dict[str, Any], ...]],
    variants: Sequence[Variant],
    seeds: Sequence[int],
    *,
    tie_break: str = "random",
    emulated_version: str | None = None,
) -> list[SweepTask]:
    return [
        SweepTask(name, objects, variant, seed, tie_break, emulated_version)
        for name, objects in scenarios.items()
        for variant in variants
        for seed in seeds
    ]
