"""A command whose extra is not installed says which extra to install, in one line, before it runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from kubesched.app.cli import main
from kubesched.util import extras
from kubesched.util.extras import MissingExtraError, missing, require_extra

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def without(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make the named packages look uninstalled to the extras check, and every other package of an extra
    look installed, so the answer does not depend on which extras this environment happens to have."""
    real = importlib.util.find_spec
    declared = {package for packages in extras.EXTRAS.values() for package in packages}

    def hide(*names: str) -> None:
        def find_spec(name: str, *rest: Any) -> Any:
            if name in names:
                return None
            if name in declared:
                return real(name, *rest) or object()
            return real(name, *rest)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    return hide


def test_require_names_the_missing_packages_and_the_extra(without: Any) -> None:
    without("plotly", "tqdm")
    assert missing("sim") == ["plotly", "tqdm"]
    with pytest.raises(MissingExtraError) as info:
        require_extra("sim", "the HTML report")
    assert str(info.value) == "the HTML report needs plotly, tqdm, of the 'sim' extra: pip install 'kubesched[sim]'"
    require_extra("sim", "explain", ("rich",))  # present: no error


def test_every_extra_matches_pyproject() -> None:
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, packages in extras.EXTRAS.items():
        names = {spec.split(">")[0].split("=")[0].strip().lower() for spec in declared[extra]}
        assert set(packages) == names


def test_simulate_report_without_plotly_is_one_line_before_the_run(
    without: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    without("plotly")
    code = main(["simulate", str(REPO / "examples" / "cluster"), "--report", str(tmp_path / "r.html")])
    err = capsys.readouterr()
    assert code == 2
    assert err.err.strip() == (
        "kubesched: error: --report needs plotly, of the 'sim' extra: pip install 'kubesched[sim]'"
    )
    assert "Scheduled" not in err.out


def test_run_without_the_live_extra_is_one_line(without: Any, capsys: pytest.CaptureFixture[str]) -> None:
    without("kubernetes")
    assert main(["run", "--leader-elect=false"]) == 2
    assert capsys.readouterr().err.strip() == (
        "kubesched: error: kubesched run needs kubernetes, of the 'live' extra: pip install 'kubesched[live]'"
    )


def test_forced_progress_without_tqdm_is_refused_and_a_terminal_goes_without(without: Any) -> None:
    from kubesched.app.simulate import progress_bar

    without("tqdm")

    class Terminal:
        def isatty(self) -> bool:
            return True

    update, _close = progress_bar(Terminal(), forced=False)  # type: ignore[arg-type]
    assert update is None
    with pytest.raises(MissingExtraError, match="--progress needs tqdm"):
        progress_bar(Terminal(), forced=True)  # type: ignore[arg-type]
