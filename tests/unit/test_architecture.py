"""The import rules and where Cypher lives (no Neo4j needed)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CYPHER = re.compile(r"\b(MATCH|MERGE|CREATE) \(|\bUNWIND \$|\bCALL db\.")  # a clause with its pattern


def test_import_contracts_hold():
    # pyproject.toml [tool.importlinter]: flows -> gnn -> graph, the driver only in graph.store,
    # extraction apart from loading
    run = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=REPO, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "BROKEN" not in run.stdout and run.stdout.count("KEPT") >= 5


def _cypher_strings(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CYPHER.search(node.value)]


def test_cypher_lives_in_the_store_package():
    outside = {str(p.relative_to(REPO)): lines for package in ("graph", "gnn", "flows")
               for p in (REPO / package).rglob("*.py")
               if "store" not in p.relative_to(REPO).parts and (lines := _cypher_strings(p))}
    assert outside == {}
    assert _cypher_strings(REPO / "graph" / "store" / "statements.py")  # the scan finds Cypher where it is


def _import_cycles(*packages: str) -> list[list[str]]:
    """Groups of modules that import each other, directly or round a longer loop (imports under
    TYPE_CHECKING aside: they never run)."""
    import grimp
    import networkx as nx

    graph = grimp.build_graph(*packages, exclude_type_checking_imports=True, cache_dir=None)
    edges = nx.DiGraph((module, imported) for module in graph.modules
                       for imported in graph.find_modules_directly_imported_by(module))
    return sorted(sorted(group) for group in nx.strongly_connected_components(edges) if len(group) > 1)


def test_no_module_imports_itself_round_a_loop():
    assert _import_cycles("graph", "gnn", "flows") == []


def test_the_loop_check_finds_a_loop(tmp_path, monkeypatch):
    package = tmp_path / "loopy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from loopy import b\n")
    (package / "b.py").write_text("from loopy import c\n")
    (package / "c.py").write_text("from loopy import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _import_cycles("loopy") == [["loopy.a", "loopy.b", "loopy.c"]]


def _flat_families(root: Path) -> dict[str, list[str]]:
    """Per package folder, the module-name prefixes (before the first underscore) shared by four or more
    modules: a family that belongs in a subpackage of its own."""
    families: dict[str, list[str]] = {}
    for package in [root, *root.rglob("*")]:
        if not (package / "__init__.py").exists():
            continue
        by_prefix: dict[str, list[str]] = {}
        for module in package.glob("[!_]*_*.py"):
            by_prefix.setdefault(module.stem.split("_")[0], []).append(module.stem)
        families |= {f"{package.relative_to(root.parent)}/{prefix}_*": sorted(names)
                     for prefix, names in by_prefix.items() if len(names) >= 4}
    return families


def test_no_package_keeps_a_family_of_modules_under_one_flat_prefix():
    assert {family for top in ("graph", "gnn", "flows") for family in _flat_families(REPO / top)} == set()


def test_the_family_check_finds_a_flat_family(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    for name in ("__init__", "nih_a", "nih_b", "nih_c", "nih_d", "iu_a", "plain"):
        (package / f"{name}.py").write_text("")
    assert _flat_families(package) == {"pkg/nih_*": ["nih_a", "nih_b", "nih_c", "nih_d"]}
