"""The floors of the house: an import never runs back up.

From the ground: api -> config, cache -> queue, framework -> plugins -> profile -> scheduler. Every
import counts here, also one made inside a function or for type checking only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kubesched

ROOT = Path(kubesched.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every kubesched module ``path`` imports (``from a import b`` counts as a.b too)."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, one level up per extra dot
                parts = package.split(".")
                base = ".".join([*parts[:len(parts) - node.level + 1], *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "kubesched" or name.startswith("kubesched.")}


MODULES = {_module_name(path): _imports(path) for path in sorted(ROOT.rglob("*.py"))}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _offending(importers: tuple[str, ...], imported: str) -> list[str]:
    return sorted(f"{module} imports {name}" for module, names in MODULES.items()
                  if any(_within(module, p) for p in importers)
                  for name in names if _within(name, imported))


@pytest.mark.parametrize("floor", ["kubesched.api", "kubesched.config", "kubesched.cache", "kubesched.queue",
                                   "kubesched.framework"])
def test_core_floors_never_import_plugins(floor: str) -> None:
    assert _offending((floor,), "kubesched.plugins") == []


def test_the_framework_sees_extenders_through_its_own_protocol() -> None:
    assert _offending(("kubesched.framework",), "kubesched.extender") == []
    assert "kubesched.framework.extender" in MODULES["kubesched.extender.http_extender"]


def test_metrics_know_nothing_of_the_framework() -> None:
    assert _offending(("kubesched.metrics",), "kubesched.framework") == []


@pytest.mark.parametrize(
    ("lower", "upper"),
    [("kubesched.api.pod_affinity", "kubesched.api.objects"),
     ("kubesched.config.defaults", "kubesched.config.types"),
     ("kubesched.config.profiles", "kubesched.config.defaults")],
)
def test_no_circle_between(lower: str, upper: str) -> None:
    assert any(_within(name, lower) for name in MODULES[upper]), f"{upper} builds on {lower}"
    assert _offending((lower,), upper) == []


def test_the_scan_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    # preemption's lazy and type-checking-only imports are found (a scan that missed them could not fail).
    assert "kubesched.framework.handle.Handle" in MODULES["kubesched.framework.preemption"]
