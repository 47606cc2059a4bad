"""Baselines in the same harness as the GNN: fitted on the training pairs, scored on the same test pairs.

* :class:`MajorityClass`: the most frequent training label for every pair.
* :class:`PresenceRule`: absent -> present is ``new``, present -> absent is ``resolved``, anything else
  ``no change``. An observation counts as present when any source states it present or uncertain; a
  study that does not mention the finding counts as absent (as the reports' "no X" is often implicit).
* :class:`PairModel`: gradient-boosted trees (scikit-learn's ``HistGradientBoostingClassifier``, balanced
  class weights) on the pair's own features only: both observations' feature vectors (including their
  region embeddings), anatomy and finding (categorical) and the interval in days. No graph context.

Every baseline returns ``[N, 5]`` class probabilities in :data:`gnn.dataset.CLASSES` order.
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from gnn.dataset import CLASS_INDEX, CLASSES, ProgressionData
from gnn.features import stated_present, stated_uncertain


def _present(x: np.ndarray) -> np.ndarray:
    """``[N]`` bool: any source states present or uncertain."""
    return stated_present(x) | stated_uncertain(x)


class MajorityClass:
    """Predicts the training set's most frequent class (probability 1)."""

    name = "majority"

    def fit(self, data: ProgressionData, rows: np.ndarray) -> "MajorityClass":
        counts = np.bincount(data.pairs["label"].to_numpy()[rows], minlength=len(CLASSES))
        self.cls = int(counts.argmax())
        return self

    def predict_proba(self, data: ProgressionData, rows: np.ndarray) -> np.ndarray:
        p = np.zeros((len(rows), len(CLASSES)), np.float32)
        p[:, self.cls] = 1.0
        return p


class PresenceRule:
    """absent -> present: new; present -> absent: resolved; else no change (probability 1)."""

    name = "presence_rule"

    def fit(self, data: ProgressionData, rows: np.ndarray) -> "PresenceRule":
        return self

    def predict_proba(self, data: ProgressionData, rows: np.ndarray) -> np.ndarray:
        now, before = _present(data.x_cur[rows]), _present(data.x_prior[rows])
        cls = np.full(len(rows), CLASS_INDEX["no change"])
        cls[now & ~before] = CLASS_INDEX["new"]
        cls[~now & before] = CLASS_INDEX["resolved"]
        p = np.zeros((len(rows), len(CLASSES)), np.float32)
        p[np.arange(len(rows)), cls] = 1.0
        return p


class PairModel:
    """Gradient-boosted trees on the pair's own features (no graph context).

    Args:
        seed: random state of the trees.
        max_iter, learning_rate: boosting rounds and shrinkage.
    """

    name = "pair_gbt"

    def __init__(self, seed: int = 0, max_iter: int = 300, learning_rate: float = 0.06):
        self.seed, self.max_iter, self.learning_rate = seed, max_iter, learning_rate

    @staticmethod
    def features(data: ProgressionData, rows: np.ndarray) -> np.ndarray:
        """``[N, 2F + 3]``: x_cur, x_prior, anatomy index, finding index, log1p(days)."""
        a_ix = {n: i for i, n in enumerate(data.vocab.anatomy)}
        f_ix = {n: i for i, n in enumerate(data.vocab.findings)}
        p = data.pairs.iloc[rows]
        cat = np.stack([p["anatomy"].map(a_ix).to_numpy(), p["finding"].map(f_ix).to_numpy()], axis=1)
        return np.concatenate([data.x_cur[rows], data.x_prior[rows], cat.astype(np.float32),
                               np.log1p(data.days[rows])[:, None]], axis=1)

    def fit(self, data: ProgressionData, rows: np.ndarray) -> "PairModel":
        from sklearn.ensemble import HistGradientBoostingClassifier

        x = self.features(data, rows)
        y = data.pairs["label"].to_numpy()[rows]
        cats = np.zeros(x.shape[1], dtype=bool)
        cats[2 * data.num_features:2 * data.num_features + 2] = True
        self.model = HistGradientBoostingClassifier(
            max_iter=self.max_iter, learning_rate=self.learning_rate, class_weight="balanced",
            categorical_features=cats, random_state=self.seed, early_stopping=False)
        self.model.fit(x, y)
        return self

    def predict_proba(self, data: ProgressionData, rows: np.ndarray) -> np.ndarray:
        proba = self.model.predict_proba(self.features(data, rows))
        out = np.zeros((len(rows), len(CLASSES)), np.float32)
        out[:, self.model.classes_] = proba
        return out


class Baseline(Protocol):
    """What every baseline offers: fit on the training rows, then ``[N, 5]`` class probabilities."""

    def fit(self, data: ProgressionData, rows: np.ndarray) -> Baseline:
        """Fit on ``rows`` of ``data`` and return the fitted baseline."""
        ...

    def predict_proba(self, data: ProgressionData, rows: np.ndarray) -> np.ndarray:
        """Class probabilities of ``rows``, in :data:`gnn.dataset.CLASSES` order."""
        ...


BASELINES: dict[str, Callable[..., Baseline]] = {"majority": MajorityClass, "presence_rule": PresenceRule,
                                                 "pair_gbt": PairModel}
