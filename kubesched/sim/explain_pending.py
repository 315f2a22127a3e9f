"""``kubesched explain`` without a pod name: every pending pod, grouped by cause, with what would help.

The scenario (files, a live cluster, or both) is simulated with full records; each pod it leaves
pending is diagnosed from its last attempt and grouped (:mod:`kubesched.sim.pending_groups`). For each
group the what-ifs (:mod:`kubesched.sim.whatif`) are checked, by simulating the scenario again with the
change, for the ``max_groups`` largest groups. Then each pod's decision is printed as ``explain`` prints
a trace's. From a trace file alone, pods are grouped the same way, without the what-ifs (they need the
scenario to simulate).

The JSON document (``-o json``) is described in docs/simulation.md ("Explaining every pending pod").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from kubesched.config import KubeSchedulerConfiguration
from kubesched.scenario.live import LiveSource
from kubesched.scenario.pipeline import field_validation, load_scenario
from kubesched.sim.device_use import NodesCounts, explain_pod_devices
from kubesched.sim.explain import ExplainError, decision, make_printer, read_trace
from kubesched.sim.explain_layout import Line, Piece, wrap
from kubesched.sim.explain_names import matching_pods, pod_key
from kubesched.sim.pending_groups import Diagnosis, PendingGroup, diagnoses_of_result, diagnoses_of_trace, group
from kubesched.sim.simulate import Simulation, resolve_config
from kubesched.sim.whatif import DEFAULT_MAX_POOLS, Remedy, WhatIf

DEFAULT_MAX_GROUPS = 10
#: Pods named in a group's line before "… and N more".
SHOWN = 5
SCHEMA_VERSION = 1


@dataclass
class PendingReport:
    """Every pending pod of a run, grouped by cause, and what was found to help each group."""

    source: str
    groups: list[PendingGroup]
    #: Group index -> the changes tried, each checked by a simulation (absent: not tried).
    remedies: dict[int, list[Remedy]] = field(default_factory=dict)
    #: Pods the run had to schedule, and how many it scheduled (None for a trace).
    to_schedule: int | None = None
    scheduled: int | None = None
    simulations: int = 0
    #: A pod named but not pending: where it went.
    not_pending: dict[str, str] = field(default_factory=dict)
    #: Pods DynamicResources rejected: the device counts on the nodes it rejected (a scenario only).
    devices: dict[str, list[NodesCounts]] = field(default_factory=dict)

    @property
    def pending(self) -> int:
        return sum(len(g.pods) for g in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "source": self.source,
            "pending": self.pending,
            **(
                {
                    "simulated": {
                        "toSchedule": self.to_schedule,
                        "scheduled": self.scheduled,
                        "whatIfSimulations": self.simulations,
                    }
                }
                if self.to_schedule is not None
                else {}
            ),
            "groups": [
                {**g.to_dict(), **({"remedies": [r.to_dict() for r in self.remedies[i]]} if i in self.remedies else {})}
                for i, g in enumerate(self.groups)
            ],
            "pods": [
                {
                    "pod": d.pod,
                    "group": i,
                    "message": d.message,
                    "attempts": d.attempts,
                    "lastAttempt": dict(d.record) if d.record is not None else None,
                    **({"devices": [n.to_dict() for n in self.devices[d.pod]]} if d.pod in self.devices else {}),
                }
                for i, g in enumerate(self.groups)
                for d in g.pods
            ],
            **({"notPending": dict(self.not_pending)} if self.not_pending else {}),
        }


def explain_pending(
    objects_or_paths: Any,
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None = None,
    *,
    pod: str | None = None,
    what_if: bool = True,
    max_groups: int = DEFAULT_MAX_GROUPS,
    max_pools: int = DEFAULT_MAX_POOLS,
    seed: int = 0,
    tie_break: str = "random",
    emulated_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    validate: str | bool = "strict",
) -> PendingReport:
    """Simulate the scenario and explain the pods it leaves pending (only ``pod``'s, when named: a
    ``namespace/name``, a prefix or a workload, as for a trace), with the what-ifs when ``what_if``."""
    fields = field_validation(validate)
    scenario = load_scenario(objects_or_paths, fields)
    cfg = resolve_config(config, emulated_version=emulated_version, feature_gates=feature_gates)
    sim = Simulation(scenario, cfg, seed=seed, tie_break=tie_break, record="full")
    sim.load()
    base = sim.run()
    diagnoses = diagnoses_of_result(base)
    source = describe_source(objects_or_paths)
    report = PendingReport(source, [], to_schedule=len(base.final), scheduled=sum(1 for n in base.final.values() if n))
    if pod is not None:
        diagnoses = _named(pod, diagnoses, {k: v or "" for k, v in base.final.items()}, report)
    report.groups = group(diagnoses)
    report.devices = explain_pod_devices(base.cluster, {d.pod: d.record for d in diagnoses if d.record is not None})
    if what_if:
        checks = WhatIf(scenario, cfg, base, seed=seed, tie_break=tie_break, max_pools=max_pools)
        for index, pending_group in enumerate(report.groups[:max_groups]):
            report.remedies[index] = checks.remedies(pending_group)
        report.simulations = checks.simulations
    return report


def describe_source(objects_or_paths: Any) -> str:
    """The scenario as given, for a heading: paths, the live cluster's address, "objects" for dicts."""
    items = (
        [objects_or_paths]
        if isinstance(objects_or_paths, str | Path | Mapping | LiveSource)
        else list(objects_or_paths)
    )
    names = [
        item.name if isinstance(item, LiveSource) else "objects" if isinstance(item, Mapping) else str(item)
        for item in items
    ]
    return ", ".join(dict.fromkeys(names))


def explain_trace_pending(trace: str | Path, *, pod: str | None = None) -> PendingReport:
    """The pods whose last attempt in the trace left them pending, grouped by cause (no what-ifs)."""
    records = list(read_trace(trace))
    diagnoses = diagnoses_of_trace(records)
    report = PendingReport(str(trace), [])
    if pod is not None:
        last = {str(r.get("pod")): str(r.get("node") or "") for r in records}
        diagnoses = _named(pod, diagnoses, last, report)
    report.groups = group(diagnoses)
    return report


def _named(pod: str, diagnoses: list[Diagnosis], where: Mapping[str, str], report: PendingReport) -> list[Diagnosis]:
    """The diagnoses of the pods ``pod`` names; the named pods that are not pending go to ``not_pending``."""
    key = pod_key(pod)
    names = [key] if key in where else matching_pods(pod, where)[1]
    if not names:
        raise ExplainError(f"no pod {pod} in {report.source}")
    chosen = set(names)
    report.not_pending = {n: where[n] for n in names if where.get(n)}
    return [d for d in diagnoses if d.pod in chosen]


# -- text -------------------------------------------------------------------------------------------------
def print_pending(
    report: PendingReport,
    out: TextIO,
    *,
    brief: bool = False,
    rich_output: bool | None = None,
    width: int | None = None,
) -> None:
    """The groups with their what-ifs, then (unless ``brief``) every pending pod's decision."""
    printer = make_printer(out, rich_output=rich_output, width=width)
    printer.draw(summary_lines(report, printer.width))
    if brief:
        return
    for pending_group in report.groups:
        for d in pending_group.pods:
            printer.draw([Line("")])
            if d.record is None:
                printer.draw(wrap(f"Pod {d.pod}: {d.message}", printer.width))
            else:
                printer.draw(decision(d.record, d.attempts, printer))
            if report.devices.get(d.pod):
                printer.draw(device_lines(report.devices[d.pod], printer.width))


def device_lines(counts: Iterable[NodesCounts], width: int | None) -> list[Piece]:
    """Per group of nodes DynamicResources rejected: what each request of the pod's claims found there."""
    lines: list[Piece] = [
        Line(""),
        *wrap("Devices on the nodes DynamicResources rejected (the cluster after the run):", width),
    ]
    for entry in counts:
        many = f" ({len(entry.nodes)} nodes)" if len(entry.nodes) > 1 else ""
        lines += wrap(f"{_names(entry.nodes)}{many}:", width, "  ")
        for count in entry.counts:
            lines += wrap(count.describe(), width, "    ")
    return lines


def summary_lines(report: PendingReport, width: int | None) -> list[Piece]:
    lines: list[Piece] = []
    for pod, node in report.not_pending.items():
        lines += wrap(f"{pod} is not pending: scheduled on {node}", width)
    pending = report.pending
    head = f"{pending} pending pod{'' if pending == 1 else 's'}"
    if report.to_schedule is not None:
        head += (
            f" in a simulation of {report.source} ({report.scheduled} of the {report.to_schedule} pods to "
            f"schedule were scheduled)"
        )
    else:
        head += f" in {report.source}"
    lines += wrap(
        head + (f", {len(report.groups)} cause{'' if len(report.groups) == 1 else 's'}:" if pending else "."), width
    )
    for index, pending_group in enumerate(report.groups):
        lines.append(Line(""))
        lines += _group_lines(pending_group, report.remedies.get(index), width)
    if report.simulations:
        lines += [
            Line(""),
            *wrap(
                f"Each change was checked by simulating the scenario with it ({report.simulations} simulations).", width
            ),
        ]
    return lines


def _group_lines(pending_group: PendingGroup, remedies: list[Remedy] | None, width: int | None) -> list[Piece]:
    count = len(pending_group.pods)
    lines: list[Piece] = [*wrap(f"{count} pod{'' if count == 1 else 's'}: {pending_group.describe()}", width)]
    lines += wrap(f"pods: {_names([d.pod for d in pending_group.pods])}", width, "  ")
    if remedies is None:
        return lines
    helping = [r for r in remedies if r.helps]
    them = "it" if count == 1 else "them"
    if not pending_group.plugins:
        return [*lines, *wrap("no node was evaluated: no change to the cluster would help", width, "  ")]
    if not helping:
        lines += wrap(
            f"no change tried lets {'it' if count == 1 else 'any of them'} schedule"
            + (f" (tried: {'; '.join(r.change for r in remedies)})" if remedies else ""),
            width,
            "  ",
        )
        return lines
    lines += wrap(f"what would let {them} schedule:", width, "  ")
    for remedy in helping:
        lines += wrap(f"- {describe_remedy(remedy)}", width, "    ")
    tried = [r for r in remedies if not r.helps]
    if tried:
        lines += wrap(f"no help: {'; '.join(r.change for r in tried)}", width, "  ")
    return lines


def describe_remedy(remedy: Remedy) -> str:
    """One line: the change and what the simulation with it did."""
    d = remedy.details
    outcome = f"{remedy.schedules} of {remedy.of} schedule"
    if remedy.kind == "closestNode":
        if d.get("landedOn") == d["node"]:
            return f"closest node: {remedy.change} takes {d['pod']}"
        return f"closest node: with {remedy.change}, {d['pod']} schedules on {d.get('landedOn')}"
    if remedy.kind == "preemption":
        victims = d.get("victims") or []
        return f"preemption: with {remedy.change}" + (f" ({_names(victims)})" if victims else "") + f": {outcome}"
    if remedy.kind == "addNodes":
        return f"add {remedy.change}: {outcome}"
    return f"relax: {remedy.change}: {outcome}"


def _names(names: Iterable[str]) -> str:
    listed = list(names)
    shown = ", ".join(listed[:SHOWN])
    return shown + (f" and {len(listed) - SHOWN} more" if len(listed) > SHOWN else "")
