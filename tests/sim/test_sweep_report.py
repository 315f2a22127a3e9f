"""The sweep's comparison as text, CSV and an HTML page that renders in a browser."""

from __future__ import annotations

import re
from pathlib import Path

from kubesched.sim.sweep import RunMetrics, compare
from kubesched.sim.sweep_report import comparison_csv, format_comparison, write_outputs
from tests.sim.test_html_report import _drawn, _rendered


def _run(variant: str, seed: int, scheduled: int, fragmentation: float) -> RunMetrics:
    return RunMetrics("cluster", variant, seed, scheduled, 10 - scheduled, 0.5, 0.25, fragmentation, 0, 1.5, 0.1)


COMPARISON = compare([_run("a", 0, 8, 0.1), _run("a", 1, 6, 0.3), _run("b", 0, 9, 0.0), _run("b", 1, 9, 0.0)])


def test_the_table_shows_means_with_their_intervals() -> None:
    lines = format_comparison(COMPARISON).splitlines()
    assert lines[0].split()[:4] == ["scenario", "variant", "scheduled", "pending"]
    # a: mean 7, sd 1.414, t(1) 12.706 -> 12.7; fragmentation 20% ± 127.1
    assert lines[1].split()[:5] == ["cluster", "a", "7.0", "±", "12.7"]
    assert "20.0% ± 127.1" in lines[1] and "50.0% ± 0.0" in lines[1]
    assert lines[2].split()[:5] == ["cluster", "b", "9.0", "±", "0.0"]


def test_the_csv_has_a_mean_and_an_interval_per_metric() -> None:
    header, first, _ = comparison_csv(COMPARISON).splitlines()
    assert header.startswith("scenario,variant,scheduled_mean,scheduled_ci95,pending_mean")
    assert first.startswith("cluster,a,7,12.706,3,12.706")


def test_the_page_renders_one_chart_per_metric(tmp_path: Path) -> None:
    written = write_outputs(COMPARISON, tmp_path)
    assert [p.name for p in written] == ["comparison.json", "runs.json", "comparison.csv", "report.html"]
    page = tmp_path / "report.html"
    assert page.stat().st_size < 2_000_000
    dom = _rendered(page, tmp_path / "profile")
    plots = set(re.findall(r'<div[^>]* id="(plot-[a-z0-9_-]+)"', dom))
    assert len(plots) == 7 and all(_drawn(dom, div) for div in plots)
    assert re.search(r'data-plots="7"', dom)
