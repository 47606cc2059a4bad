"""The geometry's decisions and the reports' stated findings against the synthetic cohort's planted truth.

Issue 54's agreement figure (docs/measurements.md, "Agreement"): per study of a loaded synthetic cohort, the
geometry's decision (its GeometryObservation of the finding, present or absent; a study without one counts as
not decided yes), and what the reports state (an Observation of the same finding with polarity present, from
any report source; a second row counts a stated uncertain one too), each against the truth that
``geometry_truth.parquet`` records for the film the geometry measured (the study's first film by image id when
it measured none). Beside them the trivial answers: always yes (precision = the prevalence, recall 1) and a
guess at the prevalence's rate (precision and recall = the prevalence, in expectation), and the geometry
against the reports' statement as the reference. Intervals: 95 % percentile bootstrap over patients
(:func:`graph.bootstrap.cluster_bootstrap`), one set of draws for all rows of a finding.

The truth side is read with pandas from the cohort's files (graph.synth's layout); the decisions come from the
graph (:mod:`graph.store.agreement_statements`), never from graph.measurements.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from graph.bootstrap import DRAWS, cluster_bootstrap
from graph.store import GraphStore
from graph.store import agreement_statements as st
from graph.synth import GEOMETRY_TRUTH

#: geometry finding (its GeometryObservation's ``finding``, the vocabulary's name where one exists) -> the
#: truth column of geometry_truth.parquet; the reports state the same finding name
FINDINGS = {
    "enlarged cardiac silhouette": "cardiomegaly",
    "mediastinal widening": "mediastinal_widening",
    "mediastinal displacement": "trachea_deviation",
    "rotated": "rotated",
    "anatomy cut off": "cut_off",
}
CARDIOMEGALY = "enlarged cardiac silhouette"

GEOMETRY, REPORTS, REPORTS_UNCERTAIN = "geometry", "reports (present)", "reports (present or uncertain)"
ALWAYS_YES, PREVALENCE = "always yes", "guess at the prevalence"
GEOMETRY_VS_REPORTS = "geometry against the reports"
ANSWERS = (GEOMETRY, REPORTS, REPORTS_UNCERTAIN, ALWAYS_YES, PREVALENCE, GEOMETRY_VS_REPORTS)


@dataclass(frozen=True)
class Row:
    """One answer's figures on one finding.

    Attributes:
        finding, answer: the geometry finding and who answers (:data:`ANSWERS`).
        studies: studies scored; ``positives``: studies the reference calls yes (the truth, or for
            :data:`GEOMETRY_VS_REPORTS` the reports' statement); ``said_yes``: studies the answer calls yes.
        true_positives: both yes.
        precision, recall: point figures (NaN where undefined), each with its 95 % interval (low, high).
        undecided: for the geometry's rows, studies without a GeometryObservation of the finding (no film
            of the study measured it: a box missing or faulty); 0 for the others.
    """

    finding: str
    answer: str
    studies: int
    positives: int
    said_yes: int
    true_positives: int
    precision: float
    precision_interval: tuple[float, float]
    recall: float
    recall_interval: tuple[float, float]
    undecided: int = 0


def study_truth(cohort: Path, measured: pd.DataFrame) -> pd.DataFrame:
    """One row per study of the cohort's geometry truth: ``study_id``, ``patient_id``, ``image_id`` (the film
    scored) and the :data:`FINDINGS` truth columns (bool).

    Args:
        cohort: a folder written by ``cxrkg synth`` (its ``geometry_truth.parquet``).
        measured: ``study_id``, ``image_id`` of the film the geometry measured per study (may be empty).
    """
    truth = pd.read_parquet(cohort / GEOMETRY_TRUTH).sort_values("image_id")
    first = truth.drop_duplicates("study_id")[["study_id", "image_id"]]
    chosen = first.set_index("study_id")["image_id"]
    if len(measured):
        chosen.update(measured.drop_duplicates("study_id").set_index("study_id")["image_id"])
    rows = truth.set_index("image_id").loc[chosen.to_numpy()].reset_index()
    return rows[["study_id", "patient_id", "image_id", *FINDINGS.values()]].astype({c: bool for c in FINDINGS.values()})


def graph_answers(store: GraphStore) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(geometry decisions: ``study_id, image_id, finding, state``; stated findings: ``study_id, finding,
    polarity``) of the graph, for the :data:`FINDINGS`."""
    findings = list(FINDINGS)
    geometry = pd.DataFrame(store.read(st.GEOMETRY_DECISIONS, findings=findings),
                            columns=["study_id", "image_id", "finding", "state"])
    stated = pd.DataFrame(store.read(st.STATED_FINDINGS, findings=findings, polarities=["present", "uncertain"]),
                          columns=["study_id", "finding", "polarity"])
    return geometry, stated


def _yes(studies: pd.Series, table: pd.DataFrame, finding: str, column: str, values: tuple[str, ...]) -> np.ndarray:
    said = set(table.loc[(table["finding"] == finding) & table[column].isin(values), "study_id"])
    return studies.isin(said).to_numpy()


def agreement(cohort: Path, store: GraphStore, findings: tuple[str, ...] = tuple(FINDINGS), draws: int = DRAWS,
              seed: int = 0) -> list[Row]:
    """The rows of every :data:`ANSWERS` for each of ``findings`` (geometry finding names).

    Raises:
        FileNotFoundError: the cohort has no ``geometry_truth.parquet``.
        KeyError: a finding outside :data:`FINDINGS`.
    """
    geometry, stated = graph_answers(store)
    rows = []
    for finding in findings:
        decided = geometry[geometry["finding"] == finding]
        truth = study_truth(cohort, decided[["study_id", "image_id"]])
        studies = truth["study_id"]
        real = truth[FINDINGS[finding]].to_numpy()
        geo = _yes(studies, decided, finding, "state", ("present",))
        reports = _yes(studies, stated, finding, "polarity", ("present",))
        answers = {GEOMETRY: (geo, real), REPORTS: (reports, real),
                   REPORTS_UNCERTAIN: (_yes(studies, stated, finding, "polarity", ("present", "uncertain")), real),
                   ALWAYS_YES: (np.ones(len(real), bool), real), GEOMETRY_VS_REPORTS: (geo, reports)}
        undecided = int((~studies.isin(set(decided["study_id"]))).sum())
        rows += _scored(finding, answers, truth["patient_id"].to_numpy(), draws, seed, undecided)
    return rows


def _counts(said: np.ndarray, real: np.ndarray, w: np.ndarray) -> tuple[float, float, float]:
    """Weighted (true positives, said yes, real yes)."""
    return float(w @ (said & real)), float(w @ said), float(w @ real)


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def _figures(answers: dict[str, tuple[np.ndarray, np.ndarray]], w: np.ndarray) -> list[float]:
    """Precision and recall of each answer, then the prevalence guess's (both the prevalence)."""
    out = []
    for said, real in answers.values():
        tp, yes, pos = _counts(said, real, w)
        out += [_ratio(tp, yes), _ratio(tp, pos)]
    real = answers[GEOMETRY][1]
    prevalence = _ratio(float(w @ real), float(w.sum()))
    return out + [prevalence, prevalence]


def _scored(finding: str, answers: dict[str, tuple[np.ndarray, np.ndarray]], patients: np.ndarray, draws: int,
            seed: int, undecided: int) -> list[Row]:
    point = _figures(answers, np.ones(len(patients)))
    boot = cluster_bootstrap(patients, lambda w: _figures(answers, w), draws=draws, seed=seed)
    names = [*answers, PREVALENCE]
    rows = []
    for k, answer in enumerate(names):
        said, real = answers.get(answer, answers[GEOMETRY])
        tp, yes, pos = _counts(said, real, np.ones(len(real)))
        if answer == PREVALENCE:
            yes, tp = pos, pos * pos / len(real)  # in expectation: the share of the prevalence said yes at random
        rows.append(Row(finding, answer, len(real), int(pos), int(round(yes)), int(round(tp)), point[2 * k],
                        boot.interval(2 * k), point[2 * k + 1], boot.interval(2 * k + 1),
                        undecided if answer in (GEOMETRY, GEOMETRY_VS_REPORTS) else 0))
    order = {a: i for i, a in enumerate(ANSWERS)}
    return sorted(rows, key=lambda r: order[r.answer])


def row_dicts(rows: list[Row]) -> list[dict[str, object]]:
    """The rows as flat dicts (a CSV's or a table's columns), figures to 3 decimals, None where one is
    undefined (no study said yes, or none is)."""
    def r3(v: float) -> float | None:
        return None if np.isnan(v) else round(v, 3)
    return [{"finding": r.finding, "answer": r.answer, "studies": r.studies, "reference_yes": r.positives,
             "said_yes": r.said_yes, "both_yes": r.true_positives, "precision": r3(r.precision),
             "precision_low": r3(r.precision_interval[0]), "precision_high": r3(r.precision_interval[1]),
             "recall": r3(r.recall), "recall_low": r3(r.recall_interval[0]),
             "recall_high": r3(r.recall_interval[1]), "undecided": r.undecided} for r in rows]


def table(rows: list[Row]) -> str:
    """The rows as a plain-text table (one line per finding and answer)."""
    def fig(v: float, iv: tuple[float, float]) -> str:
        return "-" if np.isnan(v) else f"{v:.3f} [{iv[0]:.3f}, {iv[1]:.3f}]"
    head = f"{'finding':<28} {'answer':<32} {'studies':>7} {'yes':>5} {'said':>5} {'both':>5}  " \
           f"{'precision [95 %]':<22} {'recall [95 %]':<22} {'undecided':>9}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.finding:<28} {r.answer:<32} {r.studies:>7,} {r.positives:>5,} {r.said_yes:>5,} "
                     f"{r.true_positives:>5,}  {fig(r.precision, r.precision_interval):<22} "
                     f"{fig(r.recall, r.recall_interval):<22} {r.undecided or '':>9}")
    return "\n".join(lines)
