"""Size limits of the code (issue 34): no module over 500 lines, no function over 60, in graph/, gnn/ and flows/.

A function's size is counted from its ``def`` line to its last line (decorators excluded, docstring and
comments included), as ``ast`` gives them; a module's is its number of lines.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("graph", "gnn", "flows")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60

# Exceptions, each with its reason; the tests below fail once one is no longer needed.
TEMPORARY_LONG_MODULES: dict[str, str] = {}
TEMPORARY_LONG_FUNCTIONS: dict[str, str] = {}


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def module_sizes() -> dict[str, int]:
    """Lines of every module of graph/, gnn/ and flows/, by path relative to the repository."""
    return {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in _modules()}


def function_sizes() -> dict[str, int]:
    """Lines of every function and method (``path:name``; a name seen twice in one module keeps its largest)."""
    sizes: dict[str, int] = {}
    for p in _modules():
        tree = ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{p.relative_to(ROOT).as_posix()}:{node.name}"
                sizes[key] = max(sizes.get(key, 0), node.end_lineno - node.lineno + 1)
    return sizes


def test_the_size_scan_sees_the_packages() -> None:
    modules, functions = module_sizes(), function_sizes()
    assert len(modules) > 100 and len(functions) > 500
    assert modules["graph/records.py"] > 100
    assert 1 < functions["graph/records.py:stable_id"] < 10


def test_no_module_over_500_lines() -> None:
    over = {path: n for path, n in module_sizes().items() if n > MAX_MODULE_LINES}
    assert set(over) - set(TEMPORARY_LONG_MODULES) == set(), over
    assert set(TEMPORARY_LONG_MODULES) <= set(over), "an exception no longer needed: remove it"


def test_no_function_over_60_lines() -> None:
    over = {name: n for name, n in function_sizes().items() if n > MAX_FUNCTION_LINES}
    assert set(over) - set(TEMPORARY_LONG_FUNCTIONS) == set(), over
    assert set(TEMPORARY_LONG_FUNCTIONS) <= set(over), "an exception no longer needed: remove it"
