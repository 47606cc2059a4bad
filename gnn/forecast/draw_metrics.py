"""AUROC, average precision and macro-F1 for many draws of a cluster bootstrap at once.

A draw of the patient bootstrap takes each patient ``c`` some number of times, ``counts[draw, c]``, and weighs
every row of that patient by it (:func:`graph.bootstrap.cluster_bootstrap` with an int of clusters and
``batched=True``). Each figure here is built once for a table (the sort by score, the rows summed per patient
and distinct score) and then takes a counts matrix of shape (draws, patients) and returns one value per draw:
a sparse product and a cumulative sum instead of a scikit-learn call per draw (each of which re-sorts and
re-validates its input). ``python benchmarks/bootstrap_draws.py`` measures both on the same draws.

The definitions are scikit-learn's with ``sample_weight`` = each row's patient count (scikit-learn 1.9 user
guide, "Receiver operating characteristic", "Precision, recall and F-measures"):

- AUROC: the trapezoid area under the ROC curve whose points are the distinct scores taken as thresholds
  (``roc_auc_score``); tied scores form one point, so a tie counts one half.
- Average precision: the sum over those thresholds of the recall gained times the precision there
  (``average_precision_score``: AP = sum_n (R_n - R_(n-1)) P_n, no interpolation).
- Macro-F1: the mean over the given labels of 2 TP / (2 TP + FP + FN), 0 where that is 0 / 0
  (``f1_score(..., average="macro", zero_division=0)``).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse


def _per_cluster(cluster: np.ndarray, column: np.ndarray, values: np.ndarray, clusters: int,
                 columns: int) -> sparse.csr_matrix:
    """The sums of ``values`` per (column, cluster), as a sparse (columns, clusters) matrix."""
    return sparse.csr_matrix((values, (column, cluster)), shape=(columns, clusters))


class RankingDraws:
    """AUROC and average precision of a fixed score ranking the rows with ``y == 1``, for any draws.

    Args:
        y: 0 / 1 outcome per row, shape (n,).
        score: the ranking score per row, shape (n,) (higher: more likely 1).
        cluster: each row's cluster (patient) code in ``[0, clusters)``, shape (n,).
        clusters: the number of clusters.
    """

    def __init__(self, y: np.ndarray, score: np.ndarray, cluster: np.ndarray, clusters: int):
        score = np.asarray(score, dtype=float)
        distinct, group = np.unique(-score, return_inverse=True)  # group 0: the highest score
        positive = np.asarray(y, dtype=float)
        cluster = np.asarray(cluster)
        self._pos = _per_cluster(cluster, group, positive, clusters, len(distinct))
        self._neg = _per_cluster(cluster, group, 1.0 - positive, clusters, len(distinct))

    def __call__(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(auroc, ap), each shape (draws,), for ``counts`` of shape (draws, clusters): NaN in a draw whose
        weighted rows hold one outcome only (where scikit-learn refuses to score)."""
        counts = np.asarray(counts, dtype=float)
        if self._pos.shape[0] == 0:
            nan = np.full(len(counts), np.nan)
            return nan, nan.copy()
        pos = (self._pos @ counts.T).T  # (draws, distinct scores), best score first
        neg = (self._neg @ counts.T).T
        tp, fp = np.cumsum(pos, axis=1), np.cumsum(neg, axis=1)
        p_total, n_total = tp[:, -1], fp[:, -1]
        scorable = (p_total > 0) & (n_total > 0)
        called = tp + fp
        with np.errstate(divide="ignore", invalid="ignore"):
            auroc = (neg * (2 * tp - pos)).sum(axis=1) / (2 * p_total * n_total)
            precision = np.where(called > 0, tp / np.where(called > 0, called, 1.0), 0.0)
            ap = (pos * precision).sum(axis=1) / p_total
        return np.where(scorable, auroc, np.nan), np.where(scorable, ap, np.nan)


class MacroF1Draws:
    """Macro-F1 of fixed predictions against the targets over ``labels`` (a label absent from both scores 0),
    for any draws.

    Args:
        target: the true class per row, shape (n,).
        predicted: the predicted class per row, shape (n,).
        labels: the classes averaged over, each one counted even where no row has it.
        cluster: each row's cluster code, shape (n,).
        clusters: the number of clusters.
    """

    def __init__(self, target: np.ndarray, predicted: np.ndarray, labels: list[int], cluster: np.ndarray,
                 clusters: int):
        target, predicted = np.asarray(target), np.asarray(predicted)
        columns = []
        for label in labels:
            truth, said = target == label, predicted == label
            columns += [truth & said, truth, said]
        per_row = np.column_stack(columns).astype(float)  # (n, 3 per label)
        self._sums = np.zeros((clusters, per_row.shape[1]))
        np.add.at(self._sums, np.asarray(cluster), per_row)

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        """Shape (draws,) for ``counts`` of shape (draws, clusters)."""
        sums = np.asarray(counts, dtype=float) @ self._sums
        tp, true, said = sums[:, 0::3], sums[:, 1::3], sums[:, 2::3]
        denominator = true + said  # 2 TP + FP + FN
        f1 = np.where(denominator > 0, 2 * tp / np.where(denominator > 0, denominator, 1.0), 0.0)
        return f1.mean(axis=1)
