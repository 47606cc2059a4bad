"""MI-CXR-style five-visit questions written from the graph of an NIH ChestX-ray14 slice agree with the
independent check (plain pandas over the NIH tables, apart from the graph code) on every TEL and ICR answer,
through the library and through ``cxrkg questions multivisit`` / ``questions score``.

The whole cohort is checked by benchmarks/multivisit_nih_check.py; this is the same check on the lowest patient
ids, so that a change of the graph's answers or of the conversion shows here first.
"""

from __future__ import annotations

import json

import pytest

from tests.fixtures.loading import load_into

pytestmark = pytest.mark.network  # the NIH tables come from the torchxrayvision wheel on PyPI

PATIENTS = 40


@pytest.fixture()
def nih_slice(store, tmp_path):
    from graph.checks.nih.reference import load_tables
    from graph.datasets.nih.convert import convert_nih

    convert_nih(tmp_path / "nih", limit_patients=PATIENTS)
    load_into(store, tmp_path / "nih")
    return store, load_tables(limit_patients=PATIENTS)


def test_tel_and_icr_answers_match_the_nih_tables_on_every_question(nih_slice, tmp_path):
    from graph.checks.nih.multivisit import check_questions, read_file
    from graph.formats.micxr import read_micxr
    from graph.temporal.multivisit import write_multivisit

    store, tables = nih_slice
    out = tmp_path / "mv.jsonl"
    summary = write_multivisit(store, out, seed=3)

    result = check_questions(read_file(out), tables)

    assert summary.windows == result.windows >= 10, (summary, result.windows)
    assert read_micxr(out).rejections == []
    assert min(result.checked.get(q, 0) for q in ("interval change", "first appearance", "resolution")) >= 10, result.checked
    assert result.mismatches.empty, (result.checked, result.mismatches.head(10).to_string())
    assert {g for g, _ in summary.questions} == {"TEL", "ICR", "GTS"}, summary.questions


def test_the_same_graph_and_seed_give_the_same_bytes_and_another_seed_other_choices(nih_slice, tmp_path):
    from graph.temporal.multivisit import write_multivisit

    store, _ = nih_slice
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        write_multivisit(store, tmp_path / f"{name}.jsonl", seed=seed)
    a, b, c = ((tmp_path / f"{n}.jsonl").read_bytes() for n in "abc")
    assert a == b
    assert a != c
    qa = [json.loads(x) for x in a.decode().splitlines()]
    qc = [json.loads(x) for x in c.decode().splitlines()]
    assert [q["qid"] for q in qa] == [q["qid"] for q in qc]
    assert [q["cxrkg_basis"]["answer_text"] for q in qa] == [q["cxrkg_basis"]["answer_text"] for q in qc]


def test_cli_writes_the_file_and_scores_gold_against_itself_and_a_constant_answer(nih_slice, tmp_path):
    from typer.testing import CliRunner

    from flows.cli import app

    runner = CliRunner()
    out = tmp_path / "mv.jsonl"
    done = runner.invoke(app, ["questions", "multivisit", "--visits", "5", "--out", str(out), "--seed", "4"])
    assert done.exit_code == 0, done.output
    assert "questions (GTS " in done.output and "windows" in done.output, done.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    (tmp_path / "gold_pred.jsonl").write_text("".join(json.dumps({"qid": r["qid"], "answer": r["answer"]}) + "\n"
                                                      for r in rows))
    (tmp_path / "a_pred.jsonl").write_text("".join(json.dumps({"qid": r["qid"], "answer": "A"}) + "\n" for r in rows))

    done = runner.invoke(app, ["questions", "score", str(out), str(tmp_path / "gold_pred.jsonl"), "--bootstrap", "50",
                               "--format", "json"])
    assert done.exit_code == 0, done.output
    scores = json.loads(done.output)
    overall = [r for r in scores if r["group"] == "all"]
    assert overall[0]["n"] == len(rows) and overall[0]["accuracy"] == 1.0
    assert {r["group"] for r in scores} == {"TEL", "ICR", "GTS", "all"}

    done = runner.invoke(app, ["questions", "score", str(out), str(tmp_path / "a_pred.jsonl"), "--bootstrap", "50",
                               "--format", "json"])
    overall = [r for r in json.loads(done.output) if r["group"] == "all"][0]
    share_a = sum(r["answer"] == "A" for r in rows) / len(rows)
    assert overall["accuracy"] == pytest.approx(share_a, abs=1e-4)  # json rounds to 4 places
    assert overall["low"] <= overall["accuracy"] <= overall["high"]
    assert overall["chance"] == pytest.approx(0.2)

    bad = tmp_path / "bad_pred.jsonl"
    bad.write_text(json.dumps({"qid": rows[0]["qid"], "answer": rows[0]["answer"]}) + "\n{oops\n"
                   + json.dumps({"qid": rows[1]["qid"], "answer": "Z"}) + "\n")
    done = runner.invoke(app, ["questions", "score", str(out), str(bad), "--bootstrap", "0", "--format", "csv",
                               "--rejected", str(tmp_path / "rejected.json")])
    assert done.exit_code == 6, done.output
    assert done.stdout.splitlines()[0] == "group,qtype,n,accuracy,low,high,chance,majority"
    report = json.loads((tmp_path / "rejected.json").read_text())
    assert [(r["record"], r["field"]) for r in report] == [("line 2", None), ("line 3", "answer")]
    assert runner.invoke(app, ["questions", "multivisit", "--visits", "3", "--out", str(out)]).exit_code == 2
