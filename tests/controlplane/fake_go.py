"""A stand-in for the Go toolchain, so build.sh and the pytest plugin can be exercised in seconds.

``go list`` answers a release date; ``go build -o OUT`` writes a tiny executable at OUT. Every call is
logged, one line each, to ``FAKE_GO_LOG``; ``FAKE_GO_FAIL=1`` makes ``go build`` fail as a compiler would;
``FAKE_GO_HANG=PIDFILE`` makes it write its process id there, say so on stderr, and never finish.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "testing" / "controlplane" / "build.sh"

FAKE_GO = r"""#!/usr/bin/env bash
printf '%s\n' "$*" >> "$FAKE_GO_LOG"
case "$1" in
    list) echo 2026-02-10T12:53:36Z ;;
    build)
        if [ -n "${FAKE_GO_HANG:-}" ]; then
            echo $$ > "$FAKE_GO_HANG"
            echo "controlplane: (fake go hangs)" >&2
            exec sleep 600
        fi
        if [ "${FAKE_GO_FAIL:-}" = 1 ]; then
            echo "compile: something went wrong" >&2
            exit 2
        fi
        while [ $# -gt 0 ]; do
            if [ "$1" = -o ]; then out="$2"; fi
            shift
        done
        printf '#!/bin/sh\necho built by the fake go\n' > "$out"
        chmod +x "$out"
        ;;
esac
"""

# The plugin, and one test that wants only the binaries (nothing is started from them).
CONFTEST = 'pytest_plugins = ["testing.controlplane.pytest_plugin"]\n'
NEEDS_BINARIES = """
import pytest

@pytest.mark.controlplane
def test_needs_the_binaries(controlplane_bin_dir):
    assert (controlplane_bin_dir / "kube-apiserver").is_file()
"""


class FakeGo:
    """A folder with the fake ``go`` on the PATH, its call log and a private binary cache."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "fake-go-bin"
        self.bin.mkdir(parents=True)
        (self.bin / "go").write_text(FAKE_GO)
        (self.bin / "go").chmod(0o755)
        self.log = root / "go-calls.log"
        self.cache = root / "cache"

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("CI", "KUBESCHED_REQUIRE_CONTROLPLANE", "KUBESCHED_SKIP_CONTROLPLANE")
        }
        env.update(
            PATH=f"{self.bin}:/usr/bin:/bin",
            PYTHONPATH=str(REPO),
            FAKE_GO_LOG=str(self.log),
            KUBESCHED_CONTROLPLANE_CACHE=str(self.cache),
            **extra,
        )
        return env

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def builds(self) -> list[str]:
        return [call for call in self.calls() if call.startswith("build ")]

    def run_build_script(self, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, env=self.env(**env), timeout=120, check=False
        )

    def run_pytest(self, folder: Path, test_source: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """pytest in a subprocess over ``folder`` holding the plugin's conftest and ``test_source``, with
        output capturing on (pytest's default)."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "conftest.py").write_text(CONFTEST)
        (folder / "test_inner.py").write_text(test_source)
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args, str(folder)],
            capture_output=True,
            text=True,
            env=self.env(**env),
            cwd=folder,
            timeout=120,
            check=False,
        )
