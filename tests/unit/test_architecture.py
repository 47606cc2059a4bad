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
