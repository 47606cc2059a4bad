"""Two of the demo's answers: the synthetic cohort's own reports scored against the graph beside the copy-prior
baseline (each study's "generated" report is its prior study's), the gap a text-only metric cannot see
(``cxrkg eval reports --baseline reference|copy-prior``, docs/report_scoring.md); and one NIH study's
CXRTrek-format staged questions with the graph's gold answers (``cxrkg cxrtrek generate``, docs/cxrtrek.md),
stage 6 beside the answers of a forecaster trained in the demo (:mod:`flows.demo.forecast`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.score_flow import score_items
from graph.cxrtrek.facts import iter_stage_facts
from graph.cxrtrek.generate import build_sample
from graph.errors import CxrkgError
from graph.formats.cxrtrek import data_of
from graph.report_scoring.facts import cohort_facts
from graph.report_scoring.inputs import baseline_items
from graph.report_scoring.score import StudyResult
from graph.report_scoring.summary import summarise

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
        lines.append(f"{kind:>10}: {s.studies:,} studies; temporal precision {figure(precision)}, recall "
                     f"{figure(recall)}; per study {s.means['changes_contradicted'][0]:.2f} changes contradicted, "
                     f"{s.means['changes_omitted'][0]:.2f} omitted; F1RadGraph (complete) "
                     f"{s.means['f1radgraph_complete'][0]:.3f}, finding F1 {s.means['finding_f1'][0]:.3f}")
    return lines


def figure(value: float | None) -> str:
    """``value`` to three decimals, ``n/a`` for None."""
    return "n/a" if value is None else f"{value:.3f}"


#: the stages the demo shows, and how many questions of each
SHOWN_STAGES, PER_STAGE = (1, 2, 5, 6), 2


def shown_sample(store, patient: str, seed: int = 0) -> dict[str, Any] | None:
    """The CXRTrek-format sample (stages :data:`SHOWN_STAGES`) of one study of ``patient``: the first with a
    prior and a next study, else the first with a prior; None when the patient has no study with a prior.

    Raises:
        graph.store.GraphUnavailable: the server cannot be reached.
    """
    studies = [f for batch in iter_stage_facts(store, [patient]) for f in batch if f.prior_id]
    chosen = next((f for f in studies if f.next_id), studies[0] if studies else None)
    return build_sample(chosen, seed, SHOWN_STAGES) if chosen else None


def cxrtrek_lines(sample: dict[str, Any], forecasts: dict[tuple[str, str], dict[str, Any]] | None = None) -> list[str]:
    """At most :data:`PER_STAGE` questions of each of ``sample``'s stages :data:`SHOWN_STAGES`, as ``stage N
    (task type): question -> answer`` lines under a line naming the study. With ``forecasts`` (the
    forecaster's stage 6 answers by (target, qtype), :func:`flows.demo.forecast.stage6_forecasts`), a stage 6
    line reads ``question -> gold ANSWER | forecaster ANSWER (p P)``, or ``forecaster -`` for a finding it
    does not forecast."""
    data = data_of(sample)
    lines = [f"patient {data['pat_id']}, study {data['study_id']} (prior {data['ref_study_id']}, next "
             f"{data['pos_study_id'] or 'none'}):"]
    for stage in SHOWN_STAGES:
        for c in [c for c in data["content"] if c["stage"] == stage][:PER_STAGE]:
            answer = c["answer"]
            if stage == 6 and forecasts is not None:
                f = forecasts.get((c["target"], c["qtype"]))
                said = f"{f['answer']} (p {f['graph_basis']['probability']:.2f})" if f else "-"
                answer = f"gold {answer} | forecaster {said}"
            lines.append(f"  stage {stage} ({c['task_type']}): {c['question']} -> {answer}")
    return lines


def _forecasts(store, sample: dict[str, Any], nih: Path | None) -> tuple[dict | None, str]:
    """The demo forecaster's stage 6 answers for ``sample`` and a line saying how it was trained, or None
    and a line saying why there are none (no stage 6, no NIH input, torch missing, nothing to train on)."""
    data = data_of(sample)
    if not any(c["stage"] == 6 for c in data["content"]):
        return None, "  (no next study: no stage 6 to forecast)"
    if nih is None:
        return None, "  stage 6 forecaster: not shown (no NIH input to train it on)"
    try:
        from flows.demo.forecast import stage6_forecasts, train_forecaster, training_patients

        trained = train_forecaster(store, training_patients(nih, str(data["pat_id"])))
        forecasts = stage6_forecasts(store, sample, trained.forecaster)
    except ImportError as exc:
        return None, f"  stage 6 forecaster: not shown ({exc.name or exc} is not installed: pip install 'cxrkg[gnn]')"
    except (CxrkgError, OSError) as exc:
        return None, f"  stage 6 forecaster: not shown ({type(exc).__name__}: {exc})"
    f = trained.forecaster
    return forecasts, (f"  forecaster: `cxrkg forecast`'s graph forecaster, small (hidden {f.config.hidden}, "
                       f"{len(f.history)} epochs), trained here on {len(trained.patients):,} other NIH patients in "
                       f"{trained.seconds:.1f} s (reading {trained.read_seconds:.1f}, training "
                       f"{trained.train_seconds:.1f}, the rest importing torch); it answers from the studies up to "
                       "this one, as `cxrkg cxrtrek answer` does")


def cxrtrek_section(console, patient: str | None, nih: Path | None = None) -> None:
    """Print :func:`cxrtrek_lines` of ``patient`` (the NIH patient whose timeline the demo showed) under one
    title line, stage 6 beside the answers of a forecaster trained here on the other patients of the NIH
    input folder ``nih`` (:mod:`flows.demo.forecast`; one line instead when it cannot be, e.g. without
    torch); nothing when there is no patient or no study with a prior."""
    from graph.store import shared_store

    store = shared_store()
    sample = shown_sample(store, patient) if patient else None
    if sample is None:
        return
    forecasts, note = _forecasts(store, sample, nih)
    console.print("CXRTrek's staged questions (Guan et al. 2025) of that patient, gold answers from the graph "
                  "(`cxrkg cxrtrek generate`)" + (", stage 6 beside a forecaster's:" if forecasts else ":"))
    for line in [*cxrtrek_lines(sample, forecasts), note]:
        console.print(line, highlight=False, markup=False)  # "cxrkg[gnn]" and the questions' brackets as written
