"""The package's public face is lazy: importing one floor loads no floor above it, and no heavy client.

Checked in a fresh interpreter each time, since this process has imported everything long ago."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import kubesched

REPO = Path(__file__).resolve().parents[1]
#: What the simulator, the two control planes and the commands bring, and the heavy third-party clients.
UPPER_FLOORS = ("kubesched.sim", "kubesched.embedded", "kubesched.scenario", "kubesched.live", "kubesched.app")
HEAVY = ("plotly", "kubernetes")


def loaded_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    driver = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, cwd=REPO, check=True)
    return list(json.loads(proc.stdout.splitlines()[-1]))


def under(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


@pytest.mark.parametrize(
    "module", ["kubesched", "kubesched.framework", "kubesched.cluster.protocol", "kubesched.scheduler"]
)
def test_a_lower_floor_loads_no_upper_floor(module: str) -> None:
    loaded = loaded_after(f"import {module}")
    assert module in loaded
    assert under(loaded, UPPER_FLOORS + HEAVY) == []


def test_the_public_names_load_on_first_use() -> None:
    loaded = loaded_after("import kubesched\nkubesched.simulate\nfrom kubesched import EmbeddedCluster")
    assert {"kubesched.sim.simulate", "kubesched.embedded.apiserver"} <= set(loaded)


def test_every_public_name_resolves_to_its_definition() -> None:
    from kubesched.embedded.apiserver import EmbeddedCluster
    from kubesched.sim.simulate import simulate

    assert kubesched.simulate is simulate and kubesched.EmbeddedCluster is EmbeddedCluster
    for name in kubesched.__all__:
        assert getattr(kubesched, name) is not None
    assert set(kubesched.__all__) == {*kubesched._EXPORTS, "__version__"}
    assert set(kubesched.__all__) <= set(dir(kubesched))
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        kubesched.nothing_here  # noqa: B018
