"""gnn.forecast.draw_metrics: the bootstrap's batched AUROC, AP and macro-F1 are scikit-learn's, draw by draw."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from gnn.forecast.draw_metrics import MacroF1Draws, RankingDraws

CLUSTERS = 40


def _table(rng, n):
    cluster = rng.integers(0, CLUSTERS, n)
    counts = rng.integers(0, 3, size=(12, CLUSTERS)).astype(float)  # 0: a patient the draw did not take
    counts[0] = 1.0  # the first draw is the table itself
    return cluster, counts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranking_scores_match_scikit_learn_with_ties_and_undrawn_patients(seed):
    rng = np.random.default_rng(seed)
    n = 300
    y = (rng.random(n) < 0.3).astype(int)
    score = np.round(rng.random(n) * 10) / 10 + 0.2 * y  # rounded: many tied scores
    cluster, counts = _table(rng, n)
    auroc, ap = RankingDraws(y, score, cluster, CLUSTERS)(counts)
    for k, draw in enumerate(counts):
        w = draw[cluster]
        keep = w > 0
        assert auroc[k] == pytest.approx(roc_auc_score(y[keep], score[keep], sample_weight=w[keep]), abs=1e-12)
        assert ap[k] == pytest.approx(average_precision_score(y[keep], score[keep], sample_weight=w[keep]), abs=1e-12)
    assert 0.5 < auroc[0] < 1.0  # the shift above makes the positives rank higher


def test_a_draw_with_one_outcome_is_nan_as_scikit_learn_refuses_it():
    y, score, cluster = np.array([1, 1, 0, 0]), np.array([0.9, 0.8, 0.3, 0.1]), np.array([0, 1, 2, 3])
    auroc, ap = RankingDraws(y, score, cluster, 4)(np.array([[1.0, 2.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]))
    assert math.isnan(auroc[0]) and math.isnan(ap[0])
    assert auroc[1] == 1.0 and ap[1] == 1.0
    empty = RankingDraws(np.array([]), np.array([]), np.array([], dtype=int), 4)(np.ones((3, 4)))
    assert all(math.isnan(v) for part in empty for v in part)


def test_macro_f1_matches_scikit_learn_including_a_label_no_row_has():
    rng = np.random.default_rng(4)
    n = 400
    target = rng.integers(0, 3, n)  # label 3 never occurs: it scores 0 in the average
    predicted = np.where(rng.random(n) < 0.6, target, rng.integers(0, 3, n))
    cluster, counts = _table(rng, n)
    got = MacroF1Draws(target, predicted, [0, 1, 2, 3], cluster, CLUSTERS)(counts)
    for k, draw in enumerate(counts):
        want = f1_score(target, predicted, labels=[0, 1, 2, 3], average="macro", zero_division=0,
                        sample_weight=draw[cluster])
        assert got[k] == pytest.approx(want, abs=1e-12)
