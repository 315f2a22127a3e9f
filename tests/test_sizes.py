"""The house's sizes: no module over 700 lines, no function or method over 60.

A function counts from its ``def`` line to its last line (decorators aside), nested functions included
in their parent and counted again on their own. The few that are over today are listed below with their
size now: they may shrink, never grow, and leave the list once they fit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kubesched

ROOT = Path(kubesched.__file__).parent
PACKAGE = ROOT.parent
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 60

#: Modules over the limit today, with their size now. This list must shrink: split a module along its
#: seam and remove it here.
MODULES_OVER: dict[str, int] = {}
#: Functions over the limit today (``path::Class.method``), with their size now. This list must shrink.
FUNCTIONS_OVER: dict[str, int] = {}


def _module_sizes() -> dict[str, int]:
    return {
        path.relative_to(PACKAGE).as_posix(): len(path.read_text().splitlines()) for path in sorted(ROOT.rglob("*.py"))
    }


def _function_sizes() -> dict[str, int]:
    sizes: dict[str, int] = {}
    for path in sorted(ROOT.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        _collect(ast.parse(path.read_text()), f"{where}::", sizes)
    return sizes


def _collect(node: ast.AST, prefix: str, sizes: dict[str, int]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + child.name
            sizes[name] = (child.end_lineno or child.lineno) - child.lineno + 1
            _collect(child, name + ".", sizes)
        elif isinstance(child, ast.ClassDef):
            _collect(child, prefix + child.name + ".", sizes)
        else:
            _collect(child, prefix, sizes)


def _over(sizes: dict[str, int], limit: int, allowed: dict[str, int]) -> list[str]:
    """What is over ``limit`` and not allowed, or grew past its allowance."""
    return sorted(
        f"{name}: {size} lines" for name, size in sizes.items() if size > limit and size > allowed.get(name, limit)
    )


def _stale(sizes: dict[str, int], limit: int, allowed: dict[str, int]) -> list[str]:
    """Allowances no longer needed (the code fits now, or is gone): to be removed from the list."""
    return sorted(f"{name}: {sizes.get(name, 0)} lines" for name in allowed if sizes.get(name, 0) <= limit)


def test_no_module_is_over_700_lines() -> None:
    assert _over(_module_sizes(), MAX_MODULE_LINES, MODULES_OVER) == []


def test_no_function_is_over_60_lines() -> None:
    assert _over(_function_sizes(), MAX_FUNCTION_LINES, FUNCTIONS_OVER) == []


def test_the_allowances_only_cover_what_is_still_over() -> None:
    assert _stale(_module_sizes(), MAX_MODULE_LINES, MODULES_OVER) == []
    assert _stale(_function_sizes(), MAX_FUNCTION_LINES, FUNCTIONS_OVER) == []


def test_sizes_are_counted_from_def_to_the_last_line() -> None:
    tree = ast.parse(
        "class A:\n    @staticmethod\n    def f():\n        def g():\n            pass\n"
        "        return 1\n\n\ndef h(): pass\n"
    )
    sizes: dict[str, int] = {}
    _collect(tree, "m.py::", sizes)
    assert sizes == {"m.py::A.f": 4, "m.py::A.f.g": 2, "m.py::h": 1}


def test_an_allowance_lets_a_size_stay_but_not_grow() -> None:
    allowed = {"a.py::f": 70}
    assert _over({"a.py::f": 70, "b.py::g": 60}, 60, allowed) == []
    assert _over({"a.py::f": 71, "b.py::g": 61}, 60, allowed) == ["a.py::f: 71 lines", "b.py::g: 61 lines"]
    assert _stale({"a.py::f": 60}, 60, allowed) == ["a.py::f: 60 lines"]
    assert _stale({}, 60, allowed) == ["a.py::f: 0 lines"]
