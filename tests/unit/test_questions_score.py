"""Scoring of Medical-Diff-VQA answers (graph.questions.score) on made-up question files.

The files below are written here, in the dataset's columns, with invented ids: no dataset row. Tests that run
METEOR or the tokenizer need Java and are marked ``java`` (skipped where Java is missing).
"""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import pandas as pd
import pytest

from graph.questions.score import (COLUMNS, METRIC_COLUMNS, ScoreInputError, join_answers, read_question_file,
                                   score_files)

Q_ABN = "what abnormalities are seen in this image?"
Q_ANY = "is there evidence of any abnormalities in this image?"
Q_DIFF = "what has changed compared to the reference image?"

#: (study, ref, type, question, answer): two made-up patients, every question type, answers of 1 to 15 tokens
ROWS = [
    ("50000002", "50000001", "abnormality", Q_ABN, "pleural effusion, atelectasis"),
    ("50000002", "50000001", "presence", "is there pneumothorax?", "no"),
    ("50000002", "50000001", "view", "which view is this image taken?", "AP view"),
    ("50000002", "50000001", "location", "where is the pleural effusion?", "left lower lung area"),
    ("50000002", "50000001", "level", "what level is the pleural effusion?", "small"),
    ("50000002", "50000001", "type", "what type is the atelectasis?", "linear"),
    ("50000002", "50000001", "difference", Q_DIFF,
     "the main image has an additional finding of atelectasis than the reference image. "),
    ("50000003", "50000001", "abnormality", Q_ANY, "yes"),
    ("50000003", "50000001", "presence", "is there evidence of edema in this image?", "yes"),
    ("50000003", "50000001", "view", "is this PA view?", "no"),
    ("50000003", "50000001", "location", "is the pleural effusion located on the left side or right side?",
     "right side"),
    ("50000003", "50000001", "level", "what level is the edema?", "mild to moderate"),
    ("50000003", "50000001", "type", "what type is the lung opacity?", "patchy"),
    ("50000003", "50000001", "difference", Q_DIFF,
     "the level of pleural effusion has changed from small to moderate. the main image has additional findings "
     "of edema, and lung opacity than the reference image. "),
    ("60000002", "60000001", "abnormality", Q_ABN, "cardiomegaly, edema, vascular congestion"),
    ("60000002", "60000001", "presence", "is there hernia in the lower lung area?", "no"),
    ("60000002", "60000001", "location", "where in the image is the lung opacity located?", "right upper lung area"),
    ("60000002", "60000001", "level", "what level is the cardiomegaly?", "moderate"),
    ("60000002", "60000001", "difference", Q_DIFF, "nothing has changed."),
    ("60000003", "60000001", "difference", Q_DIFF,
     "the main image is missing the findings of cardiomegaly, edema, and vascular congestion than the reference "
     "image. "),
]


def _write(path: Path, rows, extra_index: bool = True) -> Path:
    frame = pd.DataFrame([(s, s[0] + "0000001", r, t, q, a) for s, r, t, q, a in rows], columns=list(COLUMNS))
    frame["split"] = "test"
    frame.to_csv(path, index=extra_index)  # the dataset's file has an unnamed index column first
    return path


def _perturbed(rows):
    out = [list(r) for r in rows]
    out[1][4] = "yes"  # a wrong closed answer
    out[3][4] = "left lung area"
    out[6][4] = "the main image has an additional finding of edema than the reference image. "
    out[12][4] = "patchy"  # unchanged
    out[13][4] = "nothing has changed."
    out[16][4] = "right lower lung area"
    return [tuple(r) for r in out[:-1]]  # the last gold row gets no prediction


# --- input checks (no Java) ------------------------------------------------------------------------------

def test_missing_column_names_file_and_field(tmp_path):
    bad = tmp_path / "gold.csv"
    _write(bad, ROWS[:2])
    pd.read_csv(bad).drop(columns=["ref_id"]).to_csv(bad, index=False)
    with pytest.raises(ScoreInputError) as err:
        score_files(bad, _write(tmp_path / "pred.csv", ROWS[:2]))
    assert err.value.file == str(bad) and err.value.field == "ref_id" and "missing" in str(err.value)


def test_duplicate_key_names_the_second_line(tmp_path):
    pred = _write(tmp_path / "pred.csv", [*ROWS[:3], ROWS[1]])
    with pytest.raises(ScoreInputError) as err:
        score_files(_write(tmp_path / "gold.csv", ROWS), pred)
    assert (err.value.file, err.value.record, err.value.field) == (str(pred), "line 5", "question")
    assert "already at line 3" in str(err.value)


def test_prediction_without_gold_is_rejected(tmp_path):
    extra = ("70000002", "70000001", "presence", "is there pneumothorax?", "no")
    pred = _write(tmp_path / "pred.csv", [*ROWS[:2], extra])
    with pytest.raises(ScoreInputError) as err:
        score_files(_write(tmp_path / "gold.csv", ROWS[:2]), pred)
    assert (err.value.file, err.value.record, err.value.field) == (str(pred), "line 4", "question")
    assert "70000002" in str(err.value)


def test_empty_gold_answer_and_empty_key_are_rejected(tmp_path):
    gold = _write(tmp_path / "gold.csv", [ROWS[0], (*ROWS[1][:4], "")])
    with pytest.raises(ScoreInputError) as err:
        read_question_file(gold, gold=True)
    assert (err.value.record, err.value.field) == ("line 3", "answer")
    assert len(read_question_file(gold, gold=False)) == 2  # a prediction may be empty
    keyless = _write(tmp_path / "keyless.csv", [ROWS[0], ("50000002", "", *ROWS[1][2:])])
    with pytest.raises(ScoreInputError, match="line 3, field ref_id: empty"):
        read_question_file(keyless, gold=False)


def test_unreadable_file_is_an_input_error(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ScoreInputError, match="not a readable CSV"):
        read_question_file(tmp_path / "empty.csv", gold=True)


def test_join_keeps_every_gold_row_and_blanks_missing_predictions(tmp_path):
    gold = read_question_file(_write(tmp_path / "gold.csv", ROWS), gold=True)
    pred = read_question_file(_write(tmp_path / "pred.csv", list(reversed(_perturbed(ROWS))), extra_index=False),
                              gold=False)
    joined = join_answers(gold, pred, tmp_path / "pred.csv")
    assert list(joined["gold"]) == [r[4] for r in ROWS]
    assert list(joined["pred"]) == [r[4] for r in _perturbed(ROWS)] + [""]


# --- the metrics (Java) ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("score")
    return _write(folder / "gold.csv", ROWS), _write(folder / "pred.csv", _perturbed(ROWS))


@pytest.mark.java
def test_a_file_against_itself_gets_every_maximum(files):
    gold, _ = files
    table = score_files(gold, gold).set_index("question_type")
    assert list(table.reset_index().columns) == list(METRIC_COLUMNS)
    assert list(table.index) == ["abnormality", "difference", "level", "location", "presence", "type", "view", "all"]
    assert table["n"].to_dict() == {**pd.Series([r[2] for r in ROWS]).value_counts().to_dict(), "all": len(ROWS)}
    for column in ("bleu1", "meteor", "rouge_l"):
        assert table[column].tolist() == pytest.approx([1.0] * len(table), abs=1e-8), column
    # BLEU-4 reaches 1 where the type's corpus has 4-grams; CIDEr-D gives an answer 10 x the share of the orders
    # n = 1..4 it has an n-gram of: the difference answers have 4 orders each, but "nothing has changed" 3
    assert table.loc[["difference", "location", "all"], "bleu4"].tolist() == pytest.approx([1.0] * 3, abs=1e-8)
    assert table.loc["difference", "cider"] == pytest.approx((10 + 10 + 10 * 3 / 4 + 10) / 4)
    assert table.loc[["presence", "view", "all"], "accuracy"].tolist() == [1.0, 1.0, 1.0]
    assert math.isnan(table.loc["level", "accuracy"]) and math.isnan(table.loc["difference", "accuracy"])


@pytest.fixture(scope="module")
def meteor():
    """pycocoevalcap's own METEOR process, ended after the module."""
    from pycocoevalcap.meteor.meteor import Meteor

    scorer = Meteor()
    yield scorer
    for stream in (scorer.meteor_p.stdin, scorer.meteor_p.stdout, scorer.meteor_p.stderr):
        stream.close()
    scorer.meteor_p.kill()
    scorer.meteor_p.wait()


def _direct(gold: list[str], pred: list[str], meteor) -> dict[str, float]:
    """What pycocoevalcap gives when called directly, as the dataset's authors call it."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tok = PTBTokenizer()
    gts = tok.tokenize({i: [{"caption": a}] for i, a in enumerate(gold)})
    res = tok.tokenize({i: [{"caption": a}] for i, a in enumerate(pred)})
    with contextlib.redirect_stdout(io.StringIO()):
        bleu = Bleu(4).compute_score(gts, res)[0]
    return {"bleu1": bleu[0], "bleu2": bleu[1], "bleu3": bleu[2], "bleu4": bleu[3],
            "meteor": meteor.compute_score(gts, res)[0], "rouge_l": Rouge().compute_score(gts, res)[0],
            "cider": Cider().compute_score(gts, res)[0]}


@pytest.mark.java
@pytest.mark.slow
def test_a_perturbed_copy_gets_what_the_library_gives(files, meteor):
    gold, pred = files
    table = score_files(gold, pred).set_index("question_type")
    answers = dict(((s, r, q), a) for s, r, _, q, a in _perturbed(ROWS))
    for qtype in ("difference", "location", "all"):
        rows = [r for r in ROWS if qtype in ("all", r[2])]
        expected = _direct([r[4] for r in rows], [answers.get((r[0], r[1], r[3]), "") for r in rows], meteor)
        for column, value in expected.items():
            assert table.loc[qtype, column] == pytest.approx(value, abs=1e-12), (qtype, column)
    assert table.loc["difference", "bleu1"] < 1.0 and table.loc["location", "rouge_l"] < 1.0
    assert table.loc["presence", "accuracy"] == pytest.approx(2 / 3)  # one of three closed presence answers flipped
    assert table.loc["all", "accuracy"] == pytest.approx(4 / 5)  # 5 closed gold answers, one wrong
    assert table.loc["difference", "n"] == 4  # the gold row without a prediction still counts
