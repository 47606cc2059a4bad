"""Scores of a model's progression labels against a pairs file (MS-CXR-T's, or ``cxrkg export pairs``'s).

Pairs are matched by their two images (:attr:`graph.formats.mscxrt.PairLabels.key`: ids without folders or an
image suffix). Every labelled (pair, finding) cell of the gold file is one question; a prediction that does
not label it counts as wrong. Labels compare in the gold file's label set: when the gold file holds only
MS-CXR-T's three words, a prediction's CheXTemporal word is read in the three (``new`` -> ``worsening``,
:func:`graph.temporal.labels.to_three`); a gold file with a five-class word is scored in the five.

Rows (the shape ``cxrkg questions score`` prints): one per finding (``group`` the finding's column prefix,
``qtype`` ``all``) and one overall (``group`` ``all``), each with ``n`` (questions), ``accuracy``, ``low`` /
``high`` (95 % percentile interval of a cluster bootstrap over patients, ``subject_id``, since a patient's pairs
are not independent: :func:`graph.bootstrap.cluster_bootstrap`, ``draws`` draws seeded with ``seed``),
``chance`` (1 / the label set's size) and ``majority`` (the accuracy of the gold file's most common label of
that group, on the same questions).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from graph.bootstrap import DRAWS, cluster_bootstrap
from graph.formats.mscxrt import PairFile, read_pairs
from graph.records import Rejection
from graph.temporal.labels import FIVE, THREE, to_three

ALL = "all"


def _in_set(word: str | None, three: bool) -> str | None:
    if word is None or not three or word in THREE:
        return word
    return to_three(word)


def _questions(gold: PairFile, pred: PairFile) -> tuple[list[str], list[str], list[str], list[str], bool]:
    """(finding, subject, gold label, predicted label or "") of every labelled gold cell; whether in three."""
    three = all(w in THREE for r in gold.rows for w in r.labels.values())
    answers = {r.key: r.labels for r in pred.rows}
    groups, subjects, truth, said = [], [], [], []
    for row in gold.rows:
        got = answers.get(row.key, {})
        for finding, word in row.labels.items():
            groups.append(finding)
            subjects.append(row.subject_id)
            truth.append(word)
            said.append(_in_set(got.get(finding), three) or "")
    return groups, subjects, truth, said, three


def score_pairs(gold: Path, pred: Path, draws: int = DRAWS, seed: int = 0,
                rejections: list[Rejection] | None = None) -> list[dict[str, Any]]:
    """Accuracy per finding and overall (module docstring for the rows' keys).

    Args:
        gold: the labelled pairs file.
        pred: the model's file in the same layout (its ids and ``<finding>_progression`` columns).
        draws: bootstrap draws (0: ``low`` and ``high`` are NaN).
        seed: the bootstrap's seed.
        rejections: when given, the rows of either file that could not be read are appended to it (each is
            left out of the scores, a gold one as no question, a predicted one as no answer).

    Returns:
        The finding rows in the gold file's column order, then the overall row.

    Raises:
        graph.formats.mscxrt.PairFileError: a file cannot be read at all.
        ValueError: a negative ``draws``.
    """
    g, p = read_pairs(gold), read_pairs(pred)
    if rejections is not None:
        rejections.extend(g.rejections + p.rejections)
    groups, subjects, truth, said, three = _questions(g, p)
    order = [f for f in g.findings if f in set(groups)] + [ALL]
    common = _majority(groups, truth, order)
    # per (patient, group) sums: the bootstrap weighs patients, so it needs no more than these
    patients = {s: i for i, s in enumerate(dict.fromkeys(subjects))}
    right, asked, usual = (np.zeros((len(patients), len(order))) for _ in range(3))
    column = {f: k for k, f in enumerate(order)}
    for f, s, t, a in zip(groups, subjects, truth, said, strict=True):
        for k in (column[f], column[ALL]):
            right[patients[s], k] += t == a
            asked[patients[s], k] += 1
            usual[patients[s], k] += t == common[order[k]]

    def accuracies(w: np.ndarray) -> np.ndarray:
        n = w @ asked
        return np.divide(w @ right, n, out=np.full(len(order), np.nan), where=n > 0)

    boot = cluster_bootstrap(len(patients), accuracies, draws=draws, seed=seed)
    chance = 1 / len(THREE if three else FIVE)
    rows = []
    for k, f in enumerate(order):
        n = int(asked[:, k].sum())
        low, high = boot.interval(k)
        rows.append({"group": f, "qtype": ALL, "n": n,
                     "accuracy": float(right[:, k].sum() / n) if n else float("nan"), "low": low, "high": high,
                     "chance": chance, "majority": float(usual[:, k].sum() / n) if n else float("nan")})
    return rows


def _majority(groups: list[str], truth: list[str], order: list[str]) -> dict[str, str]:
    """group -> its most common gold label (ties: the first in the label sets' order); ``all`` over all."""
    rank = {w: i for i, w in enumerate(THREE + FIVE)}
    out = {}
    for f in order:
        counts = Counter(t for x, t in zip(groups, truth, strict=True) if f == ALL or x == f)
        out[f] = min(counts, key=lambda w: (-counts[w], rank.get(w, 99))) if counts else ""
    return out
