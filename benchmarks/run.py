"""Timing and memory harness: one case per process, so that each case's peak RSS is its own.

``python -m benchmarks.run --case NAME [--measured N]`` builds the case, times only the scheduling
loop over the measured pods (scheduling cycles, binding cycles and the watch events they cause),
checks that every measured pod ended up bound, and prints one JSON object. A user-path case times the
whole ``kubesched.simulate()`` call on the same objects instead (see :mod:`benchmarks.workloads`).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubesched
from benchmarks.dra_workloads import DRA_CASES, dra_objects, is_dra
from benchmarks.storage_workloads import SIM_CASES, SimCase, objects
from benchmarks.workloads import (
    CASES,
    USER_PATHS,
    Case,
    config_dict,
    emulated_version,
    existing_pods,
    measured_pods,
    nodes,
    prepare,
)
from kubesched.recording import FullRecorder, Recorder, SummaryRecorder, TraceWriter
from kubesched.scenario.pipeline import load_scenario
from kubesched.sim.simulate import Simulation, resolve_config

#: Every case by name: scheduler-loop cases and cases run through kubesched.simulate's Simulation (the DRA
#: ones too, which ``python -m benchmarks.dra`` runs beside upstream).
ALL_CASES: dict[str, Case | SimCase] = {**CASES, **SIM_CASES, **DRA_CASES}

#: Where ``python -m benchmarks.run`` can import this package from (it is not installed).
_REPO_ROOT = Path(__file__).resolve().parent.parent


class BenchmarkError(RuntimeError):
    """The benchmark did not do what it measures (e.g. pods left unbound): its numbers would lie."""


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the trace writer process)."""
    times = os.times()
    return time.process_time() + times.children_user + times.children_system


def peak_rss_mib() -> float:
    """This process's peak resident set size (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def get_case(name: str, measured: int | None = None) -> Case | SimCase:
    try:
        case = ALL_CASES[name]
    except KeyError:
        raise SystemExit(f"unknown case {name!r}; known: {', '.join(ALL_CASES)}") from None
    return case.with_measured(measured) if measured is not None else case


def measure_simulation(case: SimCase, *, profile: cProfile.Profile | None = None) -> dict[str, Any]:
    """Run ``case`` as ``kubesched.simulate(objects, burst=True)`` does. With path "sim" the scenario is read
    and checked by the input pipeline and loaded into the embedded control plane untimed, then the
    simulation run timed; with "simulate" the whole call is timed, loading included."""
    setup_start = time.perf_counter()
    built = list(dra_objects(case) if is_dra(case) else objects(case))
    sim: Simulation | None = None
    if case.path == "sim":
        sim = Simulation(load_scenario(built), resolve_config(None, emulated_version=emulated_version()), seed=0)
        sim.load()
        del built
    setup_s = time.perf_counter() - setup_start
    if profile is not None:
        profile.enable()
    start, cpu_start = time.perf_counter(), cpu_seconds()
    if sim is not None:
        result = sim.run(burst=True)
    else:
        result = kubesched.simulate(built, burst=True, emulated_version=emulated_version())
    wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    if profile is not None:
        profile.disable()
    _check_bound(case, result)
    if case.workload == "PreemptionBasic":
        preemptors = {a["pod"] for a in result.attempts if a.get("victims")}
        if len(preemptors) != case.measured:
            raise BenchmarkError(f"{case.name}: {len(preemptors)} of {case.measured} pods preempted")
    return _row(case, result, wall, cpu, setup_s, deleted=len(result.deleted))


def measure(case: Case | SimCase, *, profile: cProfile.Profile | None = None) -> dict[str, Any]:
    """Run ``case`` in this process and return its numbers; raises BenchmarkError if pods stay unbound."""
    if isinstance(case, SimCase):
        return measure_simulation(case, profile=profile)
    if case.path in USER_PATHS:
        return measure_user_path(case, profile=profile)
    setup_start = time.perf_counter()
    prepared = prepare(case)
    setup_s = time.perf_counter() - setup_start
    with tempfile.TemporaryDirectory(prefix="kubesched-bench-") as tmp:
        recorder = _core_recorder(case.path, Path(tmp))
        if recorder is not None:
            prepared.scheduler.add_recorder(recorder)
        if profile is not None:
            profile.enable()
        start, cpu_start = time.perf_counter(), cpu_seconds()
        cycles = prepared.run_until_idle()
        if recorder is not None:
            recorder.close()  # a trace is only written once it is on disk
        wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    if profile is not None:
        profile.disable()
    unbound = prepared.unbound()
    if unbound:
        raise BenchmarkError(
            f"{case.name}: {len(unbound)} of {case.measured} measured pods were not bound "
            f"(first: {', '.join(unbound[:5])})"
        )
    violations = prepared.violations()
    if violations:
        raise BenchmarkError(f"{case.name}: " + "; ".join(violations))
    placements = prepared.placements()
    return {
        "case": case.name,
        "workload": case.workload,
        "nodes": case.nodes,
        "existing": case.existing,
        "measured": case.measured,
        "config": case.config,
        "path": case.path,
        "cycles": cycles,
        "pods_per_s": case.measured / wall if wall > 0 else float("inf"),
        "wall_s": wall,
        "setup_s": setup_s,
        "cpu_s": cpu,
        "pods_per_cpu_s": case.measured / cpu if cpu > 0 else float("inf"),
        "peak_mib": peak_rss_mib(),
        "nodes_used": len(placements),
        "max_pods_per_node": max(placements.values(), default=0),
        # Default plugins kubesched does not have yet: numbers are not comparable to kube-scheduler's
        # until this is empty.
        "plugins_left_out": sorted(_left_out(prepared.scheduler.warnings)),
    }


def _core_recorder(path: str, tmp: Path) -> Recorder | None:
    """The recorder a core case runs with: none for "core", else the one its path names."""
    recorders: dict[str, Callable[[], Recorder]] = {
        "core+summary": SummaryRecorder,
        "core+full": FullRecorder,
        "core+trace": lambda: TraceWriter(tmp / "trace.jsonl"),
    }
    if path == "core":
        return None
    if path not in recorders:
        raise BenchmarkError(f"unknown path {path!r}")
    return recorders[path]()


def measure_user_path(case: Case, *, profile: cProfile.Profile | None = None) -> dict[str, Any]:
    """Time one ``kubesched.simulate()`` call, loading included, on the case's objects (built untimed)."""
    objects = [*nodes(case), *existing_pods(case), *measured_pods(case)]
    options = dict(USER_PATHS[case.path])
    with tempfile.TemporaryDirectory(prefix="kubesched-bench-") as tmp:
        if "trace" in options:
            options["trace"] = Path(tmp) / options["trace"]
        if profile is not None:
            profile.enable()
        start, cpu_start = time.perf_counter(), cpu_seconds()
        result = kubesched.simulate(
            objects, config=config_dict(case.percentage), burst=True, emulated_version=emulated_version(), **options
        )
        wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
        if profile is not None:
            profile.disable()
        trace_mib = options["trace"].stat().st_size / (1 << 20) if "trace" in options else 0.0
    _check_bound(case, result)
    return _row(case, result, wall, cpu, 0.0, trace_mib=trace_mib)


def _check_bound(case: Case | SimCase, result: Any) -> None:
    pending = [key for key, node in result.final.items() if node is None]
    if pending:
        raise BenchmarkError(
            f"{case.name}: {len(pending)} of {case.measured} measured pods were not bound "
            f"(first: {', '.join(pending[:5])})"
        )


def _row(case: Case | SimCase, result: Any, wall: float, cpu: float, setup_s: float, **extra: Any) -> dict[str, Any]:
    """A case's numbers, as both paths report them (``extra``: what one path adds)."""
    placements: dict[str, int] = {}
    for node in result.final.values():
        if node:
            placements[node] = placements.get(node, 0) + 1
    return {
        "case": case.name,
        "workload": case.workload,
        "nodes": case.nodes,
        "existing": case.existing,
        "measured": case.measured,
        "config": case.config,
        "path": case.path,
        "cycles": result.attempt_count,
        "pods_per_s": case.measured / wall if wall > 0 else float("inf"),
        "wall_s": wall,
        "setup_s": setup_s,
        "cpu_s": cpu,
        "pods_per_cpu_s": case.measured / cpu if cpu > 0 else float("inf"),
        "peak_mib": peak_rss_mib(),
        **extra,
        "nodes_used": len(placements),
        "max_pods_per_node": max(placements.values(), default=0),
        "plugins_left_out": sorted(_left_out(result.warnings)),
    }


def _left_out(warnings: list[str]) -> set[str]:
    return {m.group(1) for w in warnings if (m := re.search(r"plugin (\S+) is not implemented", w))}


def run_in_subprocess(name: str, *, measured: int | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Run one case in a fresh interpreter and return its JSON result; raises BenchmarkError on failure."""
    cmd = [sys.executable, "-m", "benchmarks.run", "--case", name]
    if measured is not None:
        cmd += ["--measured", str(measured)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, cwd=_REPO_ROOT)
    if proc.returncode != 0:
        raise BenchmarkError(f"{name}: exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise BenchmarkError(f"{name}: no output")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def profile_case(case: Case | SimCase, *, top: int = 30, sort: str = "cumulative") -> str:
    """Run ``case`` under cProfile (the timed loop only) and return the top functions by ``sort``."""
    prof = cProfile.Profile()
    result = measure(case, profile=prof)
    out = io.StringIO()
    out.write(
        f"{case.name} ({case.measured} measured pods): {result['pods_per_s']:.1f} pods/s under cProfile, "
        f"{result['wall_s']:.2f} s\n"
    )
    pstats.Stats(prof, stream=out).sort_stats(sort).print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--case", required=True, choices=sorted(ALL_CASES))
    parser.add_argument("--measured", type=int, default=None, help="override the number of measured pods")
    args = parser.parse_args(argv)
    try:
        result = measure(get_case(args.case, args.measured))
    except BenchmarkError as err:
        print(str(err), file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
