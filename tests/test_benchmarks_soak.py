"""The soak benchmark (benchmarks/soak.py): its per-minute series and verdicts from given minutes, and one
short run against both schedulers on real control planes (correctness only: no timing is asserted)."""

from __future__ import annotations

import pytest

from benchmarks import soak
from benchmarks.soak import Minute, format_series, growth, verdict, warmup_minutes


def minute(n: int, rss: float, threads: int = 10, latencies: tuple[float, ...] = (0.1,), pending: int = 0) -> Minute:
    return Minute(
        n,
        bound=600,
        p99_s=max(latencies),
        rss_mib=rss,
        threads=threads,
        deleted_pending=pending,
        latencies=list(latencies),
    )


def test_warm_up_is_a_sixth_of_the_run_at_most_five_minutes() -> None:
    assert [warmup_minutes(m) for m in (1, 5, 6, 12, 30, 120)] == [0, 0, 1, 2, 5, 5]


def test_growth_compares_the_medians_of_both_ends() -> None:
    assert growth([100, 300, 102, 104, 110, 104, 106]) == (102, 106, pytest.approx(3.92, abs=0.01))
    assert growth([50.0]) == (50.0, 50.0, 0.0)


def test_a_steady_run_and_a_growing_one() -> None:
    warm = [minute(i, 400.0 - i) for i in range(1, 6)]  # the warm-up is left out whatever it does
    steady = warm + [minute(i, 200, latencies=(0.1, 0.2)) for i in range(6, 31)]
    line = verdict("kubesched", steady)
    assert line.startswith(
        "kubesched: RSS 200 -> 200 MiB (+0.0 %), threads 10 -> 10 (+0.0 %) after 5 min of warm-up: "
        "steady (threshold 5 %); p99 latency 0.200 s -> 0.200 s (+0 %)"
    )
    growing = warm + [minute(i, 200 + 2 * i, latencies=(0.1 * i,), pending=1) for i in range(6, 31)]
    line = verdict("kubesched", growing)
    assert "GROWING" in line and "25 pods deleted before they were bound" in line


def test_the_series_has_a_column_per_scheduler_and_measure() -> None:
    table = format_series({"kube-scheduler": [minute(1, 70)], "kubesched": [minute(1, 80), minute(2, 81)]})
    lines = table.splitlines()
    assert lines[0].count("|") == 10 and "kubesched RSS MiB" in lines[0]
    assert lines[2] == "| 1 | 10.0 | 0.100 | 70 | 10 | 10.0 | 0.100 | 80 | 10 |"
    assert lines[3] == "| 2 | - | - | - | - | 10.0 | 0.100 | 81 | 10 |"


@pytest.mark.controlplane
def test_one_minute_against_both_schedulers(capsys: pytest.CaptureFixture[str]) -> None:
    assert soak.main(1) == 0
    out = capsys.readouterr().out
    [row] = [line for line in out.splitlines() if line.startswith("| 1 |")]
    cells = row.strip("|").split("|")
    assert float(cells[1]) > 0 and float(cells[5]) > 0  # both bound pods in the minute
    assert sum(line.startswith("verdict ") for line in out.splitlines()) == 2
