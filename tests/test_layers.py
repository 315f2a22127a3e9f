"""The floors of the house: an import never runs back up.

From the ground: util, klog, clock and api; config, cache and cluster (the contract); queue, framework,
metrics and recording; plugins and extender; profile and eventhandlers; the cycle (cycle, feasible_nodes,
schedule_one) and scheduler. The control planes (embedded, live) implement the cluster contract and never
import the scheduler side; the input pipeline (scenario) sits below the simulator (sim) and the commands
(app). Every import counts here, also one made inside a function or for type checking only.
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
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]
            found.update(names)
            if not all(_is_module(name) for name in names):  # ``from pkg import sub`` imports sub, not pkg
                found.add(base)
    return {name for name in found if name == "kubesched" or name.startswith("kubesched.")}


def _is_module(name: str) -> bool:
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


MODULES = {_module_name(path): _imports(path) for path in sorted(ROOT.rglob("*.py"))}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _offending(importers: tuple[str, ...], imported: str) -> list[str]:
    return sorted(
        f"{module} imports {name}"
        for module, names in MODULES.items()
        if any(_within(module, p) for p in importers)
        for name in names
        if _within(name, imported)
    )


SCHEDULER_SIDE = (
    "kubesched.scheduler",
    "kubesched.schedule_one",
    "kubesched.feasible_nodes",
    "kubesched.cycle",
    "kubesched.eventhandlers",
    "kubesched.framework",
    "kubesched.plugins",
    "kubesched.queue",
    "kubesched.profile",
    "kubesched.extender",
)


@pytest.mark.parametrize("folder", ["kubesched.embedded", "kubesched.live", "kubesched.cluster", "kubesched.api"])
def test_the_cluster_side_imports_nothing_of_the_scheduler(folder: str) -> None:
    assert [o for side in SCHEDULER_SIDE for o in _offending((folder,), side)] == []


def test_the_input_pipeline_imports_nothing_of_the_simulator_or_the_commands() -> None:
    above = ("kubesched.sim", "kubesched.app", *SCHEDULER_SIDE)
    assert [o for side in above for o in _offending(("kubesched.scenario",), side)] == []


def test_the_logging_package_imports_nothing_else_of_kubesched() -> None:
    """Every floor logs through kubesched.klog, so it stands below them all."""
    outside = sorted(
        f"{module} imports {name}"
        for module, names in MODULES.items()
        if _within(module, "kubesched.klog")
        for name in names
        if not _within(name, "kubesched.klog")
    )
    assert outside == []


def test_the_scan_sees_lazy_imports_of_the_control_plane() -> None:
    assert "kubesched.api.podgroup" in MODULES["kubesched.embedded.admission"]


@pytest.mark.parametrize(
    "floor", ["kubesched.api", "kubesched.config", "kubesched.cache", "kubesched.queue", "kubesched.framework"]
)
def test_core_floors_never_import_plugins(floor: str) -> None:
    assert _offending((floor,), "kubesched.plugins") == []


def test_the_framework_sees_extenders_through_its_own_protocol() -> None:
    assert _offending(("kubesched.framework",), "kubesched.extender") == []
    assert "kubesched.framework.extender" in MODULES["kubesched.extender.http_extender"]


def test_metrics_know_nothing_of_the_framework() -> None:
    assert _offending(("kubesched.metrics",), "kubesched.framework") == []


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        ("kubesched.api.pod_affinity", "kubesched.api.objects"),
        ("kubesched.config.defaults", "kubesched.config.types"),
        ("kubesched.config.profiles", "kubesched.config.defaults"),
    ],
)
def test_no_circle_between(lower: str, upper: str) -> None:
    assert any(_within(name, lower) for name in MODULES[upper]), f"{upper} builds on {lower}"
    assert _offending((lower,), upper) == []


def test_the_scan_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    # preemption's lazy and type-checking-only imports are found (a scan that missed them could not fail).
    assert "kubesched.framework.handle.Handle" in MODULES["kubesched.framework.preemption"]


def _module_graph() -> dict[str, set[str]]:
    """Module -> the kubesched modules it imports (a name imported from a module counts as that module)."""

    def as_module(name: str) -> str | None:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        return name or None

    return {
        module: {m for name in names if (m := as_module(name)) and m != module and m != "kubesched"}
        for module, names in MODULES.items()
    }


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_only_import_circle_is_the_workload_controllers_mediator() -> None:
    """The controller manager and the controllers it starts know each other; nothing else may."""
    circles = _circles(_module_graph())
    assert [c for c in circles if not all(_within(m, "kubesched.embedded.workloads") for m in c)] == []


def test_the_circle_finder_finds_circles() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
