"""Score answers to Medical-Diff-VQA questions against gold answers, per question type, with the dataset's metrics.

Both files are in the dataset's format, ``mimic_pair_questions.csv`` (Hu et al., KDD 2023; PhysioNet
``medical-diff-vqa/1.0.0``), read by :func:`graph.formats.diffvqa.read_question_file`: columns
:data:`~graph.formats.diffvqa.ANSWER_COLUMNS` (more columns, such as the unnamed index and ``split``, are
allowed and ignored). Rows are joined on :data:`KEY`, ``(study_id, ref_id, question)``, and named in errors by
their lines in the file (the header is line 1).

The metrics are those of the dataset's authors' evaluation (repository Holipori/EKAID, ``model/evaluation.py``
and ``model/evaluate_score.py``), computed through pycocoevalcap 1.2:

- answers are tokenized by pycocoevalcap's ``PTBTokenizer`` (Stanford PTBTokenizer: lower case, punctuation
  removed), gold and prediction alike;
- BLEU-1..4 (corpus level, Papineni et al. 2002), METEOR 1.5 (Denkowski and Lavie 2014), ROUGE-L (mean of the
  per-answer F-measures with beta 1.2, Lin 2004) and CIDEr-D (Vedantam et al. 2015: document frequencies from
  the gold answers scored together, scores x10), each with the one gold answer as the only reference;
- each question type is scored as its own corpus (as ``caption_metric_by_question_type`` does, so CIDEr's
  document frequencies and BLEU's corpus counts are those of the type), and ``"all"`` scores every row at once;
- ``accuracy``: exact string match of prediction and gold over the closed questions, those whose gold answer
  is ``yes`` or ``no`` (the authors' ``acc``); NaN where a type has none.

A gold row without a prediction is scored with an empty answer (every metric 0 for it, wrong for accuracy), so
skipping a question never helps. ``n`` counts the gold rows.

Maxima: an answer scored against itself gets 1.0 from BLEU-n when the corpus has n-grams of that order, 1.0
from METEOR and ROUGE-L, and from CIDEr-D 10 x (the share of n = 1..4 for which the answer has an n-gram
that not every gold answer of the type shares); accuracy 1.0.

METEOR and the tokenizer run Java (``java`` on PATH); a missing Java raises :class:`MetricUnavailable`.
"""

from __future__ import annotations

import contextlib
import io
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from graph.errors import CxrkgError
from graph.formats.diffvqa import ANSWER_COLUMNS, LINE, QuestionFileError, line_record, read_question_file

KEY = ("study_id", "ref_id", "question")
METRIC_COLUMNS = ("question_type", "n", "bleu1", "bleu2", "bleu3", "bleu4", "meteor", "rouge_l", "cider", "accuracy")
CLOSED_ANSWERS = ("yes", "no")
ALL = "all"


class MetricUnavailable(CxrkgError, RuntimeError):
    """pycocoevalcap is not installed, or Java (which METEOR and the tokenizer run) is not on PATH."""


def read_answer_file(path: Path, gold: bool) -> pd.DataFrame:
    """The rows of one file of answers to score, every cell a string, with a ``line`` column (the row's line
    in the file, as :func:`~graph.formats.diffvqa.read_question_file` numbers it).

    Args:
        path: a CSV with at least :data:`~graph.formats.diffvqa.ANSWER_COLUMNS`.
        gold: True for the gold file, whose answers must not be empty (a prediction's may be).

    Returns:
        The file's :data:`~graph.formats.diffvqa.ANSWER_COLUMNS` plus ``line`` (int), in file order.

    Raises:
        QuestionFileError: the file cannot be read, lacks a column, has an empty key field (or, gold, an empty
            answer) or holds one key twice.
    """
    frame = read_question_file(path, ANSWER_COLUMNS)[list(ANSWER_COLUMNS)].reset_index()
    required = (*KEY, "question_type", "answer") if gold else (*KEY,)
    for column in required:
        empty = frame[frame[column].str.strip() == ""]
        if len(empty):
            raise QuestionFileError(str(path), line_record(empty[LINE].iloc[0]), column, "empty")
    twice = frame[frame.duplicated(list(KEY), keep="first")]
    if len(twice):
        row = twice.iloc[0]
        first = frame[(frame[list(KEY)] == row[list(KEY)]).all(axis=1)][LINE].iloc[0]
        raise QuestionFileError(str(path), line_record(row[LINE]), "question",
                                f"(study_id, ref_id, question) = ({row['study_id']}, {row['ref_id']}, "
                                f"{row['question']!r}) already at line {first}")
    return frame


def join_answers(gold: pd.DataFrame, pred: pd.DataFrame, pred_path: Path) -> pd.DataFrame:
    """Gold and predicted answers side by side, one row per gold row.

    Args:
        gold: the gold frame of :func:`read_answer_file`.
        pred: the predicted frame of :func:`read_answer_file`.
        pred_path: the prediction file, named in errors.

    Returns:
        Columns question_type (gold's), gold, pred (``""`` where the prediction file has no row), in gold order.

    Raises:
        QuestionFileError: a prediction row whose key has no gold row (the first one).
    """
    merged = gold.merge(pred[[*KEY, "answer", LINE]], on=list(KEY), how="outer", suffixes=("", "_pred"),
                        indicator=True, sort=False)
    orphans = merged[merged["_merge"] == "right_only"]
    if len(orphans):
        row = orphans.sort_values(f"{LINE}_pred").iloc[0]
        raise QuestionFileError(str(pred_path), line_record(int(row[f"{LINE}_pred"])), "question",
                                f"no gold row has (study_id, ref_id, question) = ({row['study_id']}, "
                                f"{row['ref_id']}, {row['question']!r})")
    merged = merged[merged["_merge"] != "right_only"].sort_values(LINE)
    return pd.DataFrame({"question_type": merged["question_type"].to_numpy(),
                         "gold": merged["answer"].to_numpy(),
                         "pred": merged["answer_pred"].fillna("").to_numpy()})


@contextlib.contextmanager
def _meteor() -> Iterator[Any]:
    """One METEOR 1.5 process (a JVM that loads its paraphrase tables once, about 15 s), ended on exit."""
    from pycocoevalcap.meteor.meteor import Meteor

    scorer = Meteor()
    try:
        yield scorer
    finally:
        process = scorer.meteor_p
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()
        process.kill()
        process.wait()


def _tokenize(answers: list[str]) -> list[str]:
    """pycocoevalcap's PTBTokenizer over all answers at once (one Java call)."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tokenized = PTBTokenizer().tokenize({i: [{"caption": a}] for i, a in enumerate(answers)})
    return [tokenized[i][0] for i in range(len(answers))]


def _check_metrics() -> None:
    try:
        import pycocoevalcap  # noqa: F401
    except ImportError as exc:
        raise MetricUnavailable("pycocoevalcap is not installed: pip install 'cxrkg[questions]'") from exc
    if shutil.which("java") is None:
        raise MetricUnavailable("java is not on PATH: METEOR and pycocoevalcap's tokenizer run Java")


def _corpus_scores(gold: list[str], pred: list[str], meteor: Any) -> dict[str, float]:
    """BLEU-1..4, METEOR, ROUGE-L and CIDEr-D of tokenized answers scored as one corpus (one reference each)."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    gts = {i: [g] for i, g in enumerate(gold)}
    res = {i: [p] for i, p in enumerate(pred)}
    with contextlib.redirect_stdout(io.StringIO()):  # Bleu prints its n-gram counts
        bleu, _ = Bleu(4).compute_score(gts, res)
    out = {f"bleu{n}": float(b) for n, b in enumerate(bleu, start=1)}
    out["meteor"] = float(meteor.compute_score(gts, res)[0])
    out["rouge_l"] = float(Rouge().compute_score(gts, res)[0])
    out["cider"] = float(Cider().compute_score(gts, res)[0])
    return out


def _accuracy(gold: pd.Series, pred: pd.Series) -> float:
    closed = gold.isin(CLOSED_ANSWERS)
    return float((gold[closed] == pred[closed]).mean()) if closed.any() else math.nan


def score_answers(joined: pd.DataFrame) -> pd.DataFrame:
    """The metrics of :func:`join_answers`'s frame, per question type (sorted) and for ``"all"`` (last).

    Args:
        joined: columns question_type, gold, pred (raw answers).

    Returns:
        One row per question type plus ``"all"``, columns :data:`METRIC_COLUMNS` (n int, the rest float).

    Raises:
        MetricUnavailable: pycocoevalcap or Java is missing.
    """
    _check_metrics()
    if joined.empty:
        return pd.DataFrame(columns=list(METRIC_COLUMNS))
    tokens = _tokenize([*joined["gold"], *joined["pred"]])
    frame = joined.assign(gold_tok=tokens[:len(joined)], pred_tok=tokens[len(joined):])
    groups = [(t, frame[frame["question_type"] == t]) for t in sorted(frame["question_type"].unique())]
    rows = []
    with _meteor() as meteor:
        for name, part in [*groups, (ALL, frame)]:
            rows.append({"question_type": name, "n": len(part),
                         **_corpus_scores(list(part["gold_tok"]), list(part["pred_tok"]), meteor),
                         "accuracy": _accuracy(part["gold"], part["pred"])})
    return pd.DataFrame(rows, columns=list(METRIC_COLUMNS))


def score_files(gold: Path, pred: Path) -> pd.DataFrame:
    """Score the predicted answers of ``pred`` against the gold answers of ``gold`` (both dataset-format CSVs).

    Args:
        gold: the reference question file (for example the dataset's ``mimic_pair_questions.csv``).
        pred: the answers to score; its rows are matched to gold rows on (study_id, ref_id, question).

    Returns:
        One row per gold question type plus ``"all"``, columns :data:`METRIC_COLUMNS`: n (gold rows), bleu1..4,
        meteor, rouge_l, cider (pycocoevalcap's CIDEr-D, 0..10), accuracy (closed questions; NaN where none).

    Raises:
        QuestionFileError: bad input in either file (file, line and field named).
        MetricUnavailable: pycocoevalcap or Java is missing.
    """
    gold_rows = read_answer_file(Path(gold), gold=True)
    pred_rows = read_answer_file(Path(pred), gold=False)
    return score_answers(join_answers(gold_rows, pred_rows, Path(pred)))
