"""``kubesched sweep``: the comparison printed, written, and the flags' errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.app.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_the_command_prints_the_comparison_and_writes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert (
        main(
            [
                "sweep",
                str(REPO / "examples" / "cluster"),
                "--seeds",
                "2",
                "--workers",
                "1",
                "--grid",
                "NodeResourcesFit.weight=1,2",
                "--output-dir",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:4] == ["scenario", "variant", "scheduled", "pending"]
    assert "4 runs; mean ± half-width of the 95% confidence interval over 2 seeds" in text
    assert {p.name for p in out.iterdir()} == {"runs.json", "comparison.json", "comparison.csv", "report.html"}
    assert len(json.loads((out / "runs.json").read_text())) == 4
    page = (out / "report.html").read_text()
    assert page.count('<div id="plot-') == 7 and len(page) < 3_000_000


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--grid", "NodeResourcesFit=1"], "--grid 'NodeResourcesFit=1': expected PLUGIN.weight="),
        (["--seeds", "0"], "--seeds and --workers: 1 or more"),
        (["--grid", "NoSuchPlugin.weight=2"], "NoSuchPlugin"),
    ],
)
def test_bad_flags_are_one_error_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(REPO / "examples" / "cluster"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: error: ") and message in err and err.count("\n") == 1
