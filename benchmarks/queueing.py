"""``python -m benchmarks.queueing [--quick] [--workload W] [--nodes N] [--pods N] [--seed N]``: wasted attempts.

One command, one Markdown table: a row per workload and emulated version.

A *wasted* attempt is one that fails with the same FailedScheduling message as the pod's previous
attempt: the queue retried the pod although nothing that mattered to it had changed. v1.30 retries a
rejected pod on any event that a plugin that rejected it registered (and on any change of the pod);
v1.34's queueing hints let each plugin say whether this very event may help that pod, and v1.34 also
retries pods straight from backoffQ whenever activeQ is empty (SchedulerPopFromBackoffQ).

Two churn workloads, generated and seeded (not timed), run through ``kubesched.simulate()``:

* ``resources``: nodes of 8 cpu / 32Gi over three zones (a sixth tainted ``dedicated=batch:NoSchedule``),
  Poisson arrivals at 110 % of the cpu at steady state with exponential lifetimes (mean 10 minutes),
  of five kinds (plain; pinned to a zone; spread over zones; hostname anti-affinity; tolerating the
  taint). Pods mostly wait for room, which any completion may give.
* ``constraints``: the same nodes at 15 % of the cpu, so that room is never short and pods wait for a
  constraint: one pod per zone for each of two apps (zone anti-affinity), pinned to a fourth zone that
  only nodes joining later carry, or spread over the zones with a skew of one.

Both have a timeline step every five minutes: a node joins, a node is cordoned, uncordoned, or drained.
Each run is a plain ``kubesched.simulate()`` call with its default options (default profile, attempt
summaries kept); the attempts are counted from the summaries it returns. The table gives, per workload
and emulated version, the attempts, failed ones, wasted ones, what was scheduled, the virtual time and
the wall time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import kubesched
from kubesched.scenario.generate.lifetimes import parse_distribution
from kubesched.scenario.generate.poisson import NodeShape, PodShape, node_objects, poisson_pods, rate_for

#: The rows: v1.30, v1.34, and v1.34 without popping backoffQ when activeQ is empty.
VERSIONS = ("1.30", "1.34", "1.34:SchedulerPopFromBackoffQ=false")
COLUMNS = (
    "workload",
    "version",
    "pods",
    "attempts",
    "failed",
    "wasted",
    "wasted % of failed",
    "scheduled",
    "pending at end",
    "virtual h",
    "wall s",
)
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
LIFETIME = "exp:10m"
SHAPES = (PodShape("1", "2Gi", 2.0), PodShape("2", "4Gi", 1.0), PodShape("500m", "1Gi", 1.0))
STEP_SECONDS = 300
ZONES = 3


@dataclass
class WastedAttempts:
    """Counts attempts, failures, and failures with the same message as the pod's previous attempt."""

    attempts: int = 0
    failed: int = 0
    wasted: int = 0
    last: dict[str, str] = field(default_factory=dict)

    def finished(self, attempt: Any) -> None:
        """One attempt that ended (anything with ``pod``, ``result`` and ``message``), in the order
        the pod's attempts ended."""
        self.attempts += 1
        previous = self.last.pop(attempt.pod, None)
        if attempt.result == "Scheduled":
            return
        self.failed += 1
        message = attempt.message or ""
        if previous == message:
            self.wasted += 1
        self.last[attempt.pod] = message

    @classmethod
    def of(cls, attempts: Iterable[Any]) -> WastedAttempts:
        counter = cls()
        for attempt in sorted(attempts, key=lambda a: (a.pod, a.attempt)):
            counter.finished(attempt)
        return counter


def _spread(app: str) -> dict[str, Any]:
    return {
        "labels": {"app": app},
        "spec": {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": app}},
                }
            ]
        },
    }


def _anti(app: str, key: str = HOSTNAME) -> dict[str, Any]:
    return {
        "labels": {"app": app},
        "spec": {
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
                    ]
                }
            }
        },
    }


_TOLERATES_BATCH = {
    "spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]}
}


def resources_kind(index: int) -> dict[str, Any]:
    """Mostly plain pods, some pinned, spread, anti-affine or tolerating: room is what they wait for."""
    kind = index % 10
    if kind < 5:
        return {}
    if kind < 7:
        return {"spec": {"nodeSelector": {ZONE: f"zone-{index % ZONES}"}}}
    if kind == 7:
        return _spread(f"web-{index % 7}")
    if kind == 8:
        return _anti(f"db-{index % 5}")
    return _TOLERATES_BATCH


def constraints_kind(index: int) -> dict[str, Any]:
    """Pods that wait for a constraint: one per zone for each of two apps, a zone only joining nodes
    carry, a spread over the zones."""
    kind = index % 10
    if kind < 4:
        return {}
    if kind < 7:
        return _anti(f"solo-{index % 2}", ZONE)
    if kind < 9:
        return {"spec": {"nodeSelector": {ZONE: f"zone-{ZONES}"}}}
    return _spread(f"web-{index % 3}")


@dataclass(frozen=True)
class Workload:
    name: str
    utilisation: float
    kind: Callable[[int], dict[str, Any]]


WORKLOADS = {
    w.name: w for w in (Workload("resources", 1.1, resources_kind), Workload("constraints", 0.15, constraints_kind))
}


def nodes(count: int) -> list[dict[str, Any]]:
    """``count`` 8-cpu nodes over the zones, every sixth tainted for batch pods."""
    out = list(node_objects([NodeShape(count, cpu="8", memory="32Gi")], zones=ZONES))
    for i, node in enumerate(out):
        if i % 6 == 5:
            node["spec"] = {"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]}
    return out


def _rate(workload: Workload, node_count: int) -> float:
    return rate_for(workload.utilisation, [NodeShape(node_count, cpu="8")], SHAPES, parse_distribution(LIFETIME))


def arrivals(workload: Workload, count: int, node_count: int, seed: int) -> Iterator[dict[str, Any]]:
    """``count`` pods arriving at the workload's utilisation, each of the kind its index gives."""
    for i, pod in enumerate(poisson_pods(count, _rate(workload, node_count), LIFETIME, SHAPES, seed=seed)):
        extra = workload.kind(i)
        pod["metadata"]["labels"] = dict(extra.get("labels", {}))
        pod["spec"].update(extra.get("spec", {}))
        yield pod


def timeline(node_count: int, seconds: float) -> list[dict[str, Any]]:
    """A step every five minutes while pods arrive: a node joins (every second one in a new zone), a
    node is cordoned, uncordoned, or drained."""
    steps: list[dict[str, Any]] = []
    for k, at in enumerate(range(STEP_SECONDS, int(seconds), STEP_SECONDS)):
        target = f"node-{(k * 7) % node_count}"
        if k % 4 == 0:
            name = f"joined-{k // 4}"
            zone = f"zone-{ZONES if k % 8 == 0 else k % ZONES}"
            steps.append(
                {
                    "at": at,
                    "action": "create",
                    "object": {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {"name": name, "labels": {HOSTNAME: name, ZONE: zone}},
                        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
                    },
                }
            )
        else:
            steps.append({"at": at, "action": ("cordon", "uncordon", "drain")[k % 4 - 1], "object": f"Node/{target}"})
    return steps


def run(workload: Workload, version: str, node_count: int, pod_count: int, seed: int) -> dict[str, Any]:
    """One emulated version (``1.34`` or ``1.34:Gate=false,…``) on the workload: counts, outcome, wall time."""
    emulated, _, gates = version.partition(":")
    started = time.perf_counter()
    result = kubesched.simulate(
        nodes(node_count),
        arrivals=arrivals(workload, pod_count, node_count, seed),
        timeline=timeline(node_count, pod_count / _rate(workload, node_count)),
        seed=seed,
        emulated_version=emulated,
        feature_gates=gates or None,
    )
    wall = time.perf_counter() - started
    counter = WastedAttempts.of(result.summaries)
    placed = sum(1 for node in result.final.values() if node)
    return {
        "workload": workload.name,
        "version": version,
        "pods": pod_count,
        "attempts": counter.attempts,
        "failed": counter.failed,
        "wasted": counter.wasted,
        "scheduled": placed,
        "pending": len(result.final) - placed,
        "virtual_h": result.virtual_seconds / 3600,
        "wall_s": wall,
    }


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        share = 100.0 * r["wasted"] / r["failed"] if r["failed"] else 0.0
        cells = (
            r["workload"],
            r["version"],
            r["pods"],
            r["attempts"],
            r["failed"],
            r["wasted"],
            f"{share:.0f}%",
            r["scheduled"],
            r["pending"],
            f"{r['virtual_h']:.1f}",
            f"{r['wall_s']:.1f}",
        )
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.queueing", description="Wasted scheduling attempts on churn, per emulated version."
    )
    parser.add_argument("--workload", choices=[*WORKLOADS, "all"], default="all")
    parser.add_argument("--nodes", type=int, default=40)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a small run (20 nodes, 400 pods)")
    parser.add_argument(
        "--versions",
        default=";".join(VERSIONS),
        help="emulated versions, ';'-separated, each with optional ':Gate=value,…'",
    )
    args = parser.parse_args(argv)
    node_count, pod_count = (20, 400) if args.quick else (args.nodes, args.pods)
    chosen = WORKLOADS.values() if args.workload == "all" else [WORKLOADS[args.workload]]
    versions = [v.strip() for v in args.versions.split(";") if v.strip()]
    rows = [run(workload, version, node_count, pod_count, args.seed) for workload in chosen for version in versions]
    print(f"Wasted attempts: {node_count} nodes, {pod_count} arrivals per workload, seed {args.seed}\n")
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
