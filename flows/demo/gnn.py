"""The demo's progression GNN: the model of ``cxrkg train`` (:mod:`gnn.training`), small and trained in the demo
on the synthetic cohort it loaded, so the worsening answer can show what the model's edges add to the stated
ones (reports state only some changes; ``cxrkg predict --write-back`` fills the others as ``gnn`` edges).

No scored patient is in the training set of the model that scores it: the cohort's patients are cut into
:data:`FOLDS` folds and each fold's pairs are scored by a model trained on the other folds' patients
(:func:`gnn.cross_fit.out_of_fold_predictions`), so every patient gets the edges that ``predict
--write-back`` would write for a patient the model never saw. The predictions stay in memory: the graph is
not changed. torch and the gnn package load here, when the part runs, never with the CLI.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.demo.forecast import _one_thread

#: folds of the cohort's patients: each fold is scored by a model trained on the others
FOLDS = 2
#: the demo's configuration: the shipped one (gnn/configs/gnn.yaml) narrower and shorter, for seconds of
#: training on one core instead of minutes; set before any run and not tuned on the cohort it scores (its
#: weight average is off: 0.99 spans about 100 steps, more than a short run on 100 patients takes)
SMALL_CONFIG: dict[str, Any] = {"hidden": 32, "layers": 2, "epochs": 12, "patience": 4, "lr": 0.01,
                                "ema_decay": 0.0}
#: the synthetic cohort's image metadata (graph.synth), one row per image with its patient
METADATA = "mimic-cxr-2.0.0-metadata.csv"


@dataclass
class DemoGnn:
    """What :func:`gnn_changes` made.

    Attributes:
        predictions: the unstated pairs' predicted changes (:func:`gnn.prediction.prediction_frame`'s rows
            whose ``stated`` is false, with their ``fold``). cross_fit: the :class:`gnn.cross_fit.CrossFit`.
        patients: the cohort's patients read from the graph. seconds: wall seconds in all (importing torch and
        the gnn package, reading, building the samples, training and scoring); read_seconds: of reading the
        patients' rows; train_seconds: of training and scoring.
    """

    predictions: Any
    cross_fit: Any
    patients: int
    seconds: float
    read_seconds: float
    train_seconds: float


def cohort_patients(cohort: Path) -> list[str]:
    """The patients of the synthetic cohort in ``cohort`` (its image metadata CSV), sorted.

    Raises:
        OSError: the CSV cannot be read.
    """
    import pandas as pd

    return sorted(pd.read_csv(cohort / METADATA, dtype=str, usecols=["subject_id"])["subject_id"].unique())


def gnn_changes(store, patients: list[str], **config: Any) -> DemoGnn:
    """Out-of-fold predictions of the progression GNN (:data:`SMALL_CONFIG`, updated by ``config``) for the
    unstated pairs of ``patients``, read from the graph (:func:`gnn.export.read_graph_tables`).

    Raises:
        ImportError: torch or PyG (the ``gnn`` extra) is not installed.
        gnn.errors.GnnError: the patients are not in the graph, or a fold has no labelled pairs to train on.
        graph.store.GraphUnavailable: the server cannot be reached.
    """
    started = time.perf_counter()
    from gnn.cross_fit import out_of_fold_predictions
    from gnn.dataset import build
    from gnn.export import read_graph_tables
    from gnn.training import TrainConfig

    read = time.perf_counter()
    graph = read_graph_tables(store, patients)
    data = build(graph)
    train = time.perf_counter()
    with _one_thread():
        fitted = out_of_fold_predictions(data, graph.tables, TrainConfig(**{**SMALL_CONFIG, **config}), FOLDS)
    done = time.perf_counter()
    unstated = fitted.predictions[~fitted.predictions["stated"]].reset_index(drop=True)
    return DemoGnn(unstated, fitted, graph.patients, done - started, train - read, done - train)


def worsened_pairs(predictions, finding: str, patients: set[str]) -> set[tuple[str, str]]:
    """(study_id, anatomy) of the ``predictions`` of ``finding`` whose change is ``worsened``, of ``patients``."""
    p = predictions[(predictions["finding"] == finding) & (predictions["change"] == "worsened")
                    & predictions["patient_id"].isin(patients)]
    return set(zip(p["study_id"], p["anatomy"], strict=True))


def precision_recall(got: set, worse: set, up: set) -> tuple[float | None, float | None]:
    """Precision of ``got`` against ``up`` and recall of ``worse`` by it (see :func:`flows.demo.cohort.worsening_agreement`);
    None where the denominator is empty."""
    return (len(got & up) / len(got) if got else None, len(got & worse) / len(worse) if worse else None)


@dataclass
class CohortWorsenings:
    """The cohort's worsenings of one finding per (study, anatomy), over ``patients`` (those with a true
    worsening): the graph's stated ones, the truly worsened, the truly worsened or new."""

    patients: list[str]
    got: set
    worse: set
    up: set


def worsening_lines(cohort: Path, stated: CohortWorsenings, finding: str) -> list[str]:
    """The worsening agreement of ``finding`` by the stated edges together with the GNN's edges of the unstated
    pairs (:func:`gnn_changes`: each patient's from a model trained on the cohort's other patients), with the
    precision and recall of each and whether the GNN's edges helped, then a line on how the GNN was trained;
    one line saying why instead when they cannot be had (torch missing, nothing to train on)."""
    from flows.demo.answers import figure
    from graph.errors import CxrkgError
    from graph.store import shared_store

    try:
        made = gnn_changes(shared_store(), cohort_patients(cohort))
    except ImportError as exc:
        return [f"with a progression GNN's edges: not shown ({exc.name or exc} is not installed: pip install "
                "'cxrkg[gnn]')"]
    except (CxrkgError, OSError) as exc:
        return [f"with a progression GNN's edges: not shown ({type(exc).__name__}: {exc})"]
    added = worsened_pairs(made.predictions, finding, set(stated.patients)) - stated.got
    both = stated.got | added
    (p0, r0), (p1, r1) = (precision_recall(stated.got, stated.worse, stated.up),
                          precision_recall(both, stated.worse, stated.up))
    verdict = ""
    if p0 is not None and r0 is not None and p1 is not None and r1 is not None:
        gain, loss = r1 - r0, p0 - p1
        verdict = (f"; its edges add more recall ({gain:+.3f}) than they cost precision ({-loss:+.3f})" if gain >= loss
                   else f"; its edges cost more precision ({-loss:+.3f}) than they add recall ({gain:+.3f})")
    c = made.cross_fit.results[0].config
    epochs = "/".join(str(len(r.history)) for r in made.cross_fit.results)
    trained = "/".join(f"{len(p):,}" for p in made.cross_fit.trained_on)
    return [f"with a progression GNN's edges of the unstated pairs (`cxrkg predict --write-back`): {len(both)} "
            f"({len(added)} from the GNN), {len(stated.worse)} true; precision {figure(p1)}, recall {figure(r1)} "
            f"(stated only {figure(p0)}, {figure(r0)}){verdict}",
            f"  GNN: `cxrkg train`'s model, small ({c.model}, hidden {c.hidden}, {c.layers} layers, {epochs} epochs), "
            f"trained here {FOLDS} times, each on the {trained} patients of the other "
            f"{'fold' if FOLDS == 2 else 'folds'}, never on those it scores, in {made.seconds:.1f} s (reading "
            f"{made.read_seconds:.1f}, training and scoring {made.train_seconds:.1f}, the rest importing torch)"]
