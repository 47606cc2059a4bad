"""The demo's report-scoring lines: the synthetic cohort's own reports scored against the graph beside the
copy-prior baseline (each study's "generated" report is its prior study's), the gap a text-only metric
cannot see (``cxrkg score-reports --baseline reference|copy-prior``, docs/report_scoring.md)."""

from __future__ import annotations

from pathlib import Path

from graph.report_scoring.inputs import baseline_items
from graph.report_scoring.parallel import score_items
from graph.report_scoring.score import StudyResult
from graph.report_scoring.summary import summarise
from graph.store.report_facts import cohort_facts

#: the synthetic cohort's image metadata (graph.synth), whose study ids are the cohort's studies
METADATA = "mimic-cxr-2.0.0-metadata.csv"


def baseline_lines(store, cohort: Path) -> list[str]:
    """One line per baseline (``reference``, ``copy-prior``) of the synthetic cohort in ``cohort``, scored in
    this process with the rules extractor: studies, temporal precision and recall, contradicted and omitted
    changes per study, F1RadGraph (complete) and finding F1.

    Raises:
        OSError: the cohort's metadata CSV cannot be read.
        graph.store.GraphUnavailable: the server cannot be reached.
    """
    import pandas as pd

    studies = pd.read_csv(cohort / METADATA, dtype=str, usecols=["study_id"])["study_id"].unique()
    facts = cohort_facts(store, [str(s) for s in studies])
    lines = []
    for kind in ("reference", "copy-prior"):
        items, _ = baseline_items(kind, facts)
        results = [r for r in score_items(items, facts, "rules", workers=0, file=kind) if isinstance(r, StudyResult)]
        s = summarise(results, "rules")
        precision, recall = s.temporal_precision[2], s.temporal_recall[2]
        lines.append(f"{kind:>10}: {s.studies:,} studies; temporal precision {_figure(precision)}, recall "
                     f"{_figure(recall)}; per study {s.means['changes_contradicted'][0]:.2f} changes contradicted, "
                     f"{s.means['changes_omitted'][0]:.2f} omitted; F1RadGraph (complete) "
                     f"{s.means['f1radgraph_complete'][0]:.3f}, finding F1 {s.means['finding_f1'][0]:.3f}")
    return lines


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
