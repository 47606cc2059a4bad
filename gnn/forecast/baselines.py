"""Baselines of the forecasting task (:mod:`gnn.forecast.rows`), each a probability that the next study states
the finding present, fitted on the training split only.

- ``always_absent``: no finding is present next (probability 0 everywhere): the most common answer, as
  most (pair, finding) rows are not present next. It ranks nothing, so both AUROCs are 0.5, and it never
  predicts onset or persistence, so its macro-F1 is what "stays absent" and "resolution" alone score.
- ``carry_forward``: the prior state persists (1 when the prior study has the finding, else 0). It ranks no
  onset above another, so its onset AUROC is 0.5 by construction: the floor every model must clear.
- ``rate_age_sex``: the training rate of "present next" per (finding, prior present, age decile, sex), with
  additive smoothing towards the (finding, prior present) rate; the population prior of the
  disease-progression literature.
- ``gbt``: gradient-boosted trees (scikit-learn's HistGradientBoostingClassifier, the finding as a
  categorical feature) on the history features of :data:`gnn.forecast.rows.FEATURES`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from gnn.forecast.rows import FEATURES, ForecastTable

SMOOTHING = 20.0  # pseudo-counts of the (finding, prior present) rate behind each age-sex cell
_PRIOR_PRESENT = FEATURES.index("state_present")
_AGE, _SEX = FEATURES.index("age"), FEATURES.index("sex_female")


def always_absent(_: ForecastTable) -> Callable[[np.ndarray], np.ndarray]:
    """Predict absent (0) for every row."""
    return lambda x: np.zeros(len(x), dtype=float)


def carry_forward(_: ForecastTable) -> Callable[[np.ndarray], np.ndarray]:
    """Predict the prior state."""
    return lambda x: x[:, _PRIOR_PRESENT].astype(float)


def rate_age_sex(table: ForecastTable) -> Callable[[np.ndarray], np.ndarray]:
    """Smoothed training rate of "present next" per (finding, prior present, age decile, sex)."""
    rows, x = table.part("train")
    frame = _cells(x).assign(y=rows["next_present"].to_numpy())
    coarse = frame.groupby(["finding", "prior"])["y"].agg(["sum", "count"])
    overall = frame["y"].mean() if len(frame) else 0.0
    base = (coarse["sum"] + overall) / (coarse["count"] + 1.0)
    fine = frame.groupby(["finding", "prior", "age", "sex"])["y"].agg(["sum", "count"])
    shrunk = fine.join(base.rename("base"), on=["finding", "prior"])
    rate = (shrunk["sum"] + SMOOTHING * shrunk["base"]) / (shrunk["count"] + SMOOTHING)

    def predict(x_new: np.ndarray) -> np.ndarray:
        cells = _cells(x_new)
        p = cells.join(rate.rename("p"), on=["finding", "prior", "age", "sex"])["p"]
        fallback = cells.join(base.rename("b"), on=["finding", "prior"])["b"].fillna(overall)
        return p.fillna(fallback).to_numpy(dtype=float)

    return predict


def _cells(x: np.ndarray) -> pd.DataFrame:
    """The cell keys of :func:`rate_age_sex`; a missing age or sex is a cell of its own (-1)."""
    return pd.DataFrame({"finding": x[:, -1].astype(int), "prior": x[:, _PRIOR_PRESENT].astype(int),
                         "age": np.nan_to_num(x[:, _AGE], nan=-1).astype(int),
                         "sex": np.nan_to_num(x[:, _SEX], nan=-1).astype(int)})


def gbt(table: ForecastTable, seed: int = 0, max_iter: int = 300) -> Callable[[np.ndarray], np.ndarray]:
    """Gradient-boosted trees on the history features, early-stopped on a tenth of the training rows."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    rows, x = table.part("train")
    model = HistGradientBoostingClassifier(max_iter=max_iter, learning_rate=0.1, early_stopping=True,
                                           validation_fraction=0.1, categorical_features=[x.shape[1] - 1],
                                           random_state=seed)
    model.fit(x, rows["next_present"].to_numpy())
    return lambda x_new: model.predict_proba(x_new)[:, 1]


BASELINES: dict[str, Callable[[ForecastTable], Callable[[np.ndarray], np.ndarray]]] = {
    "always absent": always_absent, "carry-forward": carry_forward, "rate by age and sex": rate_age_sex, "gradient-boosted trees": gbt}
