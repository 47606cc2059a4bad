"""A sparse synthetic cohort's study-level events in the graph against its ground truth.

A cohort written with ``write_cohort(..., sparse=True)`` states every present finding and nothing else, so
what the graph derives at study level follows from the simulated severities alone: for consecutive studies
of a patient and a finding (or any more specific finding, through the vocabulary's IS_A), present in both
is ``persistent``, only now is ``new`` (after ``not_mentioned``), only before is ``no longer mentioned``,
and nothing is ``resolved`` (no absence is ever stated). The truth side is computed here with pandas from
``ground_truth.parquet`` (graph.synth) and the vocabulary's hierarchy, apart from graph.events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graph.store import GraphStore
from graph.store import read_statements as rs
from graph.store.queries import get_query, run_named
from graph.synth import GROUND_TRUTH
from graph.vocabulary import ancestors, vocabulary


@dataclass
class SparseCheck:
    """Events and patient sets compared; ``mismatches`` are readable lines (empty: all equal)."""

    events: int = 0
    patient_sets: int = 0
    mismatches: list[str] = field(default_factory=list)


def truth_events(cohort: Path) -> pd.DataFrame:
    """Study-level events of a sparse cohort from its ground truth: columns patient_id, study_id,
    prior_study_id, finding, change (new / persistent / no longer mentioned)."""
    gt = pd.read_parquet(Path(cohort) / GROUND_TRUTH)
    parents = {f.name: f.parents for f in vocabulary().findings.values()}
    gt = gt.assign(before=gt["severity_prior"] > 0, now=gt["severity_current"] > 0,
                   finding=gt["finding"].map(lambda f: sorted({f} | ancestors(f, parents))))
    gt = gt.explode("finding")
    pair = gt.groupby(["patient_id", "study_id", "prior_study_id", "finding"], as_index=False)[["before", "now"]].any()
    pair["change"] = None
    pair.loc[pair["now"] & ~pair["before"], "change"] = "new"
    pair.loc[pair["now"] & pair["before"], "change"] = "persistent"
    pair.loc[~pair["now"] & pair["before"], "change"] = "no longer mentioned"
    return pair.dropna(subset=["change"])[["patient_id", "study_id", "prior_study_id", "finding", "change"]]


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
    return report
