"""The ``kubesched.plugins`` entry-point group, with the worked examples installed as a real package.

``pip install examples/plugins`` registers each example under its plugin name; a configuration then
enables ``AvoidSpot`` by that name alone, with no ``module:Class`` and nothing on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "examples" / "plugins" / "config-installed.yaml"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(REPO / "examples" / "plugins"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return target


def _simulate(tmp_path: Path, *path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in (*path, REPO)))
    trace = tmp_path / "trace.jsonl"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched",
            "simulate",
            str(REPO / "examples" / "cluster"),
            "--config",
            str(CONFIG),
            "--tie-break",
            "name",
            "--trace",
            str(trace),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_installed_plugin_is_enabled_by_its_entry_point_name(installed: Path, tmp_path: Path) -> None:
    assert (installed / "avoid_spot.py").is_file()
    done = _simulate(tmp_path, installed)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    scored = [r for r in records if r.get("scores")]
    assert scored, "no attempt was scored"
    assert all("AvoidSpot" in plugins for r in scored for plugins in r["scores"].values())


def test_without_the_package_the_name_is_unknown(tmp_path: Path) -> None:
    done = _simulate(tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("kubesched: error:")
    assert "AvoidSpot" in done.stderr
