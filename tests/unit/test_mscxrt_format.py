"""MS-CXR-T's pairs file: the reader names a bad row and field and reads the rest; the scorer's rows (files written
here with made-up ids: no MS-CXR-T row is used)."""

from __future__ import annotations

import math

import pytest

from graph.formats.mscxrt import PairFileError, read_pairs
from graph.temporal.pairs_score import score_pairs

HEADER = ("dicom_id,previous_dicom_id,study_id,previous_study_id,subject_id,"
          "edema_progression,edema_label_quality,pneumothorax_progression,pneumothorax_label_quality")


def _write(path, *lines: str):
    path.write_text("\n".join(lines) + "\n")
    return path


def test_reads_the_columns_and_leaves_empty_labels_out(tmp_path):
    f = read_pairs(_write(tmp_path / "g.csv", HEADER,
                          "p10/p1/s11/aa.jpg,p10/p1/s10/bb.jpg,11,10,1,worsening,one_expert,,",
                          "cc,dd,21,20,2,stable,multiple_experts,improving,disagreement"))
    assert f.findings == ("edema", "pneumothorax") and f.rejections == []
    first, second = f.rows
    assert first.labels == {"edema": "worsening"} and first.key == ("aa", "bb") and first.line == 2
    assert first.extras == {("edema", "_label_quality"): "one_expert"}
    assert second.labels == {"edema": "stable", "pneumothorax": "improving"} and second.previous_study_id == "20"


def test_a_bad_row_is_named_by_line_and_field_and_the_rest_is_read(tmp_path):
    f = read_pairs(_write(tmp_path / "g.csv", HEADER,
                          "a1,a0,11,10,1,better,,,",
                          "b1,b0,21,20,,stable,,,",
                          "",
                          "c1,c0,31,30,3,stable,,",
                          "d1,d0,41,40,4,new,,resolved,",
                          "d1.jpg,d0,41,40,4,stable,,,"))
    got = [(r.record, r.field) for r in f.rejections]
    assert got == [("line 2", "edema_progression"), ("line 3", "subject_id"), ("line 5", None), ("line 7", "dicom_id")]
    assert "'better'" in f.rejections[0].reason and "first at line 6" in f.rejections[3].reason
    assert [(r.line, r.labels) for r in f.rows] == [(6, {"edema": "new", "pneumothorax": "resolved"})]


@pytest.mark.parametrize("text, field", [("", None), ("dicom_id,study_id,subject_id,edema_progression\n", "previous_dicom_id"),
                                         ("dicom_id,previous_dicom_id,study_id,subject_id\n", None),
                                         ("dicom_id,dicom_id,previous_dicom_id,study_id,subject_id,x_progression\n",
                                          "dicom_id")])
def test_a_file_that_cannot_be_used_at_all(tmp_path, text, field):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(PairFileError) as caught:
        read_pairs(path)
    assert caught.value.field == field and str(path) in str(caught.value)


def test_scores_per_finding_and_overall_with_chance_and_majority(tmp_path):
    gold = _write(tmp_path / "gold.csv", HEADER,
                  "a1,a0,11,10,1,worsening,,stable,", "b1,b0,21,20,2,stable,,,",
                  "c1,c0,31,30,3,stable,,improving,", "d1,d0,41,40,3,improving,,,")
    pred = _write(tmp_path / "pred.csv", HEADER,
                  "a1.jpg,a0.jpg,11,10,1,new,,improving,", "b1,b0,21,20,2,stable,,,",
                  "c1,c0,31,30,3,worsening,,improving,", "x1,x0,51,50,5,stable,,,,one-field-too-many")
    rejected: list = []
    rows = score_pairs(gold, pred, draws=200, seed=3, rejections=rejected)
    by = {r["group"]: r for r in rows}
    assert [r["group"] for r in rows] == ["edema", "pneumothorax", "all"] and {r["qtype"] for r in rows} == {"all"}
    assert by["edema"]["n"] == 4 and by["edema"]["accuracy"] == 0.5  # new read as worsening; d1 unanswered
    assert by["pneumothorax"]["n"] == 2 and by["pneumothorax"]["accuracy"] == 0.5
    assert by["all"]["n"] == 6 and math.isclose(by["all"]["accuracy"], 3 / 6)
    assert by["edema"]["majority"] == 0.5 and by["all"]["majority"] == 3 / 6  # stable, the most common
    assert all(r["chance"] == 1 / 3 for r in rows)
    assert by["all"]["low"] <= by["all"]["accuracy"] <= by["all"]["high"]
    assert [(r.record, r.file) for r in rejected] == [("line 5", str(pred))]
    again = score_pairs(gold, pred, draws=200, seed=3)
    assert again == rows


def test_five_classes_are_scored_in_five(tmp_path):
    gold = _write(tmp_path / "gold.csv", HEADER, "a1,a0,11,10,1,new,,resolved,")
    pred = _write(tmp_path / "pred.csv", HEADER, "a1,a0,11,10,1,worsened,,resolved,")
    rows = score_pairs(gold, pred, draws=0, seed=0)
    assert [(r["group"], r["accuracy"], r["chance"]) for r in rows] == [
        ("edema", 0.0, 0.2), ("pneumothorax", 1.0, 0.2), ("all", 0.5, 0.2)]
    assert math.isnan(rows[0]["low"])


def test_questions_score_scores_a_csv_gold_file_as_pairs_and_names_a_rejected_prediction(tmp_path):
    import json

    from typer.testing import CliRunner

    from flows.cli import app

    gold = _write(tmp_path / "gold.csv", HEADER, "a1,a0,11,10,1,worsening,,stable,", "b1,b0,21,20,2,stable,,,")
    pred = _write(tmp_path / "pred.csv", HEADER, "a1,a0,11,10,1,worsening,,improving,", "b1,b0,21,20,2,stable,,,")
    result = CliRunner().invoke(app, ["questions", "score", str(gold), str(pred), "--format", "json",
                                      "--bootstrap", "100", "--seed", "4"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows == [pytest.approx(r, abs=1e-4) for r in score_pairs(gold, pred, draws=100, seed=4)]
    assert {r["group"]: r["accuracy"] for r in rows} == pytest.approx({"edema": 1.0, "pneumothorax": 0.0, "all": 2 / 3},
                                                                      abs=1e-4)

    bad = _write(tmp_path / "bad.csv", HEADER, "a1,a0,11,10,1,worse,,stable,", "b1,b0,21,20,2,stable,,,")
    result = CliRunner().invoke(app, ["questions", "score", str(gold), str(bad), "--bootstrap", "50",
                                      "--rejected", str(tmp_path / "r.json")])
    assert result.exit_code == 6, result.output
    assert [(r["record"], r["field"]) for r in json.loads((tmp_path / "r.json").read_text())] == [
        ("line 2", "edema_progression")]

