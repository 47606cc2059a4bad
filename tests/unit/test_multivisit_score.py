"""``questions score`` for MI-CXR files: accuracy per family and qtype with patient-cluster intervals, beside chance
and the most common gold answer; bad prediction lines named and left out."""

from __future__ import annotations

import json

import pytest

from graph.temporal.multivisit_score import patient_of, score_questions
from graph.formats.micxr import read_micxr


def _gold(tmp_path):
    rows = []
    for k in range(12):
        group, qtype = ("TEL", "first appearance") if k < 8 else ("ICR", "interval change")
        rows.append({"qid": f"q{k}", "group_type": group, "qtype": qtype, "images": ["a", "b", "c", "d", "e"],
                     "question": "?", "choices": ["new", "worsened", "stable", "improved", "resolved"],
                     "answer": "C" if k % 4 else "A", "cxrkg_basis": {"patient_id": str(k // 2)}})
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def test_rows_per_qtype_family_and_overall_with_chance_and_majority(tmp_path):
    gold, rows = _gold(tmp_path)
    pred = tmp_path / "pred.jsonl"
    # right on q0..q5 (letters and texts mixed), wrong on q6, q7 .. q11 unanswered but q8
    lines = [{"qid": r["qid"], "answer": r["answer"] if k % 2 else
              {"A": "new", "C": "stable"}[r["answer"]]} for k, r in enumerate(rows[:6])]
    lines += [{"qid": "q6", "answer": "E"}, {"qid": "q7", "prediction": "resolved"}, {"qid": "q8", "answer": "new"}]
    pred.write_text("".join(json.dumps(x) + "\n" for x in lines))
    scored = score_questions(gold, pred, draws=200, seed=1)
    by = {(r["group"], r["qtype"]): r for r in scored.rows}
    assert list(by) == [("ICR", "interval change"), ("ICR", "all"), ("TEL", "first appearance"), ("TEL", "all"),
                        ("all", "all")]
    assert by[("TEL", "first appearance")]["accuracy"] == pytest.approx(6 / 8)
    assert by[("ICR", "all")]["accuracy"] == pytest.approx(1 / 4)
    assert by[("all", "all")]["n"] == 12 and by[("all", "all")]["accuracy"] == pytest.approx(7 / 12)
    assert by[("TEL", "all")]["majority"] == pytest.approx(6 / 8)  # "stable" is 6 of the 8 TEL answers
    assert all(r["chance"] == pytest.approx(0.2) for r in scored.rows)
    overall = by[("all", "all")]
    assert overall["low"] < overall["accuracy"] < overall["high"]
    assert scored.unanswered == 3 and scored.rejections == []


def test_bad_prediction_lines_are_named_and_the_rest_scored(tmp_path):
    gold, rows = _gold(tmp_path)
    pred = tmp_path / "pred.jsonl"
    pred.write_text("\n".join([json.dumps({"qid": "q1", "answer": "C"}), "nope", json.dumps({"qid": "zz", "answer": "A"}),
                               json.dumps({"qid": "q2", "answer": "maybe"}), json.dumps({"qid": "q1", "answer": "A"}),
                               json.dumps({"qid": "q3"})]) + "\n")
    scored = score_questions(gold, pred, draws=0)
    assert [(r.record, r.field) for r in scored.rejections] == [("line 2", None), ("line 3", "qid"), ("line 4", "answer"),
                                                                ("line 5", "qid"), ("line 6", "answer")]
    overall = scored.rows[-1]
    assert overall["accuracy"] == pytest.approx(1 / 12)
    assert overall["low"] != overall["low"]  # no draws: NaN


def test_the_patient_cluster_comes_from_the_basis_else_the_mimic_folder_else_the_qid(tmp_path):
    gold, _ = _gold(tmp_path)
    rows = [{"qid": "m", "group_type": "GTS", "qtype": "x", "images": ["files/p10/p10000032/s5/a.jpg"],
             "question": "?", "choices": ["a", "b"], "answer": "a"},
            {"qid": "n", "group_type": "GTS", "qtype": "x", "images": ["img.png"], "question": "?",
             "choices": ["a", "b"], "answer": "b"}]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [patient_of(q) for q in read_micxr(tmp_path / "m.jsonl").questions] == ["p10000032", "n"]
    assert patient_of(read_micxr(gold).questions[3]) == "1"


def test_the_interval_is_the_row_level_patient_bootstrap(tmp_path):
    import numpy as np

    from graph.bootstrap import cluster_bootstrap

    gold, rows = _gold(tmp_path)
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"qid": r["qid"], "answer": "C" if k % 3 else "A"}) + "\n"
                            for k, r in enumerate(rows)))
    overall = score_questions(gold, pred, draws=300, seed=4).rows[-1]
    correct = np.array([("C" if k % 3 else "A") == r["answer"] for k, r in enumerate(rows)], dtype=float)
    patients = [r["cxrkg_basis"]["patient_id"] for r in rows]
    want = cluster_bootstrap(patients, lambda w: w @ correct / w.sum(), draws=300, seed=4).interval()
    assert (overall["low"], overall["high"]) == pytest.approx(want)
