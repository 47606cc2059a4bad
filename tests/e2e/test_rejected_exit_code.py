"""Exit code 6, "done, but some input was rejected", as each command that claims it gives it: every command the
README's exit-code table and ``flows/cli/main.py`` name for 6 is run here on an input with one bad record and
one good one, and must name the rejection and exit 6 (the lists and the commands run are checked against each
other, so a command that starts rejecting must be added to all three). Each writes its rejection report where
the README says: ``CXRKG_HOME/rejected/COMMAND-UTCTIME.json`` by default (``serve``: one per drop folder,
``serve-FOLDER-HASH.json``), the path named in its output, or at ``--rejected PATH``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.fixtures.effusion import STUDY, effusion_study

REPO = Path(__file__).resolve().parents[2]


def _ingest(tmp: Path) -> list[str]:
    effusion_study(tmp / "in", 1)
    effusion_study(tmp / "in", 2).write_text("[]")
    return ["ingest", str(tmp / "in"), "--no-progress"]


def _serve_once(tmp: Path) -> list[str]:
    effusion_study(tmp / "drop", 1)
    effusion_study(tmp / "drop", 2).write_text("[]")
    return ["serve", str(tmp / "drop"), "--timezone", "UTC", "--settle-seconds", "0", "--once"]


def _extract(tmp: Path) -> list[str]:
    (tmp / "reports").mkdir()
    (tmp / "reports" / "good.txt").write_text("FINDINGS: Small left pleural effusion.")
    (tmp / "reports" / "empty.txt").write_text("")
    return ["extract", str(tmp / "reports"), "--out", str(tmp / "out")]


def _loaded_study(tmp: Path, store) -> str:
    from tests.fixtures.loading import load_into

    effusion_study(tmp / "graph", 1)
    load_into(store, tmp / "graph")
    return str(STUDY[1])


def _diffvqa_answer(tmp: Path, store) -> list[str]:
    study = _loaded_study(tmp, store)
    questions = pd.DataFrame([{"study_id": study, "subject_id": "10000001", "ref_id": "", "question_type": t,
                               "question": q} for t, q in (("view", "which view is this image taken?"),
                                                           ("presence", "is the patient happy?"))])
    questions.to_csv(tmp / "q.csv", index=False)
    return ["diffvqa", "answer", str(tmp / "q.csv"), "--out", str(tmp / "a.csv")]


def _diffvqa_check(tmp: Path, store) -> list[str]:
    from tests.fixtures.loading import load_into

    for n in (1, 2):
        effusion_study(tmp / "pair", n)
    load_into(store, tmp / "pair")
    # both rows are reversed (the reference is the later study); --out answers them again, and the second
    # is outside the templates
    questions = pd.DataFrame([{"study_id": str(STUDY[1]), "subject_id": "10000001", "ref_id": str(STUDY[2]),
                               "question_type": "difference", "question": q}
                              for q in ("what has changed compared to the reference image?", "what changed, doctor?")])
    questions.to_csv(tmp / "q.csv", index=False)
    return ["diffvqa", "check", str(tmp / "q.csv"), "--out", str(tmp / "fixed.csv")]


def _score_reports(tmp: Path, store) -> list[str]:
    study = _loaded_study(tmp, store)
    (tmp / "generated.csv").write_text(f"study_id,report\n{study},Small left pleural effusion.\n"
                                       "99999999,No acute process.\n")
    return ["eval", "reports", str(tmp / "generated.csv"), "--out", str(tmp / "scores.csv")]


def _eval_episodes(tmp: Path) -> list[str]:
    from graph.formats.lunguage import LUNGUAGE_COLUMNS, made_up_rows, write_lunguage

    rows = made_up_rows(patients=2, seed=3)
    gold = write_lunguage(rows, tmp / "gold.csv")
    frame = pd.DataFrame([r.cells() for r in rows], columns=list(LUNGUAGE_COLUMNS))
    frame.loc[1, "section"] = "findings"  # Lunguage's sections are abbreviated (find, impr, hist)
    frame.to_csv(tmp / "pred.csv", index=False)
    return ["eval", "episodes", str(gold), str(tmp / "pred.csv")]


def _cxrtrek_file(tmp: Path) -> Path:
    good = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "Is it there?"},
                         {"role": "assistant", "content": "Yes."}],
            "image": ["a.jpg"],
            "data_dict": {"cxrtrek_data": {
                "source": "x", "pat_id": "1", "study_id": "2", "ref_study_id": "", "pos_study_id": "3",
                "image": ["a.jpg"],
                "content": [{"stage": 6, "task_type": "Future_Trend_Analysis", "qtype": "yes_no",
                             "image_input_count": 1, "question": "Is it there?", "answer": "Yes.",
                             "target": "next_[pleural effusion]"}]}}}
    path = tmp / "trek.json"
    path.write_text(json.dumps([good, {"messages": [], "image": []}]))  # the second has no data_dict at all
    return path


def _cxrtrek_check(tmp: Path) -> list[str]:
    return ["cxrtrek", "check", str(_cxrtrek_file(tmp))]


def _cxrtrek_answer(tmp: Path) -> list[str]:
    return ["cxrtrek", "answer", str(_cxrtrek_file(tmp)), "--out", str(tmp / "answers.json"), "--carry-forward"]


def _questions_score(tmp: Path) -> list[str]:
    gold = {"qid": "q1", "group_type": "ICR", "qtype": "interval change", "images": ["a", "b", "c", "d", "e"],
            "question": "How did the pleural effusion change from T2 to T3?",
            "choices": ["new", "worsened", "stable", "improved", "resolved"], "answer": "C"}
    (tmp / "gold.jsonl").write_text(json.dumps(gold) + "\n")
    (tmp / "pred.jsonl").write_text(json.dumps({"qid": "q1", "answer": "C"}) + "\n"
                                    + json.dumps({"qid": "q9", "answer": "A"}) + "\n")  # no such question
    return ["questions", "score", str(tmp / "gold.jsonl"), str(tmp / "pred.jsonl"), "--bootstrap", "10"]


#: command -> a builder of its argv from a folder (and the store, for those that read the graph)
WITHOUT_GRAPH: dict[str, Callable[[Path], list[str]]] = {
    "extract": _extract, "eval episodes": _eval_episodes, "cxrtrek check": _cxrtrek_check,
    "cxrtrek answer": _cxrtrek_answer, "questions score": _questions_score,
}
WITH_GRAPH: dict[str, Callable[[Path], list[str]]] = {"ingest": _ingest, "serve --once": _serve_once}
READING_GRAPH: dict[str, Callable[[Path, object], list[str]]] = {
    "diffvqa answer": _diffvqa_answer, "diffvqa check": _diffvqa_check, "eval reports": _score_reports,
}


def _readme_names() -> set[str]:
    row = next(line for line in (REPO / "README.md").read_text().splitlines() if line.startswith("| 6 |"))
    return set(re.findall(r"`([a-z -]+?(?: --[a-z-]+)?)`", row.split("(", 1)[1].split(")", 1)[0]))


def _entry_point_names() -> set[str]:
    from flows.cli import main

    doc = main.__doc__ or ""
    block = doc[doc.index("\n6  "):].split("\n130", 1)[0]
    return set(re.findall(r"``([a-z -]+?(?: --[a-z-]+)?)``", block))


def test_the_readme_the_entry_point_and_this_test_name_the_same_commands():
    run_here = set(WITHOUT_GRAPH) | set(WITH_GRAPH) | set(READING_GRAPH)
    assert _readme_names() == _entry_point_names() == run_here, (_readme_names(), _entry_point_names())


def _exits_6(argv: list[str]) -> str:
    from flows.cli import app

    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 6, (argv, result.output)
    assert "reject" in result.output.lower() and "Traceback" not in result.output, result.output
    return result.output


def _report_named(command: str, output: str) -> Path:
    """The rejection report the output names, checked to be where the README says and to list a rejection."""
    from graph.settings import local_server_settings

    named = set(re.findall(r"(/\S+\.json)\b", output))
    reports = [Path(p) for p in named if Path(p).parent == local_server_settings().home / "rejected"]
    assert len(reports) == 1, (named, output)
    slug = command.split(" --")[0].replace(" ", "-")
    pattern = rf"{slug}-[0-9a-z]+-[0-9a-f]{{8}}\.json" if slug == "serve" else rf"{slug}-\d{{8}}T\d{{6}}Z(-\d+)?\.json"
    assert re.fullmatch(pattern, reports[0].name), reports[0].name
    _lists_a_rejection(reports[0])
    return reports[0]


def _lists_a_rejection(report: Path) -> None:
    rows = json.loads(report.read_text())
    assert rows and all(set(r) == {"file", "record", "field", "reason"} for r in rows), rows


@pytest.mark.parametrize("command", sorted(WITHOUT_GRAPH))
def test_without_the_graph(command, tmp_path, monkeypatch):
    monkeypatch.setenv("CXRKG_HOME", str(tmp_path / "home"))
    argv = WITHOUT_GRAPH[command](tmp_path)
    _report_named(command, _exits_6(argv))
    _exits_6(argv + ["--rejected", str(tmp_path / "given.json")])  # --rejected PATH: there instead
    _lists_a_rejection(tmp_path / "given.json")


@pytest.mark.parametrize("command", sorted(WITH_GRAPH))
def test_loading_the_graph(command, store, prefect_harness, tmp_path):
    _report_named(command, _exits_6(WITH_GRAPH[command](tmp_path)))


@pytest.mark.parametrize("command", sorted(READING_GRAPH))
def test_reading_the_graph(command, store, tmp_path):
    _report_named(command, _exits_6(READING_GRAPH[command](tmp_path, store)))
