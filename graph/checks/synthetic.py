"""A sparse synthetic cohort's study-level events in the graph against its ground truth.

A cohort written with ``write_cohort(..., sparse=True)`` states every present finding and nothing else, so
what the graph derives at study level follows from the simulated severities alone: for consecutive studies
of a patient and a finding (or any more specific finding, through the vocabulary's IS_A), present in both
is ``persistent``, only now is ``new`` (after ``not_mentioned``), only before is ``no longer mentioned``,
and nothing is ``resolved`` (no absence is ever stated). The reports still state comparisons, with label
noise, so a stated "no change", "improved", "resolved" or "repositioned" against a prior study where the
finding was truly absent makes it present there by implication (graph.longitudinal.events), as the graph does: the
truth side reads those statements from the ground truth's ``stated_imagenome`` / ``stated_radgraph``
columns (``implied=False`` leaves them out: the strict reading). Episodes follow (graph.longitudinal.episodes): with
no absence stated, one open episode per patient and finding, from its first to its last present study.
The truth side is computed here with pandas from ``ground_truth.parquet`` and the metadata CSV (graph.synth)
and the vocabulary's hierarchy, apart from graph.longitudinal.events and graph.longitudinal.episodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graph.store import GraphStore
from graph.store import read_statements as rs
from graph.store.queries import get_query, run_named
from graph.synth import GROUND_TRUTH, METADATA_CSV
from graph.vocabulary import ancestors, vocabulary


@dataclass
class SparseCheck:
    """Events and patient sets compared; ``mismatches`` are readable lines (empty: all equal)."""

    events: int = 0
    patient_sets: int = 0
    episodes: int = 0
    mismatches: list[str] = field(default_factory=list)


_IMPLYING = ("no change", "improved", "resolved", "repositioned")


def _present(cohort: Path, implied: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the ground truth's consecutive study pairs: patient_id, study_id, prior_study_id; the present
    (patient_id, study_id, finding), each finding with its ancestors: severity above 0, or, when
    ``implied``, the prior study of a stated no change / improved / resolved / repositioned)."""
    gt = pd.read_parquet(Path(cohort) / GROUND_TRUTH)
    parents = {f.name: f.parents for f in vocabulary().findings.values()}
    # a relationship with two comparison labels states nothing (graph.formats.scene_graph: ambiguous)
    stated = gt["stated_radgraph"].isin(_IMPLYING) | gt["stated_imagenome"].isin(_IMPLYING)
    before = gt.loc[(gt["severity_prior"] > 0) | (stated & implied), ["patient_id", "prior_study_id", "finding"]]
    present = pd.concat([before.rename(columns={"prior_study_id": "study_id"}),
                         gt.loc[gt["severity_current"] > 0, ["patient_id", "study_id", "finding"]]], ignore_index=True)
    present = present.assign(finding=present["finding"].map(lambda f: sorted({f} | ancestors(f, parents))))
    pairs = gt[["patient_id", "study_id", "prior_study_id"]].drop_duplicates()
    return pairs, present.explode("finding").drop_duplicates()


def truth_events(cohort: Path, implied: bool = True) -> pd.DataFrame:
    """Study-level events of a sparse cohort from its ground truth: columns patient_id, study_id,
    prior_study_id, finding, change (new / persistent / no longer mentioned)."""
    pairs, present = _present(cohort, implied)
    now = pairs.merge(present, on=["patient_id", "study_id"]).assign(now=True)
    before = pairs.merge(present.rename(columns={"study_id": "prior_study_id"}),
                         on=["patient_id", "prior_study_id"]).assign(before=True)
    pair = now.merge(before, on=["patient_id", "study_id", "prior_study_id", "finding"], how="outer")
    pair = pair.fillna({"now": False, "before": False}).astype({"now": bool, "before": bool})
    pair["change"] = None
    pair.loc[pair["now"] & ~pair["before"], "change"] = "new"
    pair.loc[pair["now"] & pair["before"], "change"] = "persistent"
    pair.loc[~pair["now"] & pair["before"], "change"] = "no longer mentioned"
    return pair.dropna(subset=["change"])[["patient_id", "study_id", "prior_study_id", "finding", "change"]]


def truth_episodes(cohort: Path, implied: bool = True) -> pd.DataFrame:
    """Study-level episodes of a sparse cohort: one per patient and finding present in any of its studies
    (patients with two or more studies, those the ground truth covers), columns patient_id, finding,
    first_study_id, last_study_id (by the metadata CSV's StudyDate and StudyTime, then study id)."""
    _, present = _present(cohort, implied)
    meta = pd.read_csv(Path(cohort) / METADATA_CSV, dtype={"study_id": str, "StudyDate": "int64",
                                                           "StudyTime": "float64"}).drop_duplicates("study_id")
    meta = meta.set_index("study_id")
    present = present.assign(day=lambda f: f["study_id"].map(meta["StudyDate"]),
                             time=lambda f: f["study_id"].map(meta["StudyTime"]))
    present = present.sort_values(["patient_id", "finding", "day", "time", "study_id"])
    return present.groupby(["patient_id", "finding"], as_index=False).agg(first_study_id=("study_id", "first"),
                                                                          last_study_id=("study_id", "last"))


def check_sparse_cohort(store: GraphStore, cohort: Path) -> SparseCheck:
    """Compare the graph's derived study-level events and ``new_finding_patients`` (basis derived, all
    dates, per finding) with :func:`truth_events` of the cohort loaded into ``store``."""
    truth = truth_events(cohort)
    want = set(truth[["study_id", "prior_study_id", "finding", "change"]].itertuples(index=False, name=None))
    got = {(r["study_id"], r["prior_study_id"], r["finding"], r["change"]) for r in store.read(rs.DERIVED_STUDY_EVENTS)}
    report = SparseCheck(events=len(want | got))
    report.mismatches += [f"only in the graph: {e}" for e in sorted(got - want)[:20]]
    report.mismatches += [f"only in the ground truth: {e}" for e in sorted(want - got)[:20]]
    query = get_query("new_finding_patients")
    new = truth[truth["change"] == "new"]
    for finding in sorted(set(truth["finding"])):
        rows = run_named(store, query, query.bind({"finding": finding, "start_date": "1900-01-01",
                                                   "end_date": "2299-12-31", "basis": "derived"}))
        graph_patients = {r["patient_id"] for r in rows}
        truth_patients = set(new.loc[new["finding"] == finding, "patient_id"])
        report.patient_sets += 1
        if graph_patients != truth_patients:
            report.mismatches.append(f"new_finding_patients {finding}: graph {len(graph_patients)}, ground truth "
                                     f"{len(truth_patients)}")
    report.mismatches += _episode_mismatches(store, cohort, report)
    return report


def _episode_mismatches(store: GraphStore, cohort: Path, report: SparseCheck) -> list[str]:
    """The graph's study-level episodes of the ground truth's patients against :func:`truth_episodes`."""
    truth = truth_episodes(cohort)
    patients = sorted(set(truth["patient_id"]))
    rows = store.read(rs.EPISODE_BOUNDS, findings=sorted(set(truth["finding"])), level="study", patient_ids=patients)
    got = {(r["patient_id"], r["finding"], r["first_study_id"], r["last_study_id"], r["closed"]) for r in rows}
    want = {(*t, False) for t in truth.itertuples(index=False, name=None)}
    report.episodes = len(got | want)
    return ([f"episode only in the graph: {e}" for e in sorted(got - want)[:20]]
            + [f"episode only in the ground truth: {e}" for e in sorted(want - got)[:20]])
