"""Out-of-fold predictions: every patient's pairs scored by a progression model that never saw the patient.

The patients are cut into ``folds`` (:func:`gnn.splits.fold_of`). For each fold a model is trained
(:func:`gnn.training.train_model`) on the other folds' patients, early-stopped on a validation share of
them (:data:`VAL_FRACTION`), and scores the fold's pairs; the folds'
predictions together cover every patient once (cross-fitting; Chernozhukov et al., Econometrics Journal
2018, use the name for the same scheme). What a pair's row says is what ``cxrkg predict`` says
(:func:`gnn.prediction.prediction_frame`): pairs present or uncertain in either study, ``stated`` where
the graph states a change, which ``predict --write-back`` would leave alone.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace

import pandas as pd

from gnn.dataset import ProgressionData
from gnn.prediction import prediction_frame
from gnn.splits import fold_of
from gnn.training import TrainConfig, TrainResult, predict_proba, train_model

#: the share of a fold's training patients kept for early stopping
VAL_FRACTION = 0.2


@dataclass
class CrossFit:
    """Out-of-fold predictions and the models behind them.

    Attributes:
        predictions: as :func:`gnn.prediction.prediction_frame`, every patient's kept pairs, with a
            ``fold`` column (the fold whose model scored the pair, never trained on its patient).
        results: per fold, its model's training result (:class:`gnn.training.TrainResult`).
        trained_on: per fold, the patients its model was fitted or early-stopped on.
        seconds: wall seconds of the training and scoring.
    """

    predictions: pd.DataFrame
    results: list[TrainResult] = field(default_factory=list)
    trained_on: list[set[str]] = field(default_factory=list)
    seconds: float = 0.0


def fold_split(data: ProgressionData, fold: int, folds: int, seed: int = 0) -> ProgressionData:
    """``data`` with its pairs' ``split`` set for one fold: the fold's patients ``test``; of the others,
    :data:`VAL_FRACTION` of those with a labelled pair (at least one; drawn by a hash of seed and patient
    id) ``val``, the rest ``train``. The samples are shared."""
    patients = data.pairs["patient_id"].to_numpy()
    test = {p for p in set(patients) if fold_of(p, folds, seed) == fold}
    labelled = sorted(set(patients[data.labelled()]) - test,
                      key=lambda p: hashlib.sha256(f"val:{seed}:{p}".encode()).hexdigest())
    val = set(labelled[:max(1, round(VAL_FRACTION * len(labelled)))])
    split = ["test" if p in test else "val" if p in val else "train" for p in patients]
    return replace(data, pairs=data.pairs.assign(split=split))


def out_of_fold_predictions(data: ProgressionData, tables: dict, config: TrainConfig, folds: int = 2,
                            seed: int = 0, device: str = "cpu") -> CrossFit:
    """Train one model per fold on the other folds' patients and score the fold's pairs with it.

    Args:
        data: the dataset of every patient (:func:`gnn.dataset.build`).
        tables: the tables ``data`` was built from (for the stated pairs).
        config: the training configuration of every fold's model.
        folds: how many folds (2 or more).
        seed: of the folds and of the validation split.
        device: the torch device.

    Raises:
        ValueError: ``folds`` under 2.
        gnn.errors.GnnError: a fold's training patients have no labelled training or validation pair.
    """
    started = time.perf_counter()
    frames, results, trained_on = [], [], []
    for fold in range(folds):
        split = fold_split(data, fold, folds, seed)
        result = train_model(split, config, device=device)
        test = split.sample_indices("test", labelled_only=False)
        if test:
            frame, _ = prediction_frame(split, *predict_proba(result.model, split, test, device=device), tables)
            frames.append(frame.assign(fold=fold))
        results.append(result)
        trained_on.append(set(split.pairs.loc[split.pairs["split"] != "test", "patient_id"]))
    predictions = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return CrossFit(predictions, results, trained_on, time.perf_counter() - started)
