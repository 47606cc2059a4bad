"""Scoring forecasts of the next study (:mod:`gnn.forecast.rows`), with bootstrap intervals over patients.

Per finding:
- onset AUROC / AUPRC: among (pair, finding) rows whose prior study does not have the finding, how well the
  probability of "present next" ranks the onsets;
- resolution AUROC / AUPRC: among rows whose prior study has it, how well 1 - that probability ranks the
  resolutions.
Macro figures average the findings whose subset holds both outcomes (others are left out and counted).
Macro-F1 is over the four targets (onset, resolution, persistence, stays absent), each row's predicted class
being its prior state and "present next" at probability >= 0.5; scikit-learn's ``f1_score`` with all four
labels given, so a class missing from a split scores 0 rather than vanishing from the average.

Intervals: the 2.5th and 97.5th percentiles over ``bootstrap`` resamples of the split's patients with
replacement (:func:`graph.bootstrap.cluster_bootstrap`; default :data:`graph.bootstrap.DRAWS`), every row of a
drawn patient drawn with it; the draws' figures are the same definitions computed for many draws at once
(:mod:`gnn.forecast.draw_metrics`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from gnn.forecast.draw_metrics import MacroF1Draws, RankingDraws
from gnn.forecast.rows import ONSET, PERSISTENCE, RESOLUTION, STAYS_ABSENT
from graph.bootstrap import DRAWS, cluster_bootstrap

TARGETS = (ONSET, RESOLUTION, PERSISTENCE, STAYS_ABSENT)  # macro-F1's labels, each counted even when absent
METRICS = ("onset_auroc", "onset_auprc", "resolution_auroc", "resolution_auprc", "macro_f1")


@dataclass
class Scores:
    """One model on one split: macro figures with their intervals, and the per-finding figures.

    Attributes:
        point: metric -> value on the split (NaN when no finding qualifies).
        interval: metric -> (low, high) 95 % percentile bootstrap interval.
        per_finding: one row per finding: finding, onset_auroc, onset_auprc, resolution_auroc,
            resolution_auprc, onsets, resolutions (counts of positives).
        findings_scored: metric -> number of findings in its macro average.
    """

    point: dict[str, float]
    interval: dict[str, tuple[float, float]] = field(default_factory=dict)
    per_finding: pd.DataFrame | None = None
    findings_scored: dict[str, int] = field(default_factory=dict)


def _subset_scores(y: np.ndarray, score: np.ndarray) -> tuple[float, float]:
    if len(y) == 0 or y.min() == y.max():
        return np.nan, np.nan
    return roc_auc_score(y, score), average_precision_score(y, score)


class Subsets:
    """The rows of each finding's onset and resolution subsets, found once for every bootstrap draw."""

    def __init__(self, rows: pd.DataFrame):
        self.prior = rows["prior_present"].to_numpy()
        self.next = rows["next_present"].to_numpy()
        self.target = rows["target"].to_numpy()
        # the patients in first-seen order: cluster_bootstrap's own order, so the draws are those of
        # cluster_bootstrap(rows["patient_id"], ...)
        self.codes, self.patients = pd.factorize(np.asarray(rows["patient_id"], dtype=object), sort=False)
        self.by_finding = {f: (idx[self.prior[idx] == 0], idx[self.prior[idx] == 1])
                           for f, idx in rows.groupby("finding", sort=True).indices.items()}

    def per_finding(self, p: np.ndarray) -> pd.DataFrame:
        out = []
        for finding, (onset, resolution) in self.by_finding.items():
            o_auc, o_ap = _subset_scores(self.next[onset], p[onset])
            r_auc, r_ap = _subset_scores(1 - self.next[resolution], 1 - p[resolution])
            out.append({"finding": finding, "onset_auroc": o_auc, "onset_auprc": o_ap, "resolution_auroc": r_auc,
                        "resolution_auprc": r_ap, "onsets": int(self.next[onset].sum()),
                        "resolutions": int((1 - self.next[resolution]).sum())})
        return pd.DataFrame(out)

    def macro_f1(self, p: np.ndarray) -> float:
        return float(f1_score(self.target, self.predicted(p), labels=list(TARGETS), average="macro",
                              zero_division=0))

    def macro(self, p: np.ndarray) -> tuple[dict[str, float], pd.DataFrame]:
        table = self.per_finding(p)
        point = {m: float(table[m].mean()) if table[m].notna().any() else np.nan for m in METRICS[:4]}
        point["macro_f1"] = self.macro_f1(p)
        return point, table

    def finding_draws(self, p: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """For a bootstrap over :attr:`patients` (``cluster_bootstrap(len(subsets.patients), ...,
        batched=True)``): counts of shape (draws, patients) -> each finding's onset AUROC, onset AUPRC,
        resolution AUROC, resolution AUPRC in each draw, shape (draws, findings, 4), in :attr:`by_finding`'s
        order (:mod:`gnn.forecast.draw_metrics`)."""
        n = len(self.patients)
        parts = [(RankingDraws(self.next[onset], p[onset], self.codes[onset], n),
                  RankingDraws(1 - self.next[resolution], 1 - p[resolution], self.codes[resolution], n))
                 for onset, resolution in self.by_finding.values()]

        def figures(counts: np.ndarray) -> np.ndarray:
            out = np.empty((len(counts), len(parts), 4))
            for k, (onset, resolution) in enumerate(parts):
                out[:, k, :2] = np.column_stack(onset(counts))
                out[:, k, 2:] = np.column_stack(resolution(counts))
            return out
        return figures

    def macro_draws(self, p: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """As :meth:`finding_draws`: counts -> :data:`METRICS` in each draw, shape (draws, 5), what
        :meth:`macro` gives the table with each row weighted by its patient's count."""
        findings = self.finding_draws(p)
        f1 = MacroF1Draws(self.target, self.predicted(p), list(TARGETS), self.codes, len(self.patients))

        def figures(counts: np.ndarray) -> np.ndarray:
            with warnings.catch_warnings():  # a draw where no finding qualifies: NaN, as macro() gives
                warnings.simplefilter("ignore", RuntimeWarning)
                means = np.nanmean(findings(counts), axis=1)
            return np.column_stack([means, f1(counts)])
        return figures

    def predicted(self, p: np.ndarray) -> np.ndarray:
        """Each row's predicted target: its prior state, and "present next" at ``p >= 0.5``."""
        will = p >= 0.5
        return np.where(self.prior == 1, np.where(will, PERSISTENCE, RESOLUTION), np.where(will, ONSET, STAYS_ABSENT))


def per_finding(rows: pd.DataFrame, p: np.ndarray) -> pd.DataFrame:
    """Onset and resolution AUROC / AUPRC for each finding of ``rows`` (NaN where a subset has one outcome)."""
    return Subsets(rows).per_finding(np.asarray(p, dtype=float))


def macro_f1(rows: pd.DataFrame, p: np.ndarray) -> float:
    """Macro-F1 over the four targets, predicted from the prior state and ``p >= 0.5``."""
    return Subsets(rows).macro_f1(np.asarray(p, dtype=float))


def score(rows: pd.DataFrame, p: np.ndarray, bootstrap: int = DRAWS, seed: int = 0) -> Scores:
    """Every figure of the module docstring for one model's probabilities ``p`` (one per row of ``rows``).
    A bootstrap draw weighs each row by how often its patient was drawn.

    Raises:
        ValueError: ``p`` and ``rows`` differ in length, or ``p`` holds values outside [0, 1] or NaN.
    """
    p = np.asarray(p, dtype=float)
    if len(p) != len(rows):
        raise ValueError(f"{len(p)} probabilities for {len(rows)} rows")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("probabilities must lie in [0, 1]")
    subsets = Subsets(rows)
    point, table = subsets.macro(p)
    scored = {m: int(table[m].notna().sum()) for m in METRICS[:4]}
    drawn = cluster_bootstrap(len(subsets.patients), subsets.macro_draws(p), bootstrap, seed, batched=True)
    interval = {m: drawn.interval(i) for i, m in enumerate(METRICS)}
    return Scores(point, interval, table, scored)


def per_finding_intervals(rows: pd.DataFrame, p: np.ndarray, bootstrap: int = DRAWS, seed: int = 0) -> pd.DataFrame:
    """:func:`per_finding` with a 95 % percentile interval over ``bootstrap`` patient resamples for each
    finding's onset and resolution AUROC (columns ``onset_auroc_low`` / ``_high``, ``resolution_auroc_low`` /
    ``_high``; NaN where no draw had both outcomes).

    Raises:
        ValueError: as :func:`score`.
    """
    p = np.asarray(p, dtype=float)
    if len(p) != len(rows):
        raise ValueError(f"{len(p)} probabilities for {len(rows)} rows")
    subsets = Subsets(rows)
    table = subsets.per_finding(p)
    scored = ("onset_auroc", "resolution_auroc")
    # the AUROCs (columns 0 and 2 of per_finding_draws), onset ones first
    findings = subsets.finding_draws(p)
    drawn = cluster_bootstrap(len(subsets.patients), lambda counts: findings(counts)[:, :, [0, 2]].transpose(
        0, 2, 1).reshape(len(counts), -1), bootstrap, seed, batched=True)
    for k, m in enumerate(scored):
        part = slice(k * len(table), (k + 1) * len(table))
        low, high = (drawn.low[part], drawn.high[part]) if bootstrap else (np.nan, np.nan)
        table[f"{m}_low"], table[f"{m}_high"] = low, high
    return table
