"""The HTML report: its data, and the page itself rendered in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kubesched import simulate
from kubesched.sim.html_report import decisions, rejection_counts, render, run_series, time_series, write_report
from tests.sim.scenarios import deployment, node, pod

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = Path(os.environ.get("KUBESCHED_SCREENSHOT_DIR", REPO / "build" / "screenshots"))


@pytest.fixture(scope="module")
def result():
    scenario = [node("n1", cpu="2"), node("n2", cpu="2", taints=[{"key": "gpu", "value": "x",
                                                                    "effect": "NoSchedule"}]),
                pod("existing", cpu="500m", node_name="n1"), deployment("web", 3, cpu="500m"), pod("big", cpu="4")]
    return simulate(scenario, seed=2, record="full")


def test_series_step_per_attempt_with_pending_and_utilisation(result) -> None:
    series = run_series(result)
    assert series["attempt"] == list(range(1, len(result.records) + 1))
    assert series["pending"][-1] == 1  # big
    # 500m existing + 3 x 500m on n1, out of 4 cpus in the cluster.
    assert series["cpu"][0] == pytest.approx(25.0) and series["cpu"][-1] == pytest.approx(50.0)


def test_timed_runs_follow_virtual_time(result) -> None:
    assert time_series(result) is None  # untimed: the attempts are the clock
    arriving = []
    for i, (arrival, duration) in enumerate([("0s", "100s"), ("10s", "100s"), ("20s", None)]):
        p = pod(f"p{i}", cpu="1")
        p["metadata"]["annotations"] = {"kubesched.io/arrival": arrival,
                                        **({"kubesched.io/duration": duration} if duration else {})}
        arriving.append(p)
    timed = simulate([node("n1", cpu="2"), node("n2", cpu="2"), *arriving], seed=1, record="full")
    series = time_series(timed)
    assert series is not None
    seconds = series["seconds"]
    assert seconds == sorted(seconds) and seconds[-1] >= 110  # the last pod finished at 110 s
    at = dict(zip(seconds, series["cpu"], strict=True))
    assert max(series["cpu"]) == pytest.approx(75.0)  # 3 of 4 cpus while all three run
    assert at[seconds[-1]] == pytest.approx(25.0)  # the one without a duration keeps running
    assert 'virtual seconds' in render(timed)


def test_reasons_by_plugin_and_decisions(result) -> None:
    counts = rejection_counts(result)
    assert counts == {"default/big": {"NodeResourcesFit": 1, "TaintToleration": 1}}
    web = next(v for k, v in decisions(result).items() if k.startswith("default/web-"))
    assert web[0]["result"] == "Scheduled" and web[0]["node"] == "n1"
    assert [r[:2] for r in web[0]["rejected"]] == [["n2", "TaintToleration"]]


def test_page_is_self_contained(result) -> None:
    from plotly.offline import get_plotlyjs

    page = render(result)
    bundle = get_plotlyjs()
    assert page.count(bundle) == 1  # plotly.js inlined once
    ours = page.replace(bundle, "")
    assert "<script src" not in ours and "http://" not in ours and "https://" not in ours
    for heading in ("Requested and allocatable per node", "Pending pods and utilisation over the run",
                    "Why pods stayed unschedulable", "Preemptions", "Decisions", "Workloads"):
        assert heading in page


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium package)")
        pytest.skip("chromium is not installed")
    return found


def _chromium_run(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=15000"]
    return subprocess.run([_chromium(), *flags, *extra, page.as_uri()], capture_output=True, text=True,
                          timeout=180, check=False)


def test_page_renders_in_headless_chromium_without_console_errors(result, tmp_path: Path) -> None:
    page = write_report(result, tmp_path / "report.html")
    run = _chromium_run(page, tmp_path / "profile", "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    # plotly draws each figure into <svg class="main-svg"> elements; three figures here.
    plots = {m for m in re.findall(r'<div id="(plot-[a-z]+)"', dom)}
    assert plots == {"plot-usage", "plot-timeline", "plot-reasons"}
    assert dom.count('class="main-svg"') >= 6
    assert re.search(r'<pre id="js-errors"></pre>', dom), "the page caught a JavaScript error"
    # The decision picker ran: the first pending pod's rejected nodes are in the DOM.
    assert "default/big" in dom and "Rejected nodes" in dom
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []

    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOT_DIR / "report.png"
    run = _chromium_run(page, tmp_path / "profile2", "--window-size=1400,2200", f"--screenshot={shot}")
    assert run.returncode == 0 and shot.stat().st_size > 20_000


def test_large_decisions_keep_the_best_and_count_the_rest() -> None:
    from kubesched.recording.trace import AttemptRecord
    from kubesched.sim.html_report import decision

    record = AttemptRecord(pod="default/p", attempt=1, profile="default-scheduler", result="Scheduled", node="a",
                           feasible=["a", "b", "c"], total={"a": 30, "b": 10, "c": 20},
                           scores={"a": {"X": 30}, "b": {"X": 10}, "c": {"X": 20}},
                           filter={n: {"plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"]}
                                   for n in ("d", "e", "f")},
                           details={"score": {"X": {"a": 3, "b": 1, "c": 2}}, "weights": {"X": 10}})
    got = decision(record, keep=2)
    assert [row["node"] for row in got["feasible"]] == ["a", "c"]
    assert got["feasible"][0]["scores"] == [["X", 3, 3, 10, 30]]
    assert [row[0] for row in got["rejected"]] == ["d", "e"]
    assert got["omitted"] == 2 and got["rejectedBy"] == {"NodeResourcesFit": 3}
    assert decision(record, keep=3)["omitted"] == 0


def test_a_summary_only_result_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    from kubesched.scenario.pipeline import SimulationError

    result = simulate([node("n1"), pod("p")])
    with pytest.raises(SimulationError, match='record="full"'):
        write_report(result, tmp_path / "r.html")
