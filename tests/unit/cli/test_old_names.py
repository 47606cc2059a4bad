"""The scoring verbs' names before the ``eval`` group (``eval-extract``, ``eval-episodes``, ``score-reports``,
``evaluate``) and ``ask`` before ``diffvqa ask`` still work for one release: each runs the new command with the
same arguments after one ``notice:`` line on stderr naming the new form, and none is listed by help. The
ones that need the graph are run to an input fault here (the same error as their new name gives: the same
command ran); tests/e2e/test_score_reports.py and tests/e2e/test_diffvqa.py run two of them on a graph."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from flows.cli import app

OLD_NAMES = {"eval-extract": "eval extract", "eval-episodes": "eval episodes", "score-reports": "eval reports",
             "evaluate": "eval gnn", "ask": "diffvqa ask"}


def _run(argv: list[str]):
    return CliRunner().invoke(app, argv)


def _notice(result, old: str) -> None:
    assert f"notice: `cxrkg {old}` is now `cxrkg {OLD_NAMES[old]}`" in result.stderr, result.stderr
    assert "Traceback" not in result.output


def test_help_lists_none_of_the_old_names():
    listed = _run(["--help"]).stdout
    assert all(f" {old} " not in listed for old in OLD_NAMES)
    assert " eval " in listed and "ask" in _run(["diffvqa", "--help"]).stdout


@pytest.mark.extract
def test_eval_extract(tmp_path):
    (tmp_path / "a.txt").write_text("Azygos fissure. Azygos fissure again noted.")
    args = ["--unmapped", "--source", str(tmp_path), "--format", "json"]
    old, new = _run(["eval-extract", *args]), _run(["eval", "extract", *args])
    assert old.exit_code == new.exit_code == 0, old.output
    assert json.loads(old.stdout) == json.loads(new.stdout) and json.loads(old.stdout)["reports"] == 1
    _notice(old, "eval-extract")


def test_eval_episodes(tmp_path):
    from graph.formats.lunguage import made_up_rows, write_lunguage

    gold = write_lunguage(made_up_rows(patients=2, seed=3), tmp_path / "gold.csv")
    old = _run(["eval-episodes", str(gold), str(gold), "--format", "json"])
    assert old.exit_code == 0, old.output
    assert {m["f1"] for m in json.loads(old.stdout)["measures"]} == {1.0}
    _notice(old, "eval-episodes")


def test_score_reports_runs_the_same_checks():
    old, new = _run(["score-reports", "--out", "scores.csv"]), _run(["eval", "reports", "--out", "scores.csv"])
    assert old.exit_code == new.exit_code == 1 and "give either GENERATED.csv" in old.output
    _notice(old, "score-reports")


def test_evaluate_runs_the_same_checks():
    old = _run(["evaluate", "--seeds", "a,b"])
    assert old.exit_code == 1 and "--seeds 'a,b': expected comma-separated integers" in old.output
    _notice(old, "evaluate")


def test_ask_runs_the_same_checks():
    old = _run(["ask", "why is the sky blue?", "--study", "1"])
    assert old.exit_code == 1 and "the templates:" in old.output
    _notice(old, "ask")
