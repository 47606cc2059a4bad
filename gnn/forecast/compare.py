"""The next-study forecaster on the graph: two studies of a patient with the graph's derived events beside
the forecast for the later one (:func:`compare_forecast`, ``cxrkg compare --forecaster``), and every
consecutive pair's forecasts written back as PROGRESSION edges with source ``gnn`` (:func:`write_forecasts`,
``cxrkg predict --forecaster``), which the ``stated_vs_predicted`` query shows beside the derived events.

The forecast for the later study reads the patient's studies up to and including the prior one and
nothing of the later study (:mod:`gnn.forecast.rows`); for two studies that are not consecutive, the studies
between them are left out, as if the later one came next.

Write-back: per (consecutive pair, finding) where the finding is present in either study or forecast
present, one edge ``(current observation)-[:PROGRESSION {source: 'gnn', change, probability, classes,
probabilities, model_version, snapshot_hash}]->(prior observation)``: ``change`` is the forecast class
(onset, resolution, persistence, stays absent), ``classes`` ``[present next, not present next]`` with
their ``probabilities``, ``probability`` that of the class forecast. A study-level forecast sits on the
observations of the finding's most frequent region in the graph (NIH ChestX-ray14 has one per finding).
Like ``cxrkg predict --write-back``, it replaces the patients' earlier ``gnn`` edges and never touches
stated or derived ones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from gnn.errors import GnnError
from gnn.forecast.model import TrainedGraphForecaster
from gnn.forecast.rows import CLASSES, ONSET, PERSISTENCE, RESOLUTION, STAYS_ABSENT, build_forecast_table
from graph.store import GraphStore
from graph.store import read_statements as rs
from graph.store import statements as st
from graph.store.queries import get_query, run_named
from graph.terms import State

STUDY_COLUMNS = ["patient_id", "study_id", "study_datetime", "study_order", "prior_study_id", "prior_days",
                 "age_decile", "gender"]
FORECAST_CLASSES = ["present next", "not present next"]


@dataclass
class ForecastRow:
    """One finding of a forecast comparison.

    Attributes:
        prior_state, current_state: present / uncertain / absent / not_mentioned (study level).
        event: the graph's derived event between the two studies (new, resolved, no longer mentioned,
            persistent) or None. probability: forecast probability that the later study has it present.
        forecast: onset / resolution / persistence / stays absent (prior state and probability >= 0.5).
    """

    finding: str
    prior_state: str
    current_state: str
    event: str | None
    probability: float
    forecast: str


@dataclass
class ForecastComparison:
    """The answer of :func:`compare_forecast`."""

    patient_id: str
    current_study_id: str
    prior_study_id: str
    consecutive: bool
    rows: list[ForecastRow]
    answer: str
    model_version: str | None


def patient_tables(store: GraphStore, patient_ids: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(studies, study_findings) of these patients as the snapshot has them, read from the graph."""
    studies = pd.DataFrame(store.read(st.GNN_STUDIES, patient_ids=patient_ids), columns=STUDY_COLUMNS)
    states = pd.DataFrame(store.read(st.GNN_STUDY_FINDINGS, patient_ids=patient_ids),
                          columns=["study_id", "finding", "state"])
    return studies, states


def _forecast_class(prior_present: np.ndarray, p: np.ndarray) -> np.ndarray:
    will = p >= 0.5
    return np.where(prior_present == 1, np.where(will, PERSISTENCE, RESOLUTION), np.where(will, ONSET, STAYS_ABSENT))


def compare_forecast(store: GraphStore, patient_id: str, forecaster: TrainedGraphForecaster,
                     current: str | None = None, prior: str | None = None,
                     finding: str | None = None) -> ForecastComparison:
    """Two studies of a patient (default: the last and the one before): per finding present in either,
    with a derived event, or forecast present, the derived event beside the forecast.

    Raises:
        GnnError: unknown patient, study or finding; a patient with one study; a prior not earlier.
    """
    from gnn.compare import finding_names, study_pair  # with gnn.prediction, PyG: 1.6 s not every caller needs

    names = finding_names(finding)
    studies, states = patient_tables(store, [str(patient_id)])
    if studies.empty:
        raise GnnError(f"patient {patient_id} is not in the graph")
    order, current, prior = study_pair(studies.to_dict("records"), str(patient_id), current, prior)
    position = studies["study_id"].map(order)
    seen = studies[(position <= order[prior]) | (studies["study_id"] == current)]
    table = build_forecast_table(seen, states, findings=forecaster.findings)
    mask = (table.rows["study_id"] == current).to_numpy()
    rows, p = table.rows[mask].reset_index(drop=True), forecaster(table.x[mask])
    forecast = _forecast_class(rows["prior_present"].to_numpy(), p)
    state = {(r.study_id, r.finding): r.state for r in states.itertuples()}
    q = get_query("changes_between_studies")
    events = {r["finding"]: r["change"] for r in run_named(store, q, q.bind({
        "current_study_id": current, "prior_study_id": prior, "level": "study", "basis": "derived"}))}
    out = []
    for i, f in enumerate(rows["finding"]):
        before, now = state.get((prior, f), State.NOT_MENTIONED), state.get((current, f), State.NOT_MENTIONED)
        shown = f in events or State.PRESENT in (before, now) or p[i] >= 0.5
        if shown and (names is None or f in names):
            out.append(ForecastRow(f, before, now, events.get(f), float(p[i]), CLASSES[forecast[i]]))
    return ForecastComparison(str(patient_id), current, prior, order[current] - order[prior] == 1, out,
                              forecast_answer(out), forecaster.model_version)


def forecast_answer(rows: list[ForecastRow]) -> str:
    """One line: the derived events, then what the forecaster expected of the later study."""
    by_event: dict[str, list[str]] = {}
    for r in rows:
        if r.event:
            by_event.setdefault(r.event, []).append(r.finding)
    derived = "; ".join(f"{e}: {', '.join(fs)}" for e, fs in sorted(by_event.items())) or "no derived event"
    expected = [f"{r.finding} {r.probability:.2f} ({r.forecast})" for r in rows if r.probability >= 0.5]
    return f"derived {derived}. forecast present: {', '.join(expected) or 'nothing'}."


@dataclass
class ForecastWriteSummary:
    """What :func:`write_forecasts` did."""

    model_version: str | None
    pairs: int
    edges_written: int
    patients: int
    seconds: float


def write_forecasts(store: GraphStore, forecaster: TrainedGraphForecaster, log: Callable[[str], None] = lambda _: None) -> ForecastWriteSummary:
    """Forecast every consecutive study pair of the graph and write the edges of the module docstring,
    :data:`gnn.prediction.WRITE_BATCH_PATIENTS` patients per transaction.

    Raises:
        GnnError: the graph has no patient with two studies.
    """
    from gnn.prediction import WRITE_BATCH_PATIENTS

    started = time.perf_counter()
    region = {r["finding"]: r["anatomy"] for r in store.read(rs.GNN_FINDING_REGIONS)}
    patients = [r["patient_id"] for r in store.read(st.GNN_PATIENT_IDS)]
    pairs = written = 0
    for start in range(0, len(patients), WRITE_BATCH_PATIENTS):
        chunk = patients[start:start + WRITE_BATCH_PATIENTS]
        studies, states = patient_tables(store, chunk)
        if not studies["patient_id"].duplicated().any():
            continue  # nobody in this chunk has two studies
        table = build_forecast_table(studies, states, findings=forecaster.findings)
        edges = _edges(table.rows, forecaster(table.x), region, forecaster.model_version, forecaster.snapshot_hash)
        pairs += len(table.rows) // len(forecaster.findings)
        written += store.replace_gnn_progressions(chunk, edges)
        log(f"{min(start + len(chunk), len(patients)):,} of {len(patients):,} patients: {written:,} edges")
    if pairs == 0:
        raise GnnError("no patient in the graph has two studies: nothing to forecast")
    return ForecastWriteSummary(forecaster.model_version, pairs, written, len(patients),
                                round(time.perf_counter() - started, 2))


def _edges(rows: pd.DataFrame, p: np.ndarray, region: dict[str, str], model_version: str | None,
           snapshot_hash: str) -> list[dict[str, Any]]:
    """Edge rows for WRITE_GNN_PROGRESSIONS: present in either study or forecast present, with a region."""
    forecast = _forecast_class(rows["prior_present"].to_numpy(), p)
    keep = (((rows["prior_present"] == 1) | (rows["next_present"] == 1) | (p >= 0.5))
            & rows["finding"].isin(region)).to_numpy()
    p, kept = p[keep], rows.loc[keep, ["study_id", "prior_study_id", "finding"]]
    out = kept.assign(anatomy=kept["finding"].map(region), change=np.array(CLASSES, dtype=object)[forecast[keep]],
                      probability=np.where(p >= 0.5, p, 1 - p), model_version=model_version,
                      snapshot_hash=snapshot_hash).to_dict("records")
    for r, q in zip(out, p, strict=True):
        r["classes"], r["probabilities"] = FORECAST_CLASSES, [round(float(q), 5), round(1 - float(q), 5)]
    return out
