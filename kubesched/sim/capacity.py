"""How many more replicas of a pod fit: kubernetes-sigs/cluster-capacity's question, answered by the scheduler.

The scenario is simulated first (its pending pods and workloads placed as ``simulate`` places them);
then copies of the template pod are created one at a time, each scheduled before the next, until one
cannot be scheduled or the limit is reached. The answer is the number placed, how many went to each
node, and the first failure's FailedScheduling text, word for word as kube-scheduler writes it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.config import KubeSchedulerConfiguration
from kubesched.recording.trace import SCHEDULED
from kubesched.scenario.manifests import load_manifests
from kubesched.sim.simulate import (
    Simulation,
    SimulationError,
    SimulationResult,
    _to_manifests,
    _validate,
    resolve_config,
)


@dataclass
class CapacityResult:
    """``replicas`` placed, per node, and why the next one was not (``stop_reason``)."""

    replicas: int
    placements: dict[str, int]
    stop_reason: str
    simulation: SimulationResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"replicas": self.replicas, "placements": dict(self.placements), "stopReason": self.stop_reason}


def load_template(template: str | Path | Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The one object of ``kind`` in a manifest file (or the dict given); SimulationError otherwise."""
    if isinstance(template, Mapping):
        objects = [copy.deepcopy(dict(template))]
        where = "template"
    else:
        objects = [m.obj for m in load_manifests([template])]
        where = str(template)
    if len(objects) != 1 or objects[0].get("kind") != kind:
        found = ", ".join(str(o.get("kind")) for o in objects) or "nothing"
        raise SimulationError(f"{where}: expected exactly one {kind}, found {found}")
    obj = objects[0]
    name = (obj.get("metadata") or {}).get("name") or (obj.get("metadata") or {}).get("generateName")
    if not isinstance(name, str) or not name.strip("-"):
        raise SimulationError(f"{where}: {kind} template: metadata.name: Required value")
    return obj


def capacity(
    objects_or_paths: Iterable[Any] | str | Path,
    pod: str | Path | Mapping[str, Any],
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None = None,
    *,
    max_replicas: int | None = None,
    seed: int = 0,
    tie_break: str = "random",
) -> CapacityResult:
    """Schedule copies of ``pod`` after the scenario until one does not fit (or ``max_replicas`` did)."""
    if max_replicas is not None and max_replicas < 0:
        raise SimulationError(f"--max: must be 0 or more, got {max_replicas}")
    template = load_template(pod, "Pod")
    manifests = _to_manifests(objects_or_paths)
    _validate(manifests)
    sim = Simulation(manifests, resolve_config(config), seed=seed, tie_break=tie_break)
    sim.load()
    sim.run()
    meta = template.setdefault("metadata", {})
    base = str(meta.pop("name", None) or meta.get("generateName") or "").rstrip("-")
    meta.pop("generateName", None)
    (template.setdefault("spec", {})).pop("nodeName", None)
    namespace = meta.get("namespace") or "default"
    placements: dict[str, int] = {}
    placed = 0
    stop_reason = ""
    while max_replicas is None or placed < max_replicas:
        replica = copy.deepcopy(template)
        name = f"{base}-{placed}"
        replica["metadata"]["name"] = name
        assert sim.summary is not None  # the default recording keeps a summary per attempt
        first = len(sim.summary.summaries)
        sim.cluster.create(replica)
        sim.driver.settle()
        key = f"{namespace}/{name}"
        attempts = [r for r in sim.summary.summaries[first:] if r.pod == key]
        if not attempts or attempts[0].result != SCHEDULED:
            if attempts:
                stop_reason = attempts[0].message or attempts[0].result
            else:
                stop_reason = "the pod was never attempted (its schedulerName matches no profile, or it is gated)"
            break
        node = str(attempts[0].node)
        placements[node] = placements.get(node, 0) + 1
        placed += 1
    else:
        stop_reason = f"reached the limit of {max_replicas} replicas"
    return CapacityResult(placed, dict(sorted(placements.items())), stop_reason, sim.result())


def format_capacity(result: CapacityResult) -> str:
    """The text ``kubesched capacity`` prints."""
    lines = ["1 more replica fits." if result.replicas == 1 else f"{result.replicas} more replicas fit."]
    if result.placements:
        width = max(len(n) for n in result.placements)
        lines.append("")
        lines.extend(f"  {node:<{width}}  {count}" for node, count in result.placements.items())
    lines.append("")
    lines.append(f"Stopped: {result.stop_reason}")
    return "\n".join(lines)
