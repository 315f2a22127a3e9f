"""scheduler_perf's DRA workloads as benchmark cases (:mod:`kubesched.scenario.generate.perf_dra`).

SchedulingWithResourceClaimTemplate (each pod's claim made from a template, 10 devices per node) and
SchedulingWithResourceClaim (five pods to a claim, 2 devices per node) at 5000 nodes, with upstream's
5000-pod mix of init and measured pods (2500 each; the init pods bound with their claims allocated), and
a quick size of each. kubesched runs them through ``kubesched.simulate`` (:mod:`benchmarks.run`); upstream
kube-scheduler on the same objects in the same run (:mod:`benchmarks.dra`). They are left out of
``python -m benchmarks``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from benchmarks.storage_workloads import SimCase
from kubesched.scenario.generate.perf import workload_objects
from kubesched.scenario.generate.perf_dra import DRA_WORKLOADS, TEST_NS


def _dra_cases() -> list[SimCase]:
    out = []
    for short, workload in (
        ("dra-claim-template", "SchedulingWithResourceClaimTemplate"),
        ("dra-claim", "SchedulingWithResourceClaim"),
    ):
        out.append(SimCase(f"{short}-5000-default", workload, 5000, 2500, 2500))
        out.append(SimCase(f"{short}-quick-default", workload, 100, 100, 200, quick=True))
    return out


DRA_CASES: dict[str, SimCase] = {c.name: c for c in _dra_cases()}


def is_dra(case: Any) -> bool:
    return getattr(case, "workload", None) in DRA_WORKLOADS


def dra_objects(case: SimCase) -> Iterator[dict[str, Any]]:
    """The case's objects in manifest order: nodes and slices, the class, the init load, the measured pods."""
    return workload_objects(case.workload, case.nodes, case.existing, case.measured)


def is_measured(obj: dict[str, Any]) -> bool:
    return obj["kind"] == "Pod" and obj["metadata"]["namespace"] == TEST_NS
