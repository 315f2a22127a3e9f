"""The HTML report: its data, and the page itself rendered in headless Chromium (small and at 1000 nodes)."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kubesched import simulate
from kubesched.sim.html_decisions import expand
from kubesched.sim.html_report import rejection_counts, render, run_series, time_series, write_report
from kubesched.sim.report import format_over_time
from tests.sim.scenarios import POOL_LABEL, deployment, node, pod, pooled_cluster

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = Path(os.environ.get("KUBESCHED_SCREENSHOT_DIR", REPO / "build" / "screenshots"))
#: What a report on a thousand nodes and a few thousand pods may weigh.
BUDGET = 5_000_000


@pytest.fixture(scope="module")
def result():
    scenario = [
        node("n1", cpu="2"),
        node("n2", cpu="2", taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}]),
        pod("existing", cpu="500m", node_name="n1"),
        deployment("web", 3, cpu="500m"),
        pod("big", cpu="4"),
    ]
    return simulate(scenario, seed=2, record="full")


def unpack(page: str, element: str) -> str:
    """The text the page carries gzip-compressed and base64-encoded in ``<script id=element>``."""
    found = re.search(rf'<script type="application/octet-stream" id="{element}">([^<]*)</script>', page)
    assert found is not None, element
    return gzip.decompress(base64.b64decode(found.group(1))).decode("utf-8")


def page_data(page: str) -> dict[str, Any]:
    return json.loads(unpack(page, "report-data"))


def figure(data: dict[str, Any], div: str) -> dict[str, Any]:
    return next(f for f in data["figures"] if f["id"] == div)


# -- the data ------------------------------------------------------------------------------------------
def test_series_step_per_attempt_with_pending_and_utilisation(result) -> None:
    series = run_series(result)
    assert series["attempt"] == list(range(1, len(result.records) + 1))
    assert series["pending"][-1] == 1  # big
    # 500m existing + 3 x 500m on n1, out of 4 cpus in the cluster.
    assert series["percent"]["cpu"][0] == pytest.approx(25.0) and series["percent"]["cpu"][-1] == pytest.approx(50.0)


def test_the_series_per_attempt_counts_pods_never_attempted_and_stays_bounded() -> None:
    pods = [pod(f"p{i}", cpu="50m", memory="64Mi") for i in range(30)]
    never = pod("elsewhere", schedulerName="another-scheduler")
    run = simulate([node("n1"), never, *pods], record="full")
    series = run_series(run, max_points=10)
    assert 5 <= len(series["attempt"]) <= 10
    assert set(series["pending"]) == {1}  # the pod no profile schedules waits throughout
    assert series["attempt"][-1] == 30 and series["percent"]["cpu"][-1] == pytest.approx(75.0)  # 1.5 of 2 cpus


def test_timed_runs_follow_virtual_time(result) -> None:
    assert time_series(result) is None  # untimed: the attempts are the clock
    arriving = []
    for i, (arrival, duration) in enumerate([("0s", "100s"), ("10s", "100s"), ("20s", None)]):
        p = pod(f"p{i}", cpu="1")
        p["metadata"]["annotations"] = {
            "kubesched.io/arrival": arrival,
            **({"kubesched.io/duration": duration} if duration else {}),
        }
        arriving.append(p)
    timed = simulate([node("n1", cpu="2"), node("n2", cpu="2"), *arriving], seed=1, record="full")
    series = time_series(timed)
    assert series is not None
    seconds, cpu = series["seconds"], series["percent"]["cpu"]
    assert seconds == sorted(seconds) and seconds[-1] >= 110  # the last pod finished at 110 s
    assert max(cpu) == pytest.approx(75.0)  # 3 of 4 cpus while all three run
    assert cpu[-1] == pytest.approx(25.0)  # the one without a duration keeps running
    assert figure(page_data(render(timed)), "plot-timeline")["layout"]["xaxis"]["title"]["text"] == "virtual seconds"


def test_reasons_by_plugin(result) -> None:
    assert rejection_counts(result) == {"default/big": {"NodeResourcesFit": 1, "TaintToleration": 1}}


def test_pods_rejected_alike_share_a_bar_and_the_bars_are_bounded() -> None:
    from collections import Counter

    from kubesched.sim.html_report import MAX_REASON_BARS, reasons_figure

    counts = {f"ns/web-{i}": Counter({"NodeResourcesFit": 990, "TaintToleration": 10}) for i in range(12)}
    counts |= {f"ns/odd-{i}": Counter({"NodeAffinity": i + 1}) for i in range(MAX_REASON_BARS + 5)}
    fig = reasons_figure(counts)
    labels = fig["data"][0]["y"]
    assert len(labels) == MAX_REASON_BARS and labels[0] == "ns/web-0 and 11 more"
    assert "6 more pods" in fig["layout"]["xaxis"]["title"]["text"]
    fit = next(trace for trace in fig["data"] if trace["name"] == "NodeResourcesFit")
    assert fit["x"][0] == 990


def test_decisions_name_nodes_by_position_in_natural_order(result) -> None:
    data = page_data(render(result))
    nodes, texts = data["nodes"], data["texts"]
    assert nodes == ["n1", "n2"]
    by_pod = dict(data["decisions"])
    web = next(v for k, v in by_pod.items() if k.startswith("default/web-"))
    first = web[0]
    assert first["r"] == "Scheduled" and nodes[first["n"]] == "n1"
    assert [nodes[i] for i in expand(first["f"])] == ["n1"]
    [(plugin, reason, runs)] = first["x"]
    assert (texts[plugin], [nodes[i] for i in expand(runs)]) == ("TaintToleration", ["n2"])
    assert "untolerated taint" in texts[reason]
    assert data["first"] == "default/big" and next(iter(by_pod)) == "default/big"


def test_page_is_self_contained(result) -> None:
    from plotly.offline import get_plotlyjs

    page = render(result)
    assert unpack(page, "plotly-js") == get_plotlyjs()  # plotly.js inlined once, compressed
    assert page.count('<script type="application/octet-stream"') == 2
    assert "<script src" not in page and "http://" not in page and "https://" not in page
    for heading in (
        "Requested and allocatable per pool",
        "Pending pods and utilisation over the run",
        "Why pods stayed unschedulable",
        "Preemptions",
        "Decisions",
        "Workloads",
    ):
        assert heading in page


def test_text_and_chart_quote_the_same_pending_pods() -> None:
    """examples/cluster's summary says the most pods pending at once and at the end: the chart's line
    peaks and ends there (both read ``result.series``)."""
    run = simulate(REPO / "examples" / "cluster", record="full")
    text = "\n".join(format_over_time(run))
    found = re.search(r"pending pods: max (\d+), at the end (\d+)", text)
    assert found is not None, text
    most, end = int(found.group(1)), int(found.group(2))
    line = figure(page_data(render(run)), "plot-timeline")["data"][0]
    assert line["name"] == "pending pods"
    assert (max(line["y"]), line["y"][-1]) == (most, end)
    assert end == 4 and most > end  # the burst at the start, and the four pods left pending


def test_a_thinned_series_keeps_its_peak_and_end_in_text_and_chart() -> None:
    # A burst of pods that cannot fit at first, then a long run: rows are merged many times over.
    pods = [pod(f"burst-{i}", cpu="1") for i in range(6)]
    for p in pods:
        p["metadata"]["annotations"] = {"kubesched.io/arrival": "5s", "kubesched.io/duration": "1s"}
    late = pod("late", cpu="1")
    late["metadata"]["annotations"] = {"kubesched.io/arrival": "20h"}
    run = simulate([node("n1", cpu="1"), *pods, late], record="full")
    assert run.series is not None and run.series.interval > 1
    text = "\n".join(format_over_time(run))
    line = figure(page_data(render(run)), "plot-timeline")["data"][0]
    assert f"pending pods: max {max(line['y'])}, at the end {line['y'][-1]}" in text
    assert max(line["y"]) >= 5 and line["y"][-1] == 0


# -- the page in a browser -----------------------------------------------------------------------------
def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium package)")
        pytest.skip("chromium is not installed")
    return found


def _chromium_run(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=15000",
    ]
    return subprocess.run(
        [_chromium(), *flags, *extra, page.as_uri()], capture_output=True, text=True, timeout=180, check=False
    )


def _rendered(page: Path, profile: Path) -> str:
    """The DOM once the page's script is done: it marks <html data-report=ready data-plots=N>."""
    run = _chromium_run(page, profile, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    errors = re.search(r'<pre id="js-errors">([^<]*)</pre>', dom)
    assert errors is not None and errors.group(1) == "", f"the page caught a JavaScript error: {errors}"
    assert re.search(r'<html [^>]*data-report="ready"', dom), dom[:300]
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    return dom


def _drawn(dom: str, div: str) -> bool:
    """Whether plotly drew into ``<div id=div>`` (its <svg class="main-svg"> is inside)."""
    start = dom.find(f'id="{div}"')
    return start >= 0 and 'class="main-svg"' in dom[start : start + 3000]


def test_page_renders_in_headless_chromium_without_console_errors(result, tmp_path: Path) -> None:
    page = write_report(result, tmp_path / "report.html")
    dom = _rendered(page, tmp_path / "profile")
    plots = set(re.findall(r'<div[^>]* id="(plot-[a-z0-9-]+)"', dom))
    assert plots == {"plot-resource-0", "plot-resource-1", "plot-resource-2", "plot-timeline", "plot-reasons"}
    assert all(_drawn(dom, div) for div in plots)
    assert re.search(r'data-plots="5"', dom)
    # The decision picker ran: the first pending pod's rejected nodes are in the DOM.
    assert "default/big" in dom and "nodes rejected" in dom

    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOT_DIR / "report.png"
    run = _chromium_run(page, tmp_path / "profile2", "--window-size=1400,2200", f"--screenshot={shot}")
    assert run.returncode == 0 and shot.stat().st_size > 20_000


@pytest.fixture(scope="module")
def thousand_nodes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    run = simulate(pooled_cluster(nodes=1000, pending=1500), record="full")
    return run, write_report(run, tmp_path_factory.mktemp("big") / "report.html")


def test_a_thousand_node_report_stays_small_and_readable(thousand_nodes) -> None:
    _, page = thousand_nodes
    assert page.stat().st_size < BUDGET
    text = page.read_text()
    data = page_data(text)
    assert data["usage"]["resources"] == ["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "pods"]
    assert [p[0] for p in data["usage"]["pools"]] == ["general", "gpu", "highmem"]
    assert f"Nodes grouped by label <code>{POOL_LABEL}</code> into 3 pools" in text
    # One trace per pool box and per line: nothing grows with the nodes.
    assert all(len(f["data"]) <= 6 for f in data["figures"])
    # The 20 gpu pods left pending share one reason: five names, then the rest folded away.
    assert re.search(
        r"20: ml/train-160, ml/train-161, ml/train-162, ml/train-163, ml/train-164 "
        r"<details class=more><summary>… and 15 more</summary>",
        text,
    )


def test_a_thousand_node_report_renders_in_headless_chromium(thousand_nodes, tmp_path: Path) -> None:
    _, page = thousand_nodes
    dom = _rendered(page, tmp_path / "profile")
    charts = dict(re.findall(r'<div class="chart[^"]*" id="(plot-resource-\d+)" data-resource="([^"]+)"', dom))
    assert sorted(charts.values()) == ["cpu", "ephemeral-storage", "memory", "nvidia.com/gpu", "pods"]
    assert all(_drawn(dom, div) for div in [*charts, "plot-timeline", "plot-reasons"])
    assert re.search(r'data-plots="7"', dom)
    # Each pool's nodes, in natural order: node-2 before node-10 in the gpu pool's table.
    general = dom[dom.index('data-pool="0"') : dom.index('data-pool="1"')]
    gpu = dom[dom.index('data-pool="1"') : dom.index('data-pool="2"')]
    assert general.count("<tr") == 1 + 877 and gpu.count("<tr") == 1 + 40
    assert gpu.index(">node-2<") < gpu.index(">node-10<")
    # The first pending pod's decision: 1000 nodes rejected, five named, the rest one click away.
    assert "1000 nodes rejected" in dom
    assert re.search(
        r"1000: node-0, node-1, node-2, node-3, node-4<details class=\"more\"><summary>… and 995 more", dom
    )


def test_a_summary_only_result_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    from kubesched.scenario.pipeline import SimulationError

    result = simulate([node("n1"), pod("p")])
    with pytest.raises(SimulationError, match='record="full"'):
        write_report(result, tmp_path / "r.html")


def test_devices_get_a_column_per_device_class_and_a_section() -> None:
    from tests.sim.test_device_use import EXAMPLE, TRAINER

    page = render(simulate([EXAMPLE, TRAINER], record="full"))
    data = page_data(page)
    usage = data["usage"]
    assert usage["resources"][-3:] == ["devices: gpu-a100", "devices: gpu-t4", "pods"]
    column = usage["resources"].index("devices: gpu-a100")
    row = [data["nodes"][i] for i in usage["node"]].index("a100-0")
    assert (usage["requested"][row][column], usage["allocatable"][row][column]) == (4, 5)
    t4 = [data["nodes"][i] for i in usage["node"]].index("t4-0")
    assert usage["allocatable"][t4][column] == 0
    assert "<h2>Devices</h2>" in page and "<td>gpu-a100</td><td><b>80%</b> (8 of 10)</td>" in page


def test_no_device_section_without_devices(result) -> None:
    page = render(result)
    assert "<h2>Devices</h2>" not in page and not any(
        r.startswith("devices:") for r in page_data(page)["usage"]["resources"]
    )
