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

from kubesched.cluster.protocol import ApiError
from kubesched.config import KubeSchedulerConfiguration
from kubesched.recording.trace import SCHEDULED
from kubesched.scenario.pipeline import field_validation, load_scenario, load_template
from kubesched.sim.simulate import Simulation, SimulationError, SimulationResult, resolve_config


@dataclass
class CapacityResult:
    """``replicas`` placed, per node, and why the next one was not (``stop_reason``)."""

    replicas: int
    placements: dict[str, int]
    stop_reason: str
    simulation: SimulationResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"replicas": self.replicas, "placements": dict(self.placements), "stopReason": self.stop_reason}


def capacity(
    objects_or_paths: Iterable[Any] | str | Path,
    pod: str | Path | Mapping[str, Any],
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None = None,
    *,
    max_replicas: int | None = None,
    seed: int = 0,
    tie_break: str = "random",
    emulated_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    validate: str | bool = "strict",
) -> CapacityResult:
    """Schedule copies of ``pod`` after the scenario until one does not fit (or ``max_replicas`` did).

    ``validate``: unknown and duplicate fields of the scenario and the template, as for ``simulate``."""
    if max_replicas is not None and max_replicas < 0:
        raise SimulationError(f"--max: must be 0 or more, got {max_replicas}")
    fields = field_validation(validate)
    template = load_template(pod, "Pod", fields)
    scenario = load_scenario(objects_or_paths, fields)
    scenario.check_pod(template)  # its replicas are created during the run
    cfg = resolve_config(config, emulated_version=emulated_version, feature_gates=feature_gates)
    sim = Simulation(scenario, cfg, seed=seed, tie_break=tie_break)
    sim.load()
    sim.run()
    replica_of = template.obj
    meta = replica_of.setdefault("metadata", {})
    base = str(meta.pop("name", None) or meta.get("generateName") or "").rstrip("-")
    meta.pop("generateName", None)
    (replica_of.setdefault("spec", {})).pop("nodeName", None)
    namespace = meta.get("namespace") or "default"
    placements: dict[str, int] = {}
    placed = 0
    stop_reason = ""
    while max_replicas is None or placed < max_replicas:
        replica = copy.deepcopy(replica_of)
        name = f"{base}-{placed}"
        replica["metadata"]["name"] = name
        assert sim.summary is not None  # the default recording keeps a summary per attempt
        first = len(sim.summary.summaries)
        try:
            sim.cluster.create(replica)
        except ApiError as err:  # a replica's name taken by a pod of the scenario, say
            raise SimulationError(f"{template.source}: replica {namespace}/{name}: {err.message}") from None
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
