"""The DRA benchmark: scheduler_perf's DRA workloads as cases, left out of ``python -m benchmarks``, and
upstream kube-scheduler measured on them (``-m controlplane``, tiny sizes). No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import dra
from benchmarks.dra_workloads import DRA_CASES, dra_objects, is_dra, is_measured
from benchmarks.run import ALL_CASES
from benchmarks.storage_workloads import SimCase


def test_dra_cases_are_run_by_their_own_benchmark() -> None:
    assert set(DRA_CASES) <= set(ALL_CASES)
    assert {c.workload for c in DRA_CASES.values()} == {
        "SchedulingWithResourceClaimTemplate",
        "SchedulingWithResourceClaim",
    }
    assert {c.nodes for c in DRA_CASES.values() if not c.quick} == {5000}
    assert [c.name for c in ALL_CASES.values() if is_dra(c)] == list(DRA_CASES)


@pytest.mark.parametrize("name", sorted(DRA_CASES))
def test_dra_cases_fit_their_devices(name: str) -> None:
    case = DRA_CASES[name]
    objects = list(dra_objects(case))  # refuses an init load larger than the devices
    assert sum(1 for o in objects if is_measured(o)) == case.measured
    assert sum(1 for o in objects if o["kind"] == "Node") == case.nodes


def test_table_shows_failures_beside_numbers() -> None:
    ok = {
        "case": "c",
        "scheduler": "kube-scheduler",
        "nodes": 3,
        "existing": 1,
        "measured": 2,
        "pods_per_s": 4.56,
        "wall_s": 0.44,
        "cpu_s": 1.0,
        "rss_mib": 80.4,
    }
    lines = dra.format_table([ok, {"case": "c", "scheduler": "kubesched (simulate)", "error": "2 of 2 unbound"}])
    assert lines.splitlines()[2] == "| c | kube-scheduler | 3 | 1 | 2 | 4.6 | 0.44 | 1.0 | 80 |"
    assert lines.splitlines()[3] == "| c | kubesched (simulate) | FAILED: 2 of 2 unbound |"


@pytest.mark.controlplane
@pytest.mark.parametrize("workload", ["SchedulingWithResourceClaimTemplate", "SchedulingWithResourceClaim"])
def test_upstream_binds_every_measured_pod(workload: str, controlplane_bin_dir: Path) -> None:
    row = dra.measure_upstream(SimCase("tiny", workload, 3, 4, 6), controlplane_bin_dir, timeout=120)
    assert row["scheduler"] == "kube-scheduler" and row["measured"] == 6 and row["pods_per_s"] > 0
