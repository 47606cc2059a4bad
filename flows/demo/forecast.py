"""The demo's stage 6 forecaster: the graph forecaster of ``cxrkg forecast`` (:mod:`gnn.forecast.model`),
small and trained in the demo on NIH patients read from the graph it loaded, so the CXRTrek section can show
its stage 6 answers beside the gold ones (:mod:`flows.demo.answers`).

The shown patient is held out: the forecaster is trained on other NIH patients only (a seeded draw of
:data:`TRAIN_PATIENTS` of those with two or more studies, from the NIH input's ``metadata.csv``), early-stopped
on the validation ones among them, as ``cxrkg forecast`` does. Its answers for the shown study read the
patient's studies up to and including that one (:func:`gnn.forecast.cxrtrek_answer.forecast_answers`, as
``cxrkg cxrtrek answer`` does). torch and the gnn package load here, when the section runs, never with the
CLI.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

#: NIH patients (two or more studies each) the demo's forecaster is trained on
TRAIN_PATIENTS = 1500
#: the demo's configuration: the shipped one (gnn/configs/forecast.yaml) narrower and shorter, for seconds
#: of training on two cores instead of minutes
SMALL_CONFIG: dict[str, Any] = {"hidden": 16, "heads": 2, "layers": 1, "epochs": 8, "patience": 2, "batch_pairs": 256}


@dataclass
class DemoForecaster:
    """A forecaster trained by :func:`train_forecaster`.

    Attributes:
        forecaster: a ``gnn.forecast.model.TrainedGraphForecaster``. patients: the patients it was trained
        on (train and validation). seconds: wall seconds in all (importing torch and the gnn package,
        reading, training); read_seconds: of reading the patients' studies and states from the graph;
        train_seconds: of training.
    """

    forecaster: Any
    patients: list[str]
    seconds: float
    read_seconds: float
    train_seconds: float


def training_patients(nih: Path, held_out: str, limit: int = TRAIN_PATIENTS, seed: int = 0) -> list[str]:
    """At most ``limit`` patients of the NIH input folder ``nih`` (its ``metadata.csv``, one row per image =
    study) with two or more studies, ``held_out`` never among them, drawn with ``seed``; sorted.

    Raises:
        OSError: ``nih/metadata.csv`` cannot be read.
    """
    import numpy as np
    import pandas as pd

    counts = pd.read_csv(nih / "metadata.csv", dtype=str, usecols=["subject_id"])["subject_id"].value_counts()
    ids = sorted(str(p) for p in counts.index[counts >= 2] if str(p) != str(held_out))
    if len(ids) > limit:
        ids = [str(p) for p in np.random.default_rng(seed).choice(ids, size=limit, replace=False)]
    return sorted(ids)


def train_forecaster(store, patients: list[str], **config: Any) -> DemoForecaster:
    """Train the graph forecaster (:data:`SMALL_CONFIG`, updated by ``config``) on the study pairs of
    ``patients`` read from the graph (the snapshot's tables, :func:`gnn.forecast.compare.patient_tables`),
    their ``train`` split fitted and their ``val`` split used for early stopping (:func:`gnn.splits.split_of`).

    Raises:
        ImportError: torch (the ``gnn`` extra) is not installed.
        gnn.errors.GnnError: no patient has two studies and a present finding.
        graph.store.GraphUnavailable: the server cannot be reached.
    """
    started = time.perf_counter()
    from gnn.forecast.compare import patient_tables
    from gnn.forecast.model import ForecastGnnConfig, gnn_forecaster
    from gnn.forecast.rows import build_forecast_table

    read = time.perf_counter()
    studies, states = patient_tables(store, patients)
    train = time.perf_counter()
    table = build_forecast_table(studies, states)
    with _one_thread():
        forecaster = gnn_forecaster(ForecastGnnConfig(**{**SMALL_CONFIG, **config}))(table)
    forecaster.model_version = "demo (trained in the demo, not saved)"
    done = time.perf_counter()
    return DemoForecaster(forecaster, sorted(studies["patient_id"].unique()), done - started, train - read,
                          done - train)


def stage6_forecasts(store, sample: dict[str, Any], forecaster: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """The forecaster's answers to the stage 6 questions of one CXRTrek-format ``sample``, keyed by the
    question's (``target``, ``qtype``); a finding the forecaster does not forecast has none.

    Raises:
        graph.store.GraphUnavailable: the server cannot be reached.
    """
    from gnn.forecast.cxrtrek_answer import forecast_answers
    from graph.formats.cxrtrek import items_of

    with _one_thread():
        answered, _ = forecast_answers(store, [sample], forecaster)
    return {(c["target"], c["qtype"]): c for s in answered for c in items_of(s)}


@contextmanager
def _one_thread() -> Iterator[None]:
    """torch on one thread inside the block. The demo's model is small (batches of 256 x 17 x 16): a second
    intra-op thread saves nothing, and on a loaded machine its threads wait at every barrier for one that is
    descheduled: 6 epochs took 49-85 s on two threads and 2.3-3.6 s on one (2 cores, load average 8-11)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
