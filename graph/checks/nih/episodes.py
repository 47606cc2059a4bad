"""Episodes of the NIH cohort's findings with plain pandas, apart from graph.longitudinal.episodes, and the check of
the graph's episodes and episode queries against them.

Rules (the same as graph.longitudinal.episodes, applied to :func:`graph.checks.nih.reference.reference_states`, study
level): per patient and finding, in follow-up order, a present study starts an episode when the patient is
not in one; present and not-mentioned studies continue it; a stated absence closes it at the last present
study before; a later presence starts the next one. NIH states no comparisons, so no presence is implied.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from graph.checks.nih.reference import ABSENT, FINDINGS, PRESENT, NIHTables, reference_states
from graph.store import GraphStore
from graph.store import read_statements as rs
from graph.store.queries import get_query, run_named

_KEY = ["patient_id", "finding"]


def reference_episodes(states: pd.DataFrame) -> pd.DataFrame:
    """One row per episode: patient_id, finding, number (1, 2, ... per patient and finding), first_study_id,
    last_study_id, closed (a stated absence ended it). ``states``: :func:`reference_states`."""
    said = states[states["state"].isin([PRESENT, ABSENT])].sort_values(_KEY + ["follow_up"], kind="stable")
    present = said["state"] == PRESENT
    before = said.groupby(_KEY)["state"].shift(1)
    said = said.assign(start=present & (before != PRESENT))
    said["number"] = said.groupby(_KEY)["start"].cumsum()
    said["closed"] = said.groupby(_KEY)["state"].shift(-1).eq(ABSENT) & present
    runs = said[present & (said["number"] > 0)]
    out = runs.groupby(_KEY + ["number"], as_index=False).agg(
        first_study_id=("image_id", "first"), last_study_id=("image_id", "last"), closed=("closed", "last"))
    return out.astype({"number": "int64", "closed": bool})


@dataclass
class EpisodeCheck:
    """What was compared: episodes (first and last study, closed), per-finding counts, recurrent patient
    sets; ``mismatches`` are readable lines (empty: all equal)."""

    episodes: int = 0
    findings: int = 0
    recurrent_sets: int = 0
    mismatches: list[str] = field(default_factory=list)


def check_episodes(store: GraphStore, tables: NIHTables, states: pd.DataFrame | None = None) -> EpisodeCheck:
    """The graph's study-level episodes and ``recurrent_findings`` (all dates, at least 2) against
    :func:`reference_episodes`, for the patients of ``tables``."""
    states = reference_states(tables) if states is None else states
    want = reference_episodes(states)
    patients = sorted(set(states["patient_id"]))
    got = pd.DataFrame(store.read(rs.EPISODE_BOUNDS, findings=list(FINDINGS), level="study", patient_ids=patients),
                       columns=["patient_id", "anatomy", "finding", "number", "first_study_id", "last_study_id",
                                "closed"])
    cols = _KEY + ["number", "first_study_id", "last_study_id", "closed"]
    w = set(want[cols].itertuples(index=False, name=None))
    g = set(got[cols].itertuples(index=False, name=None))
    report = EpisodeCheck(episodes=len(w | g))
    report.mismatches += [f"episode only in the graph: {e}" for e in sorted(g - w)[:10]]
    report.mismatches += [f"episode only in the reference: {e}" for e in sorted(w - g)[:10]]
    query = get_query("recurrent_findings")
    for finding in FINDINGS:
        n_want, n_got = int((want["finding"] == finding).sum()), int((got["finding"] == finding).sum())
        report.findings += 1
        if n_want != n_got:
            report.mismatches.append(f"{finding}: {n_got} episodes in the graph, {n_want} in the reference")
        counts = want[want["finding"] == finding].groupby("patient_id").size()
        recurrent = set(counts[counts >= 2].index)
        rows = run_named(store, query, query.bind({"finding": finding}))
        graph_recurrent = {r["patient_id"] for r in rows} & set(patients)
        report.recurrent_sets += 1
        if graph_recurrent != recurrent:
            report.mismatches.append(f"recurrent_findings {finding}: graph {len(graph_recurrent)}, reference "
                                     f"{len(recurrent)}, only graph {sorted(graph_recurrent - recurrent)[:5]}, "
                                     f"only reference {sorted(recurrent - graph_recurrent)[:5]}")
    return report
