"""Errors, rejections, summary lines, the query catalogue and help never cut or hard-wrap a command, a name or
a path, at any terminal width: rich and typer take their width from ``COLUMNS`` when they first draw, so each
width runs in a process of its own (no Java, no Neo4j: the refusal below comes before the server is built)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WIDTHS = (60, 100, 250)


def _run(args: list[str], columns: int, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CXRKG_", "NEO4J_"))}
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**base, "PYTHONPATH": str(REPO), "COLUMNS": str(columns), **env})


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_missing_data_error_keeps_its_command_and_path_on_one_line(tmp_path, columns):
    home = tmp_path / ("a-home-whose-name-is-long-enough-to-reach-past-sixty-columns" + "-x" * 10)
    home.mkdir()
    (home / "password").write_text("secret\n")  # a used home: its first start wrote the password
    done = _run(["-m", "flows.cli", "db", "start"], columns, CXRKG_HOME=str(home))
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert any("cxrkg db start --fresh" in line for line in lines), done.stderr
    assert any(str(home / "data" / "databases") in line for line in lines), done.stderr
    assert len(lines) == 1 and "Traceback" not in done.stderr


_PRINTS = """
import sys
from types import SimpleNamespace as NS
import typer
from flows.cli import common
path = sys.argv[1]
rejection = NS(file=path, record="p10/p10000032/s50414267.txt", field="entities.1.label", reason="unknown label")
common.print_rejections([rejection], path + ".rejected.json", "rejected-files report")
common.console.print(f"library log (Prefect, warnings): {path}/logs/cxrkg.log", highlight=False)
try:
    common.fail(f"cannot write {path}: run `cxrkg db start --fresh` or set CXRKG_HOME")
except typer.Exit:
    pass
"""


@pytest.mark.parametrize("columns", WIDTHS)
def test_rejections_summary_lines_and_failures_keep_paths_whole(tmp_path, columns):
    path = str(tmp_path / "drop" / "scene_graphs" / "p10" / "p10000032" / ("0" * 40 + "_SceneGraph.json"))
    done = _run(["-c", _PRINTS, path], columns)
    assert done.returncode == 0, done.stderr
    err, out = done.stderr.splitlines(), done.stdout.splitlines()
    assert any(line.startswith(f"rejected {path} record p10/p10000032/s50414267.txt field entities.1.label")
               for line in err), done.stderr
    assert f"rejected-files report: {path}.rejected.json" in err
    assert f"library log (Prefect, warnings): {path}/logs/cxrkg.log" in out
    assert any(f"cannot write {path}: run `cxrkg db start --fresh`" in line for line in err), done.stderr


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_query_catalogue_keeps_every_name_and_parameter_whole(columns):
    from graph.store.queries import catalogue

    done = _run(["-m", "flows.cli", "queries"], columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for q in catalogue().values():
        assert any(f" {q.name} " in line for line in lines), (q.name, done.stdout)
        for p in q.params:
            assert any(f" {p.name}:" in line for line in lines), (q.name, p.name, done.stdout)


@pytest.mark.parametrize("command, option", [("ingest", "--doc-mapping"), ("extract", "--radgraph-cache")])
def test_help_keeps_every_option_whole_in_a_narrow_terminal(command, option):
    done = _run(["-m", "flows.cli", command, "--help"], 60)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout and option in done.stdout, done.stdout
