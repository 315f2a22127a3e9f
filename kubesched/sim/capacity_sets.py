"""How many whole sets of several pod shapes fit: ``capacity --pod a.yaml=3 --pod b.yaml=1``.

A set is the shapes' counts, created in the order given (3 of ``a``, then 1 of ``b``), each pod
scheduled before the next, as :mod:`kubesched.sim.capacity` places one shape. Sets are added until a
pod of one does not fit (or ``max_sets`` did); the answer is the number of whole sets, where their pods
went, and the first failure's FailedScheduling text. Each shape is also asked alone (its own
simulation of the scenario, as ``capacity`` with that one ``--pod``), since how many fit alone and how
many fit in the mix answer different questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.config import KubeSchedulerConfiguration
from kubesched.scenario.pipeline import field_validation, load_scenario, load_template
from kubesched.sim.capacity import CapacityResult, _Replicas, capacity
from kubesched.sim.simulate import Simulation, SimulationError, SimulationResult, resolve_config

Template = str | Path | Mapping[str, Any]


@dataclass
class SetsResult:
    """``sets`` whole sets placed; per shape, where its pods went (the last, incomplete set's too)."""

    sets: int
    shapes: list[tuple[str, int]]
    placements: dict[str, dict[str, int]]
    stop_reason: str
    #: Each shape alone: how many replicas of it fit by themselves.
    alone: dict[str, CapacityResult] = field(default_factory=dict)
    simulation: SimulationResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sets": self.sets,
            "set": [{"pod": name, "count": count} for name, count in self.shapes],
            "placements": {k: dict(v) for k, v in self.placements.items()},
            "stopReason": self.stop_reason,
            "alone": {name: r.to_dict() for name, r in self.alone.items()},
        }


def capacity_sets(
    objects_or_paths: Iterable[Any] | str | Path,
    shapes: Sequence[tuple[Template, int]],
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None = None,
    *,
    max_sets: int | None = None,
    alone: bool = True,
    seed: int = 0,
    tie_break: str = "random",
    emulated_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    validate: str | bool = "strict",
) -> SetsResult:
    """Add sets of ``shapes`` ((pod template, count) in order) after the scenario until one does not
    fit; with ``alone``, also how many of each shape fit by itself."""
    if not shapes:
        raise SimulationError("--pod: at least one pod shape")
    if any(count < 1 for _, count in shapes):
        raise SimulationError("--pod: each count must be 1 or more")
    if max_sets is not None and max_sets < 0:
        raise SimulationError(f"--max: must be 0 or more, got {max_sets}")
    fields = field_validation(validate)
    templates = [load_template(t, "Pod", fields) for t, _ in shapes]
    scenario = load_scenario(objects_or_paths, fields)
    for template in templates:
        scenario.check_pod(template)
    cfg = resolve_config(config, emulated_version=emulated_version, feature_gates=feature_gates)
    sim = Simulation(scenario, cfg, seed=seed, tie_break=tie_break)
    sim.load()
    sim.run()
    names = _shape_names(templates)
    makers = [_Replicas(sim, t, base=name) for t, name in zip(templates, names, strict=True)]
    placements: dict[str, dict[str, int]] = {name: {} for name in names}
    sets, stop_reason = 0, ""
    while max_sets is None or sets < max_sets:
        stop_reason = _one_set(makers, [c for _, c in shapes], names, placements)
        if stop_reason:
            break
        sets += 1
    else:
        stop_reason = f"reached the limit of {max_sets} sets"
    result = SetsResult(
        sets,
        list(zip(names, [c for _, c in shapes], strict=True)),
        {k: dict(sorted(v.items())) for k, v in placements.items()},
        stop_reason,
        simulation=sim.result(),
    )
    if alone:
        result.alone = {
            name: capacity(objects_or_paths, template, cfg, seed=seed, tie_break=tie_break, validate=fields)
            for name, (template, _) in zip(names, shapes, strict=True)
        }
    return result


def _one_set(
    makers: Sequence[_Replicas], counts: Sequence[int], names: Sequence[str], placements: dict[str, dict[str, int]]
) -> str:
    """Place one set, shape by shape; "" when all of it fit, else why the pod that did not fit did not."""
    for maker, count, name in zip(makers, counts, names, strict=True):
        for _ in range(count):
            node, reason = maker.place()
            if node is None:
                return f"{maker.namespace}/{maker.base}-{maker.made - 1}: {reason}"
            placements[name][node] = placements[name].get(node, 0) + 1
    return ""


def _shape_names(templates: Sequence[Any]) -> list[str]:
    """Each template's pod name, made unique (``web``, ``web-2``) so that their replicas' names differ."""
    names: list[str] = []
    for template in templates:
        meta = template.obj.get("metadata") or {}
        base = str(meta.get("name") or meta.get("generateName") or "pod").rstrip("-")
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
    return names


def format_sets(result: SetsResult) -> str:
    """The text ``kubesched capacity`` prints for several shapes."""
    shape = " + ".join(f"{count} x {name}" for name, count in result.shapes)
    lines = [f"{result.sets} whole set{'' if result.sets == 1 else 's'} of {shape} fit."]
    for name, nodes in result.placements.items():
        if nodes:
            lines.append(f"  {name}: " + ", ".join(f"{node} {count}" for node, count in nodes.items()))
    lines.append(f"Stopped: {result.stop_reason}")
    if result.alone:
        lines.append("")
        lines.append("Each shape alone:")
        width = max(len(n) for n in result.alone)
        lines.extend(
            f"  {name:<{width}}  {r.replicas} replica{'' if r.replicas == 1 else 's'}"
            for name, r in result.alone.items()
        )
    return "\n".join(lines)
