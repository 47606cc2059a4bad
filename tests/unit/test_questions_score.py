"""Scoring of Medical-Diff-VQA answers (graph.questions.score) on made-up question files.

The files (tests/fixtures/diffvqa_answers.py) are written in the dataset's columns, with invented ids: no dataset
row. The metrics themselves, whose METEOR and tokenizer run Java, are checked in tests/e2e/test_questions_metrics.py.
"""

from __future__ import annotations

import pandas as pd
import pytest

from graph.formats.diffvqa import QuestionFileError
from graph.questions.score import join_answers, read_answer_file, score_files
from tests.fixtures.diffvqa_answers import ROWS, perturbed, write_answers


def test_missing_column_names_file_and_field(tmp_path):
    bad = tmp_path / "gold.csv"
    write_answers(bad, ROWS[:2])
    pd.read_csv(bad).drop(columns=["ref_id"]).to_csv(bad, index=False)
    with pytest.raises(QuestionFileError) as err:
        score_files(bad, write_answers(tmp_path / "pred.csv", ROWS[:2]))
    assert err.value.file == str(bad) and err.value.field == "ref_id" and "missing" in str(err.value)


def test_duplicate_key_names_the_second_line(tmp_path):
    pred = write_answers(tmp_path / "pred.csv", [*ROWS[:3], ROWS[1]])
    with pytest.raises(QuestionFileError) as err:
        score_files(write_answers(tmp_path / "gold.csv", ROWS), pred)
    assert (err.value.file, err.value.record, err.value.field) == (str(pred), "line 5", "question")
    assert "already at line 3" in str(err.value)


def test_prediction_without_gold_is_rejected(tmp_path):
    extra = ("70000002", "70000001", "presence", "is there pneumothorax?", "no")
    pred = write_answers(tmp_path / "pred.csv", [*ROWS[:2], extra])
    with pytest.raises(QuestionFileError) as err:
        score_files(write_answers(tmp_path / "gold.csv", ROWS[:2]), pred)
    assert (err.value.file, err.value.record, err.value.field) == (str(pred), "line 4", "question")
    assert "70000002" in str(err.value)


def test_empty_gold_answer_and_empty_key_are_rejected(tmp_path):
    gold = write_answers(tmp_path / "gold.csv", [ROWS[0], (*ROWS[1][:4], "")])
    with pytest.raises(QuestionFileError) as err:
        read_answer_file(gold, gold=True)
    assert (err.value.record, err.value.field) == ("line 3", "answer")
    assert len(read_answer_file(gold, gold=False)) == 2  # a prediction may be empty
    keyless = write_answers(tmp_path / "keyless.csv", [ROWS[0], ("50000002", "", *ROWS[1][2:])])
    with pytest.raises(QuestionFileError, match="line 3, field ref_id: empty"):
        read_answer_file(keyless, gold=False)


def test_unreadable_file_is_an_input_error(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(QuestionFileError, match="empty file"):
        read_answer_file(tmp_path / "empty.csv", gold=True)


def test_join_keeps_every_gold_row_and_blanks_missing_predictions(tmp_path):
    gold = read_answer_file(write_answers(tmp_path / "gold.csv", ROWS), gold=True)
    pred = read_answer_file(write_answers(tmp_path / "pred.csv", list(reversed(perturbed(ROWS))), extra_index=False),
                              gold=False)
    joined = join_answers(gold, pred, tmp_path / "pred.csv")
    assert list(joined["gold"]) == [r[4] for r in ROWS]
    assert list(joined["pred"]) == [r[4] for r in perturbed(ROWS)] + [""]


# --- the metrics (Java) ----------------------------------------------------------------------------------
