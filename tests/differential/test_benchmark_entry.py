"""``python -m benchmarks.differential`` end to end on two seeds: the table, the exit status, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import differential
from testing.controlplane.fixture import ControlPlane

pytestmark = pytest.mark.controlplane


def test_benchmark_prints_agreement_and_writes_the_report(
    control_plane: ControlPlane, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "report.json"
    status = differential.main(["--seeds", "2", "--start", "30", "--report", str(path)], plane=control_plane)
    out = capsys.readouterr().out
    report = json.loads(path.read_text())
    assert status == (1 if report["disagreements"] or report["failedSeeds"] else 0)
    assert report["seeds"] == [30, 31]
    assert report["pods"] == sum(report["upstreamKinds"].values()) > 0
    assert set(report["timing"]) == {"wallSeconds", "perSeedSeconds", "upstreamSeconds", "kubeschedSeconds"}
    assert "| upstream | compared | pods | agree | expected | disagree | skipped |" in out
    assert f"{report['pods']} pods over 2 seeds (30..31)" in out
    assert f"report: {path}" in out
