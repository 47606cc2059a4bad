"""Which inputs carry the next-study forecast: the trees and the graph forecaster refitted with groups of
inputs removed, scored on the validation patients only (the held-out patients are never read here).

Groups (:data:`GROUPS`, columns of :data:`gnn.forecast.rows.FEATURES`):

- ``own history``: the finding's state at the prior study and its earlier counts, share and recency;
- ``other findings``: how many other findings the prior study has present and, for the graph forecaster,
  attention across findings (each finding then attends to itself only: a per-finding network);
- ``age and sex``;
- ``follow-up``: the interval in follow-up steps (always one step between consecutive studies, as NIH
  ChestX-ray14 gives follow-up numbers, not dates) and the number of studies so far.

A removed column is set to 0 in every split, so the model sees a constant: for the trees no split can use
it; for the graph forecaster the standardised input is 0. What the finding is (the trees' categorical
feature, the graph's finding embedding) is never removed, so "own history only" still knows the finding,
and a model without any group is the per-finding rate.

Fit time is bounded by fitting on a share of the training patients (``train_fraction``, a fixed hash of
the patient id, so every variant sees the same patients) and capping the graph's epochs; the early
stopping of the graph forecaster reads the validation patients, as in :mod:`gnn.forecast.model`, which
flatters every graph variant alike.

Intervals: one patient bootstrap (:func:`graph.bootstrap.cluster_bootstrap`) shared by all variants (the same
draws), so besides each variant's 95 % interval the difference to the model with every input is paired:
``delta`` and its interval.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from gnn.forecast.evaluation import METRICS, Subsets
from gnn.forecast.rows import FEATURES, ForecastTable
from graph.bootstrap import DRAWS, cluster_bootstrap

GROUPS: dict[str, tuple[str, ...]] = {
    "own history": ("state_not_mentioned", "state_absent", "state_uncertain", "state_present", "n_present_before",
                    "n_absent_before", "share_present", "steps_since_first_present", "steps_since_last_present"),
    "other findings": ("other_findings_present",),
    "age and sex": ("age", "sex_female"),
    "follow-up": ("interval_steps", "n_studies"),
}
ALL_INPUTS = "all inputs"
OWN_ONLY = "own history only"
ABLATION_METRICS = ("onset_auroc", "resolution_auroc", "macro_f1")


def variants() -> dict[str, tuple[str, ...]]:
    """Variant name -> the removed groups: every input, each group removed alone, and own history only."""
    out: dict[str, tuple[str, ...]] = {ALL_INPUTS: ()}
    out.update({f"without {g}": (g,) for g in GROUPS})
    out[OWN_ONLY] = tuple(g for g in GROUPS if g != "own history")
    return out


def without(table: ForecastTable, groups: tuple[str, ...]) -> ForecastTable:
    """A copy of the table whose inputs of ``groups`` are 0 in every row.

    Raises:
        KeyError: an unknown group name.
    """
    x = table.x.copy()
    for g in groups:
        for name in GROUPS[g]:
            x[:, FEATURES.index(name)] = 0.0
    return ForecastTable(table.rows, x, table.findings)


def subsample_training(table: ForecastTable, fraction: float, seed: int = 0) -> ForecastTable:
    """The table with only ``fraction`` of its training patients (a SHA-256 of ``seed:patient_id``, so the
    choice is fixed per patient); validation and test rows are kept whole.

    Raises:
        ValueError: ``fraction`` outside (0, 1].
    """
    if not 0 < fraction <= 1:
        raise ValueError(f"train fraction {fraction}: expected a share in (0, 1]")
    if fraction == 1:
        return table
    patients = table.rows["patient_id"].unique()
    u = np.array([int(hashlib.sha256(f"sub{seed}:{p}".encode()).hexdigest()[:12], 16) / float(1 << 48)
                  for p in patients])
    kept = pd.Series(u < fraction, index=patients)
    keep = ((table.rows["split"] != "train") | table.rows["patient_id"].map(kept)).to_numpy()
    return ForecastTable(table.rows[keep].reset_index(drop=True), table.x[keep], table.findings)


@dataclass
class AblationResult:
    """Per (model, variant): the validation figures, their intervals and the paired difference to the
    model with every input (``delta``, ``delta_interval``), plus fit seconds and the table sizes."""

    point: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    interval: dict[tuple[str, str], dict[str, tuple[float, float]]] = field(default_factory=dict)
    delta: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    delta_interval: dict[tuple[str, str], dict[str, tuple[float, float]]] = field(default_factory=dict)
    seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    train_rows: int = 0
    val_rows: int = 0
    val_patients: int = 0


Maker = Callable[[ForecastTable], Callable[[np.ndarray], np.ndarray]]


def run_ablation(table: ForecastTable, models: dict[str, Callable[[tuple[str, ...]], Maker]],
                 train_fraction: float = 1.0, bootstrap: int = DRAWS, seed: int = 0,
                 log: Callable[[str], None] = lambda _: None, only: tuple[str, ...] | None = None) -> AblationResult:
    """Fit each model on each variant of :func:`variants` (training patients, subsampled) and score it on
    the validation patients with a shared patient bootstrap.

    Args:
        table: the forecasting rows with their patient split.
        models: name -> a function of the removed groups returning the forecaster to fit (so a model can
            drop more than columns, as the graph forecaster drops attention across findings).
        train_fraction: the share of training patients kept (0 < fraction <= 1), drawn with ``seed``.
        bootstrap: patient bootstrap draws of the validation scores and their differences.
        seed: seed of the training subsample and of the bootstrap.
        log: takes a line of progress per fitted model and variant.
        only: fit only these variants (``all inputs`` is always fitted: the differences are to it).

    Raises:
        ValueError: a bad ``train_fraction``; GnnError (from a model): nothing to fit.
    """
    table = subsample_training(table, train_fraction, seed)
    rows_va, _ = table.part("val")
    result = AblationResult(train_rows=int((table.rows["split"] == "train").sum()), val_rows=len(rows_va),
                            val_patients=int(rows_va["patient_id"].nunique()))
    probs: dict[tuple[str, str], np.ndarray] = {}
    for model, maker_for in models.items():
        for variant, groups in variants().items():
            if only is not None and variant not in only and variant != ALL_INPUTS:
                continue
            log(f"{model}: {variant}")
            started = time.perf_counter()
            masked = without(table, groups)
            predict = maker_for(groups)(masked)
            probs[(model, variant)] = np.clip(predict(masked.part("val")[1]), 0.0, 1.0)
            result.seconds[(model, variant)] = round(time.perf_counter() - started, 1)
    _paired_bootstrap(rows_va, probs, bootstrap, seed, result)
    return result


def _paired_bootstrap(rows: pd.DataFrame, probs: dict[tuple[str, str], np.ndarray], bootstrap: int, seed: int,
                      result: AblationResult) -> None:
    """Point figures, percentile intervals and paired differences to each model's ``all inputs`` variant."""
    subsets = Subsets(rows)
    for key, p in probs.items():
        result.point[key] = subsets.macro(p)[0]
    keys = list(probs)
    figures = [subsets.macro_draws(probs[key]) for key in keys]
    drawn = cluster_bootstrap(len(subsets.patients), lambda counts: np.hstack([f(counts) for f in figures]), bootstrap,
                              seed, batched=True)
    column = {(key, m): k * len(METRICS) + i for k, key in enumerate(keys) for i, m in enumerate(METRICS)}
    for model, variant in keys:
        full = (model, ALL_INPUTS)
        result.delta[(model, variant)] = {m: result.point[(model, variant)][m] - result.point[full][m]
                                          for m in METRICS}
        result.interval[(model, variant)] = {m: drawn.interval(column[((model, variant), m)]) for m in METRICS}
        result.delta_interval[(model, variant)] = {
            m: drawn.difference(column[((model, variant), m)], column[(full, m)]) for m in METRICS}


def ablation_rows(result: AblationResult, metrics: tuple[str, ...] = ABLATION_METRICS) -> list[dict[str, str]]:
    """One row per (model, variant): each metric as ``value [low, high]`` and its paired difference to the
    model with every input as ``+0.012 [+0.004, +0.020]``, for the CLI's table and the README."""
    out = []
    for key, point in result.point.items():
        row = {"model": key[0], "inputs": key[1]}
        for m in metrics:
            low, high = result.interval[key][m]
            row[m] = f"{point[m]:.3f} [{low:.3f}, {high:.3f}]"
            if key[1] != ALL_INPUTS:
                d, (dl, dh) = result.delta[key][m], result.delta_interval[key][m]
                row[f"{m} change"] = f"{d:+.3f} [{dl:+.3f}, {dh:+.3f}]"
            else:
                row[f"{m} change"] = ""
        out.append(row)
    return out


def ablation_models(config, max_epochs: int | None = None,
                    log: Callable[[str], None] = lambda _: None) -> dict[str, Callable[[tuple[str, ...]], Maker]]:
    """The trees and the graph forecaster (``config``: a :class:`gnn.forecast.model.ForecastGnnConfig`, its
    epochs capped at ``max_epochs``) as :func:`run_ablation` takes them."""
    from gnn.forecast.baselines import gbt
    from gnn.forecast.model import GRAPH_FORECASTER, gnn_forecaster

    if max_epochs is not None:
        config = config.model_copy(update={"epochs": min(config.epochs, max_epochs)})

    def graph(groups: tuple[str, ...]) -> Maker:
        return gnn_forecaster(config.model_copy(update={"attend_across": "other findings" not in groups}), log)

    return {"gradient-boosted trees": lambda _: gbt, GRAPH_FORECASTER: graph}
