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
from kubesched.scenario.field_validation import FieldValidation
from kubesched.scenario.manifests import Manifest
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
    validate: str | bool | FieldValidation = "strict",
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
    replicas = _Replicas(sim, template)
    placements: dict[str, int] = {}
    placed = 0
    stop_reason = ""
    while max_replicas is None or placed < max_replicas:
        node, stop_reason = replicas.place()
        if node is None:
            break
        placements[node] = placements.get(node, 0) + 1
        placed += 1
    else:
        stop_reason = f"reached the limit of {max_replicas} replicas"
    return CapacityResult(placed, dict(sorted(placements.items())), stop_reason, sim.result())


class _Replicas:
    """Copies of one pod template created in a running simulation, one at a time, each scheduled before
    the next: ``<name>-0``, ``<name>-1``, …"""

    def __init__(self, sim: Simulation, template: Manifest, base: str | None = None) -> None:
        self.sim = sim
        self.template = template
        self.replica_of = copy.deepcopy(template.obj)
        meta = self.replica_of.setdefault("metadata", {})
        self.base = base or str(meta.pop("name", None) or meta.get("generateName") or "").rstrip("-")
        for key in ("name", "generateName", "uid"):  # each replica is an object of its own
            meta.pop(key, None)
        self.replica_of.setdefault("spec", {}).pop("nodeName", None)
        self.namespace = meta.get("namespace") or "default"
        self.made = 0

    def place(self) -> tuple[str | None, str]:
        """Create the next replica and let it be scheduled: its node, or None and why not."""
        replica = copy.deepcopy(self.replica_of)
        name = f"{self.base}-{self.made}"
        self.made += 1
        replica["metadata"]["name"] = name
        summary = self.sim.summary
        assert summary is not None  # the default recording keeps a summary per attempt
        first = len(summary.summaries)
        try:
            self.sim.cluster.create(replica)
        except ApiError as err:  # a replica's name taken by a pod of the scenario, say
            raise SimulationError(f"{self.template.source}: replica {self.namespace}/{name}: {err.message}") from None
        self.sim.driver.settle()
        key = f"{self.namespace}/{name}"
        attempts = [r for r in summary.summaries[first:] if r.pod == key]
        if not attempts:
            return None, "the pod was never attempted (its schedulerName matches no profile, or it is gated)"
        if attempts[0].result != SCHEDULED:
            return None, attempts[0].message or attempts[0].result
        return str(attempts[0].node), ""


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
