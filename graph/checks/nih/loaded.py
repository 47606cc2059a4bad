"""The graph's study-level answers on the NIH cohort against the plain-pandas reference (graph.checks.nih.reference).

Two comparisons, both expected to show 0 mismatches:

* counts per (finding, synthetic year): studies where the finding is present / absent, and the derived
  events starting in that year (onset, by what the prior study said, resolution, no longer mentioned,
  persistence), read from the graph's StudyFinding nodes and their PROGRESSION edges;
* patient sets of ``new_finding_patients`` (level study, basis any) per finding, over all dates and per
  synthetic year, against :func:`graph.checks.nih.reference.reference_new_patients`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from graph.checks.nih.reference import (
    COUNT_COLUMNS,
    FINDINGS,
    NIHTables,
    reference_counts,
    reference_new_patients,
    reference_states,
)
from graph.datasets.nih.convert import synthetic_study_datetime
from graph.store import GraphStore
from graph.store import read_statements as rs
from graph.store.queries import get_query, run_named
from graph.terms import Change, State

_EVENT_COLUMN = {Change.NEW: "onset", Change.RESOLVED: "resolution", "no longer mentioned": "no_longer_mentioned",
                 "persistent": "persistence"}
_ONSET_PRIOR = {State.ABSENT: "onset_after_absent", State.NOT_MENTIONED: "onset_after_unmentioned"}


@dataclass
class CheckReport:
    """What was compared and what differed: ``mismatches`` are human-readable lines (empty: all equal)."""

    count_cells: int = 0
    patient_sets: int = 0
    mismatches: list[str] = field(default_factory=list)


def nih_patient_ids(tables: NIHTables) -> list[str]:
    """The NIH patients as the converter names them (str of the integer Patient ID)."""
    ids = pd.to_numeric(tables.data_entry["Patient ID"], errors="coerce").dropna().astype(int)
    return sorted({str(i) for i in ids})


def graph_counts(store: GraphStore, patient_ids: list[str]) -> pd.DataFrame:
    """The graph's counts in the reference's layout (:data:`COUNT_COLUMNS`), zeros left out."""
    cells: dict[tuple[str, int], dict[str, int]] = {}

    def cell(r: dict) -> dict[str, int]:
        return cells.setdefault((r["finding"], r["year"]), dict.fromkeys(COUNT_COLUMNS[2:], 0))

    params = {"patient_ids": patient_ids, "findings": list(FINDINGS)}
    for r in store.read(rs.STUDY_STATE_COUNTS, **params):
        if r["state"] in (State.PRESENT, State.ABSENT):
            cell(r)[r["state"]] += r["n"]
    for r in store.read(rs.DERIVED_STUDY_EVENT_COUNTS, **params):
        cell(r)[_EVENT_COLUMN[r["change"]]] += r["n"]
        if r["change"] == Change.NEW and r["prior_state"] in _ONSET_PRIOR:
            cell(r)[_ONSET_PRIOR[r["prior_state"]]] += r["n"]
    return pd.DataFrame([{"finding": f, "year": y, **c} for (f, y), c in cells.items()], columns=list(COUNT_COLUMNS))


def compare_counts(reference: pd.DataFrame, graph: pd.DataFrame) -> tuple[int, list[str]]:
    """(cells compared, mismatch lines) between two count tables; a missing row counts as zeros."""
    merged = reference.merge(graph, on=["finding", "year"], how="outer", suffixes=("_ref", "_graph")).fillna(0)
    out = []
    for column in COUNT_COLUMNS[2:]:
        differ = merged[merged[f"{column}_ref"] != merged[f"{column}_graph"]]
        out += [f"{r.finding} {int(r.year)} {column}: reference {int(r[f'{column}_ref'])}, graph "
                f"{int(r[f'{column}_graph'])}" for _, r in differ.iterrows()]
    return len(merged) * (len(COUNT_COLUMNS) - 2), out


def compare_new_patients(store: GraphStore, tables: NIHTables, patient_ids: set[str],
                         states: pd.DataFrame | None = None) -> tuple[int, list[str]]:
    """(patient sets compared, mismatch lines): new_finding_patients per finding, all dates and per year."""
    query = get_query("new_finding_patients")
    years = sorted({synthetic_study_datetime(int(fu)).year
                    for fu in pd.to_numeric(tables.data_entry["Follow-up #"], errors="coerce").dropna()})
    ranges = [("2000-01-01", f"{years[-1]}-12-31")] + [(f"{y}-01-01", f"{y}-12-31") for y in years]
    compared, out = 0, []
    states = reference_states(tables) if states is None else states
    for finding in FINDINGS:
        for start, end in ranges:
            rows = run_named(store, query, query.bind({"finding": finding, "start_date": start, "end_date": end}))
            got = {r["patient_id"] for r in rows} & patient_ids
            want = reference_new_patients(tables, finding, start, end, states=states)
            compared += 1
            if got != want:
                out.append(f"new_finding_patients {finding} {start}..{end}: graph {len(got)}, reference {len(want)}, "
                           f"only graph {sorted(got - want)[:5]}, only reference {sorted(want - got)[:5]}")
    return compared, out


def check_nih(store: GraphStore, tables: NIHTables) -> CheckReport:
    """Both comparisons for the patients of ``tables`` (the whole cohort or a slice of it)."""
    patients = nih_patient_ids(tables)
    report = CheckReport()
    states = reference_states(tables)
    report.count_cells, report.mismatches = compare_counts(reference_counts(tables, states),
                                                           graph_counts(store, patients))
    report.patient_sets, more = compare_new_patients(store, tables, set(patients), states)
    report.mismatches += more
    return report
