"""The Medical-Diff-VQA metrics through pycocoevalcap, whose METEOR and tokenizer run Java: a file against
itself gets every maximum; a perturbed copy gets exactly what the library gives when called directly."""

from __future__ import annotations

import contextlib
import io
import math

import pandas as pd
import pytest

from graph.questions.score import (
    METRIC_COLUMNS,
    score_files,
)
from tests.fixtures.diffvqa_answers import ROWS, perturbed, write_answers


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("score")
    return write_answers(folder / "gold.csv", ROWS), write_answers(folder / "pred.csv", perturbed(ROWS))


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
    answers = dict(((s, r, q), a) for s, r, _, q, a in perturbed(ROWS))
    for qtype in ("difference", "location", "all"):
        rows = [r for r in ROWS if qtype in ("all", r[2])]
        expected = _direct([r[4] for r in rows], [answers.get((r[0], r[1], r[3]), "") for r in rows], meteor)
        for column, value in expected.items():
            assert table.loc[qtype, column] == pytest.approx(value, abs=1e-12), (qtype, column)
    assert table.loc["difference", "bleu1"] < 1.0 and table.loc["location", "rouge_l"] < 1.0
    assert table.loc["presence", "accuracy"] == pytest.approx(2 / 3)  # one of three closed presence answers flipped
    assert table.loc["all", "accuracy"] == pytest.approx(4 / 5)  # 5 closed gold answers, one wrong
    assert table.loc["difference", "n"] == 4  # the gold row without a prediction still counts
