"""The floors hold: the control planes never import the scheduler side, the input pipeline never the simulator.

Every import is counted, also those inside functions and under TYPE_CHECKING: an import that runs back up
the floors is a cycle waiting to happen.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kubesched"
SCHEDULER_SIDE = ("scheduler", "schedule_one", "framework", "plugins", "queue", "profile")


def imported_modules(folder: str) -> dict[str, set[str]]:
    """``kubesched`` module -> the ``kubesched`` modules it imports, for every module under ``folder``."""
    found: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        found[str(path.relative_to(PACKAGE.parent))] = {n for n in names if n.startswith("kubesched.")}
    return found


def reaching(folder: str, floors: tuple[str, ...]) -> dict[str, list[str]]:
    """The modules under ``folder`` that import one of ``floors`` (top-level names under kubesched)."""
    return {module: sorted(n for n in names if n.split(".")[1] in floors)
            for module, names in imported_modules(folder).items()
            if any(n.split(".")[1] in floors for n in names)}


@pytest.mark.parametrize("folder", ["embedded", "live", "cluster", "api"])
def test_the_cluster_side_imports_nothing_of_the_scheduler(folder: str) -> None:
    assert reaching(folder, SCHEDULER_SIDE) == {}


def test_the_input_pipeline_imports_nothing_of_the_simulator_or_the_commands() -> None:
    assert reaching("scenario", ("sim", "app", *SCHEDULER_SIDE)) == {}


def test_the_check_sees_imports_inside_functions() -> None:
    # A module known to import lazily inside a function: the walk must see it.
    assert "kubesched.api.podgroup" in imported_modules("embedded")["kubesched/embedded/admission.py"]


def test_the_logging_package_imports_nothing_of_kubesched() -> None:
    """Every floor logs through kubesched.klog, so it stands below them all."""
    outside = {module: sorted(n for n in names if not n.startswith("kubesched.klog"))
               for module, names in imported_modules("klog").items()}
    assert outside and {module: names for module, names in outside.items() if names} == {}
