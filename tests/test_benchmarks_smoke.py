"""Smoke test for the benchmark suite: tiny workloads build, every measured pod gets bound, and the
harness reports it. Correctness only: no timing is asserted."""

from __future__ import annotations

import json

import pytest

from benchmarks import __main__ as bench_main
from benchmarks import run as bench_run
from benchmarks.workloads import CASES, NAMESPACE, Case, node_dict, pod_dict, prepare

TINY = Case("tiny", "SchedulingBasic", nodes=6, existing=4, measured=9, config="pct100", percentage=100)


def test_node_and_pod_match_scheduler_perf_templates() -> None:
    node = node_dict(4)
    assert node["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi", "pods": "110"}
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "node-4"
    pod = pod_dict("p", "node-1")
    assert pod["spec"]["nodeName"] == "node-1"
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "500Mi"}
    assert "nodeName" not in pod_dict("q")["spec"]


@pytest.mark.parametrize("percentage", [None, 100])
def test_prepared_case_binds_every_measured_pod(percentage: int | None) -> None:
    case = Case("tiny", "SchedulingBasic", 6, 4, 9, "x", percentage)
    prepared = prepare(case)
    assert prepared.scheduler.config.percentage_of_nodes_to_score == (percentage or 0)
    assert len(prepared.cluster.list("Node")[0]) == 6
    existing = [p for p in prepared.cluster.list("Pod", NAMESPACE)[0] if p["spec"].get("nodeName")]
    assert sorted(p["spec"]["nodeName"] for p in existing) == ["node-0", "node-1", "node-2", "node-3"]
    assert len(prepared.unbound()) == 9  # the burst is pending before the timed loop

    assert prepared.run_until_idle() == 9
    assert prepared.unbound() == []
    placements = prepared.placements()
    assert sum(placements.values()) == 9
    # LeastAllocated + BalancedAllocation spread 9 pods over 6 equal nodes: nobody takes more than 2.
    assert max(placements.values()) <= 2


def test_measure_reports_the_measured_pods() -> None:
    result = bench_run.measure(TINY)
    assert result["measured"] == 9 and result["cycles"] == 9
    assert result["pods_per_s"] > 0 and result["wall_s"] > 0 and result["peak_mib"] > 0
    assert result["nodes_used"] >= 5


def test_measure_fails_loudly_when_pods_stay_pending() -> None:
    # 2 nodes with cpu 4 hold at most 80 pods of 100m: the rest stay pending and the harness must say so.
    case = Case("overfull", "SchedulingBasic", nodes=2, existing=0, measured=85, config="pct100", percentage=100)
    with pytest.raises(bench_run.BenchmarkError, match="5 of 85 measured pods were not bound"):
        bench_run.measure(case)


def test_run_module_emits_json_in_subprocess() -> None:
    result = bench_run.run_in_subprocess("basic-quick-pct100", measured=5, timeout=120)
    assert result["case"] == "basic-quick-pct100"
    assert result["measured"] == 5 and result["nodes"] == 500
    json.dumps(result)


def test_profile_lists_functions() -> None:
    # Top 12: with 9 pods, binding and scheduling cycles can swap places at the top under load.
    report = bench_run.profile_case(TINY, top=12)
    assert "cumulative" in report and "schedule_next" in report


@pytest.mark.parametrize(
    ("only", "quick", "expected"),
    [
        ("basic-5000-pct100", False, {"basic-5000-pct100"}),
        (
            "basic-5000",
            False,
            {
                "basic-5000-default",
                "basic-5000-pct100",
                "basic-5000-default-simulate",
                "basic-5000-default-simulate-trace",
                "basic-5000-default-simulate-trace-gz",
                *(f"basic-5000-default-core-{r}" for r in ("summary", "full", "trace")),
            },
        ),
        ("*-pct100", False, {"basic-500-pct100", "basic-5000-pct100"}),
        (
            "basic-500-pct100*",
            False,
            {
                "basic-500-pct100",
                *(f"basic-500-pct100-simulate{p}" for p in ("", "-none", "-full", "-trace")),
                *(f"basic-500-pct100-core-{r}" for r in ("summary", "full", "trace")),
            },
        ),
        ("spreading", False, {"spreading-5000-default", "preferred-spreading-5000-default"}),
        (
            None,
            True,
            {
                "basic-quick-default",
                "basic-quick-pct100",
                "basic-quick-default-simulate",
                "basic-quick-default-simulate-trace",
                *(
                    f"{w}-quick-default"
                    for w in (
                        "anti-affinity",
                        "affinity",
                        "preferred-affinity",
                        "preferred-anti-affinity",
                        "spreading",
                        "preferred-spreading",
                    )
                ),
            },
        ),
        ("nothing", False, set()),
    ],
)
def test_select(only: str | None, quick: bool, expected: set[str]) -> None:
    assert {c.name for c in bench_main.select(CASES.values(), only=only, quick=quick)} == expected


def test_table_has_a_row_per_result() -> None:
    ok = {
        "workload": "W",
        "nodes": 1,
        "existing": 0,
        "measured": 2,
        "config": "c",
        "pods_per_s": 12.345,
        "wall_s": 0.5,
        "pods_per_cpu_s": 20.0,
        "peak_mib": 40.2,
    }
    bad = {"workload": "W", "nodes": 1, "existing": 0, "measured": 2, "config": "c", "error": "boom"}
    lines = bench_main.format_table([ok, bad]).splitlines()
    assert lines[0].startswith("| workload | nodes |") and len(lines) == 4
    assert "| core | 12.3 | 0.50 | 20.0 | 40 |" in lines[2]
    assert "FAILED" in lines[3]


@pytest.mark.parametrize("path", ["simulate", "simulate-none", "simulate-full", "simulate-trace-gz"])
def test_user_path_times_the_whole_simulate_call(path: str) -> None:
    case = Case("tiny-user", "SchedulingBasic", 6, 4, 9, "pct100", 100, path=path)
    result = bench_run.measure(case)
    assert result["path"] == path and result["measured"] == 9 and result["cycles"] == 9
    assert result["nodes_used"] >= 5 and result["pods_per_s"] > 0
    assert (result["trace_mib"] > 0) == path.startswith("simulate-trace")


@pytest.mark.parametrize("path", ["core+summary", "core+full", "core+trace"])
def test_core_loop_with_a_recorder_attached(path: str) -> None:
    case = Case("tiny-recorded", "SchedulingBasic", 6, 4, 9, "pct100", 100, path=path)
    result = bench_run.measure(case)
    assert result["path"] == path and result["cycles"] == 9 and result["pods_per_s"] > 0


def test_user_path_fails_loudly_when_pods_stay_pending() -> None:
    case = Case(
        "overfull",
        "SchedulingBasic",
        nodes=2,
        existing=0,
        measured=85,
        config="pct100",
        percentage=100,
        path="simulate",
    )
    with pytest.raises(bench_run.BenchmarkError, match="5 of 85 measured pods were not bound"):
        bench_run.measure(case)


def test_user_paths_are_set_against_the_core_row_of_their_size() -> None:
    size = {"workload": "SchedulingBasic", "nodes": 5000, "existing": 1000, "measured": 10000, "config": "default"}
    rows = [
        {**size, "case": "basic-5000-default", "path": "core", "pods_per_s": 2000.0, "peak_mib": 160.0},
        {**size, "case": "basic-5000-default-simulate", "path": "simulate", "pods_per_s": 1500.0, "peak_mib": 600.0},
        {
            **size,
            "case": "basic-5000-default-simulate-trace",
            "path": "simulate-trace",
            "pods_per_s": 900.0,
            "peak_mib": 1200.0,
        },
        {**size, "nodes": 7, "case": "other-simulate", "path": "simulate", "pods_per_s": 10.0, "peak_mib": 1.0},
    ]
    assert bench_main.compare_user_paths(rows) == [
        "basic-5000-default-simulate: 75% of the core loop's 2000.0 pods/s (target >= 70%: met); "
        "peak 600 MiB (target <= 1024: met)",
        "basic-5000-default-simulate-trace: 45% of the core loop's 2000.0 pods/s (target >= 50%: NOT met); "
        "peak 1200 MiB (target <= 1024: NOT met)",
        "other-simulate: 10.0 pods/s (no core row of this size in this run)",
    ]


@pytest.mark.parametrize("workload", ["SchedulingPodAntiAffinity", "TopologySpreading"])
def test_inter_pod_workloads_honour_their_hard_constraints(workload: str) -> None:
    case = Case("tiny", workload, nodes=12, existing=3, measured=9, config="default")
    prepared = prepare(case)
    prepared.run_until_idle()
    assert prepared.unbound() == [] and prepared.violations() == []


def test_violations_name_a_broken_spread() -> None:
    case = Case("tiny", "TopologySpreading", nodes=3, existing=0, measured=3, config="default")
    prepared = prepare(case)
    prepared.run_until_idle()
    for name in prepared.measured_names:  # pile every pod onto one zone behind the scheduler's back
        obj = prepared.cluster.lookup("Pod", prepared.namespace, name)
        assert obj is not None
        obj["spec"]["nodeName"] = "node-0"
    assert prepared.violations() == ["zone skew 3 exceeds maxSkew 1: {'moon-1': 3, 'moon-2': 0, 'moon-3': 0}"]


def test_user_path_share_by_cpu_seconds_when_both_rows_have_them() -> None:
    size = {"workload": "W", "nodes": 1, "existing": 0, "measured": 10, "config": "c"}
    rows = [
        {**size, "case": "w", "path": "core", "pods_per_s": 100.0, "cpu_s": 0.1, "peak_mib": 1.0},
        {**size, "case": "w-simulate", "path": "simulate", "pods_per_s": 50.0, "cpu_s": 0.125, "peak_mib": 1.0},
    ]
    assert bench_main.compare_user_paths(rows) == [
        "w-simulate: 50% of the core loop's 100.0 pods/s [80% by cpu seconds]"
    ]


def test_repeated_runs_keep_the_fastest_and_a_failure_only_when_nothing_ran() -> None:
    slow, fast, failed = {"pods_per_s": 1.0}, {"pods_per_s": 2.0}, {"error": "boom"}
    assert bench_main.better(None, slow) is slow
    assert bench_main.better(slow, fast) is fast and bench_main.better(fast, slow) is fast
    assert bench_main.better(failed, slow) is slow and bench_main.better(slow, failed) is slow
    assert bench_main.better(None, failed) is failed


def test_extending_benchmarks_run_small() -> None:
    from benchmarks import extending

    rows = extending.gangs(100, 10, 4, 6, burst=True)
    assert rows[0]["note"].startswith("6 gangs placed whole, 0 partly")
    overhead = extending.plugin_overhead(50, 3)
    assert [r["variant"] for r in overhead][1:] == [
        "+ trivial filter+score, per-node form",
        "+ trivial filter+score, batch form",
    ]
    ext = extending.extender(5, 3)
    assert ext[-1]["variant"].startswith("bare loopback round trip")
    assert "| gangs | 10 gangs of 4, room for 6 (burst) |" in extending.format_table(rows)


@pytest.mark.parametrize("name", ["csi-pvs-quick-default", "in-tree-pvs-quick-default", "preemption-quick-default"])
def test_simulation_cases_bind_every_measured_pod(name: str) -> None:
    """The volume and preemption cases run through the simulation path and check their own outcome."""
    from benchmarks.run import get_case, measure

    result = measure(get_case(name, 20))
    assert result["measured"] == 20 and result["nodes_used"] == 20
    if name.startswith("preemption"):
        assert result["deleted"] >= 20


# -- queueing: wasted attempts ------------------------------------------------------------------------
def test_wasted_attempts_are_failures_repeating_the_previous_message() -> None:
    from types import SimpleNamespace

    from benchmarks.queueing import WastedAttempts

    attempts = [
        SimpleNamespace(pod=pod, attempt=attempt, result=result, message=message)
        for pod, attempt, result, message in [
            ("a", 1, "Unschedulable", "no room"),
            ("a", 2, "Unschedulable", "no room"),
            ("a", 3, "Unschedulable", "other"),
            ("b", 1, "Unschedulable", "no room"),
            ("a", 4, "Scheduled", None),
            ("a", 5, "Unschedulable", "other"),
        ]
    ]
    counter = WastedAttempts.of(reversed(attempts))  # each pod's attempts are taken in their order
    assert (counter.attempts, counter.failed, counter.wasted) == (6, 5, 1)


def test_queueing_benchmark_runs_both_versions_on_a_tiny_churn() -> None:
    from benchmarks.queueing import WORKLOADS, format_table, run

    rows = [run(WORKLOADS["constraints"], version, 6, 30, 1) for version in ("1.30", "1.34")]
    assert [(r["workload"], r["version"]) for r in rows] == [("constraints", "1.30"), ("constraints", "1.34")]
    for row in rows:
        assert row["attempts"] >= row["scheduled"] and row["scheduled"] + row["pending"] == 30
        assert row["wasted"] <= row["failed"] <= row["attempts"]
    assert format_table(rows).count("\n") == 3
