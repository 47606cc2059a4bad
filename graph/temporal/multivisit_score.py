"""A model's answers to MI-CXR-format questions scored against the gold file (``cxrkg questions score``).

Gold: an MI-CXR JSON-lines file (:func:`graph.formats.micxr.read_micxr`: the released ``micxr_test.jsonl`` or
one ``cxrkg questions multivisit`` wrote). Predictions: JSON lines with ``qid`` and ``answer`` (or
``prediction``): a letter or a choice's text, resolved against the gold question's choices. A gold question
without a prediction counts as wrong (and is counted); a prediction line that is bad, names no gold qid or
names no choice is rejected alone.

Rows (one table for every temporal benchmark, the pairs' scorer gives the same keys): per (group_type,
qtype), per group_type (qtype ``all``) and overall (group ``all``): ``n``, ``accuracy``, ``low`` / ``high``
(the 95 % percentile interval of a cluster bootstrap over patients, :func:`graph.bootstrap.cluster_bootstrap`,
``draws`` draws), ``chance`` (the mean of 1 / choices) and ``majority`` (the accuracy of always giving the
group's most common gold answer text). A question's patient is its basis field's ``patient_id``, else the
``pNNNNNNNN`` folder of its first image path (MIMIC-CXR-JPG's layout), else its qid (its own cluster).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from graph.bootstrap import DRAWS, cluster_bootstrap
from graph.formats.csv_lines import line_record
from graph.formats.micxr import BASIS_FIELD, MicxrFileError, MicxrQuestion, read_micxr, resolve_answer
from graph.records import Rejection

_PATIENT_FOLDER = re.compile(r"(?:^|/)(p\d{8})(?:/|$)")
ALL = "all"


@dataclass
class Predictions:
    """The predicted letter per gold qid, and the prediction lines rejected."""

    answers: dict[str, str] = field(default_factory=dict)
    rejections: list[Rejection] = field(default_factory=list)


def read_predictions(path: str | Path, gold: dict[str, MicxrQuestion]) -> Predictions:
    """The predictions of ``path`` resolved against ``gold`` (qid -> question).

    Raises:
        MicxrFileError: the file cannot be read at all.
    """
    source = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise MicxrFileError(source, None, None, f"cannot read the file: {exc}") from None
    out = Predictions()
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            out_qid, letter = _prediction(text, source, number, gold)
            if out_qid in out.answers:
                raise MicxrFileError(source, line_record(number), "qid", f"a second prediction for qid {out_qid!r}")
            out.answers[out_qid] = letter
        except MicxrFileError as exc:
            out.rejections.append(Rejection.from_error(exc))
    return out


def _prediction(text: str, source: str, number: int, gold: dict[str, MicxrQuestion]) -> tuple[str, str]:
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MicxrFileError(source, line_record(number), None, f"not a JSON object: {exc.msg}") from None
    if not isinstance(row, dict) or "qid" not in row:
        raise MicxrFileError(source, line_record(number), "qid", "a prediction is an object with qid and answer")
    qid = str(row["qid"])
    if qid not in gold:
        raise MicxrFileError(source, line_record(number), "qid", f"qid {qid!r} is not in the gold file")
    name = "answer" if "answer" in row else "prediction"
    if name not in row:
        raise MicxrFileError(source, line_record(number), "answer", "field answer (or prediction) missing")
    return qid, resolve_answer(row[name], gold[qid].choices, source, number, name)


def patient_of(question: MicxrQuestion) -> str:
    """The cluster of a question (module docstring)."""
    basis = question.extra.get(BASIS_FIELD)
    if isinstance(basis, dict) and basis.get("patient_id"):
        return str(basis["patient_id"])
    match = _PATIENT_FOLDER.search(question.images[0])
    return match.group(1) if match else question.qid


def _row(group: str, qtype: str, questions: list[MicxrQuestion], correct: np.ndarray, clusters: list[str],
         draws: int, seed: int) -> dict:
    n = len(questions)
    # per-cluster sums in first-seen order: the same draws as resampling the rows' clusters, far fewer products
    codes, uniques = pd.factorize(np.asarray(clusters, dtype=object), sort=False)
    right, size = np.bincount(codes, weights=correct), np.bincount(codes).astype(float)
    low, high = cluster_bootstrap(len(uniques), lambda w: w @ right / max(w @ size, 1e-300), draws=draws,
                                  seed=seed).interval()
    common = Counter(q.answer_text for q in questions).most_common(1)[0][1]
    return {"group": group, "qtype": qtype, "n": n, "accuracy": float(correct.mean()), "low": low, "high": high,
            "chance": float(np.mean([1 / len(q.choices) for q in questions])), "majority": common / n}


@dataclass
class QuestionScore:
    """The score rows (module docstring), the questions without a prediction, and what was rejected in
    either file."""

    rows: list[dict]
    unanswered: int
    rejections: list[Rejection]


def score_questions(gold: Path, pred: Path, draws: int = DRAWS, seed: int = 0) -> QuestionScore:
    """Score ``pred`` against ``gold`` (module docstring); rows sorted by group then qtype, ``all`` last.

    Raises:
        MicxrFileError: a file cannot be read at all, or the gold file has no question with an answer.
    """
    read = read_micxr(gold)
    if not read.questions:
        raise MicxrFileError(str(gold), None, None, "no readable question with an answer")
    by_qid = {q.qid: q for q in read.questions}
    predicted = read_predictions(pred, by_qid)
    correct = {q.qid: predicted.answers.get(q.qid) == q.answer for q in read.questions}
    groups: dict[tuple[str, str], list[MicxrQuestion]] = {}
    for q in read.questions:
        for key in ((q.group_type, q.qtype), (q.group_type, ALL), (ALL, ALL)):
            groups.setdefault(key, []).append(q)
    rows = []
    for (group, qtype) in sorted(groups, key=lambda k: (k[0] == ALL, k[0], k[1] == ALL, k[1])):
        qs = groups[(group, qtype)]
        rows.append(_row(group, qtype, qs, np.array([correct[q.qid] for q in qs], dtype=float),
                         [patient_of(q) for q in qs], draws, seed))
    unanswered = sum(q.qid not in predicted.answers for q in read.questions)
    return QuestionScore(rows, unanswered, read.rejections + predicted.rejections)
