"""Two of the demo's answers: the synthetic cohort's own reports scored against the graph beside the copy-prior
baseline (each study's "generated" report is its prior study's), the gap a text-only metric cannot see
(``cxrkg score-reports --baseline reference|copy-prior``, docs/report_scoring.md); and one NIH study's
CXRTrek-format staged questions with the graph's gold answers (``cxrkg cxrtrek generate``, docs/cxrtrek.md)."""

from __future__ import annotations

from pathlib import Path

from graph.cxrtrek.facts import iter_stage_facts
from graph.cxrtrek.generate import build_sample
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


#: the stages the demo shows, and how many questions of each
SHOWN_STAGES, PER_STAGE = (1, 2, 5, 6), 2


def cxrtrek_lines(store, patient: str, seed: int = 0) -> list[str]:
    """Stages 1, 2, 5 and 6 of one study of ``patient`` (the first with a prior and a next study, else the
    first with a prior), at most :data:`PER_STAGE` questions each, as ``stage N (task type): question ->
    answer`` lines with the first line naming the study; empty when the patient has no such study.

    Raises:
        graph.store.GraphUnavailable: the server cannot be reached.
    """
    studies = [f for batch in iter_stage_facts(store, [patient]) for f in batch if f.prior_id]
    chosen = next((f for f in studies if f.next_id), studies[0] if studies else None)
    sample = build_sample(chosen, seed, SHOWN_STAGES) if chosen else None
    if sample is None:
        return []
    data = sample["data_dict"]["cxrtrek_data"]
    lines = [f"patient {data['pat_id']}, study {data['study_id']} (prior {data['ref_study_id']}, next "
             f"{data['pos_study_id'] or 'none'}):"]
    for stage in SHOWN_STAGES:
        items = [c for c in data["content"] if c["stage"] == stage][:PER_STAGE]
        lines += [f"  stage {stage} ({c['task_type']}): {c['question']} -> {c['answer']}" for c in items]
    return lines


def cxrtrek_section(console, patient: str | None) -> None:
    """Print :func:`cxrtrek_lines` of ``patient`` (the NIH patient whose timeline the demo showed) under one
    title line; nothing when there is no patient or no study with a prior."""
    from graph.store import shared_store

    lines = cxrtrek_lines(shared_store(), patient) if patient else []
    if lines:
        console.print("CXRTrek's staged questions (Guan et al. 2025) of that patient, gold answers from the graph "
                      "(`cxrkg cxrtrek generate`):")
        for line in lines:
            console.print(line, highlight=False)
