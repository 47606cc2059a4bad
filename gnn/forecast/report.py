"""One harness for every forecaster of the next study: fit on the training patients, score on the
validation patients (the development figures) and the test patients (held out), with bootstrap intervals.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from gnn.forecast.baselines import BASELINES
from gnn.forecast.evaluation import Scores, score
from gnn.forecast.rows import CLASSES, ForecastTable
from graph.bootstrap import DRAWS

Forecaster = Callable[[ForecastTable], Callable[[np.ndarray], np.ndarray]]
SPLITS = ("val", "test")


@dataclass
class ForecastReport:
    """Scores per model and split, with the table's size and each model's fitting seconds."""

    scores: dict[str, dict[str, Scores]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    patients: dict[str, int] = field(default_factory=dict)
    targets: dict[str, dict[str, int]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """JSON-ready: per model and split, each metric's value and interval, and per-finding rows."""
        return {"rows": self.rows, "patients": self.patients, "targets": self.targets, "seconds": self.seconds,
                "models": {model: {split: {"point": s.point, "interval": s.interval,
                                           "findings_scored": s.findings_scored,
                                           "per_finding": [] if s.per_finding is None
                                           else s.per_finding.to_dict(orient="records")}
                                   for split, s in by_split.items()}
                           for model, by_split in self.scores.items()}}


def evaluate_forecasters(table: ForecastTable, forecasters: dict[str, Forecaster] | None = None,
                         bootstrap: int = DRAWS, seed: int = 0, fitted: dict | None = None) -> ForecastReport:
    """Fit each forecaster (default: :data:`gnn.forecast.baselines.BASELINES`) on the training split and
    score it on validation and test; ``fitted``, when given, receives each name's fitted predict function.

    Raises:
        GnnError (from the table): no rows; ValueError: a forecaster returned invalid probabilities.
    """
    report = ForecastReport()
    for split in ("train", *SPLITS):
        rows, _ = table.part(split)
        report.rows[split] = len(rows)
        report.patients[split] = rows["patient_id"].nunique()
        counts = rows["target"].value_counts()
        report.targets[split] = {name: int(counts.get(i, 0)) for i, name in enumerate(CLASSES)}
    for name, make in (forecasters or BASELINES).items():
        started = time.perf_counter()
        predict = make(table)
        if fitted is not None:
            fitted[name] = predict
        report.scores[name] = {}
        for split in SPLITS:
            rows, x = table.part(split)
            report.scores[name][split] = score(rows, predict(x), bootstrap=bootstrap, seed=seed)
        report.seconds[name] = round(time.perf_counter() - started, 2)
    return report


def format_cell(s: Scores, metric: str) -> str:
    """``0.712 [0.690, 0.733]``; ``-`` where no finding qualified."""
    value = s.point.get(metric, np.nan)
    if not np.isfinite(value):
        return "-"
    low, high = s.interval.get(metric, (np.nan, np.nan))
    return f"{value:.3f} [{low:.3f}, {high:.3f}]" if np.isfinite(low) else f"{value:.3f}"


TABLE_METRICS = ("onset_auroc", "resolution_auroc", "macro_f1")  # AUPRC: in the JSON report


def table_rows(report: ForecastReport, metrics: tuple[str, ...] = TABLE_METRICS) -> list[dict[str, str]]:
    """One row per (model, split: ``val`` = development, ``test`` = held out) with each macro metric as
    text, for the CLI's table and the README."""
    return [{"model": model, "split": split, **{m: format_cell(s, m) for m in metrics}}
            for model, by_split in report.scores.items() for split, s in by_split.items()]
