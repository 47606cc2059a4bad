"""The demo's NIH ChestX-ray14 section (NIH Clinical Center; Google's adjudicated labels): the cohort loaded,
new effusions per (synthetic) follow-up year, one patient's effusion timeline, where the text-mined and the
adjudicated labels disagree, and three pairs' Medical-Diff-VQA questions answered from the graph."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from flows.console import counts_line, print_rows, print_summary_line
from flows.demo.cohort import FINDING
from flows.demo.loading import ingest_part, loaded_by

if TYPE_CHECKING:
    from rich.console import Console

    from flows.demo.inputs import Made
    from flows.demo.loading import NihAhead


def nih_section(console: Console, out: Path, ahead: NihAhead | None = None, made: Made | None = None) -> str | None:
    """Ingest the NIH ChestX-ray14 cohort (unless ``ahead`` did: then its lines; ``made``: the conversion's
    outcome, :func:`flows.demo.inputs.convert_nih_cached`; None: converted here), then answers on it: new
    effusions per (synthetic) follow-up year, one patient's effusion timeline (that patient is returned), where
    the text-mined labels and the radiologist-adjudicated ones disagree, and three pairs' Medical-Diff-VQA
    questions. Says why and skips (None) when the wheel cannot be fetched."""
    from collections import Counter

    from flows.demo.inputs import convert_nih_cached
    from graph.datasets.nih.convert import ATTRIBUTION, SYNTHETIC_DATES_NOTE
    from graph.store import shared_store
    from graph.store.queries import get_query, run_named

    console.rule("real longitudinal labels: NIH ChestX-ray14 (NIH Clinical Center; Google adjudicated labels)")
    made = None if ahead else made or convert_nih_cached(out)
    if made and made.skipped:
        console.print(f"skipped: {made.skipped}")
        return None
    nih = ahead.converted if ahead else made.value if made else None
    if nih is not None:
        console.print(f"{nih.images:,} images (= studies) of {nih.patients:,} patients, "
                      f"{nih.longitudinal_patients:,} with two or more -> {nih.out}", highlight=False)
    if ahead:
        print_summary_line(ahead.loaded)
    else:
        ingest_part([out], None, out.parent / "nih-rejected.json")
    console.print(loaded_by(bool(ahead)), highlight=False)
    store = shared_store()
    source = f"Source: {ATTRIBUTION.split(';')[0]}. {SYNTHETIC_DATES_NOTE}."

    new = get_query("new_finding_patients")
    onsets = run_named(store, new, new.bind({"finding": FINDING, "start_date": "2000-01-01", "end_date": "2099-12-31"}))
    per_year = Counter(r["study_datetime"][:4] for r in onsets)
    strict = Counter(r["study_datetime"][:4] for r in onsets if r["prior_state"] == "absent")
    console.print("patients with a new pleural effusion per follow-up year (after a stated absence): "
                  + ", ".join(f"{y} {n} ({strict[y]})" for y, n in sorted(per_year.items())[:6]), highlight=False)

    patient = _readable_patient(store, Counter(r["patient_id"] for r in onsets))
    timeline = get_query("finding_timeline")
    rows = run_named(store, timeline, timeline.bind({"patient_id": patient, "finding": FINDING}))[:8]
    rows = [{**r, "date": str(r["study_datetime"])[:10]} for r in rows]
    print_rows(rows, "table", ["study_order", "date", "state", "changes", "sources"],
               title=f"NIH patient {patient}: pleural effusion at each study (cypher/finding_timeline.cypher)",
               wrap=False)
    console.print(source, highlight=False)

    disagreements = get_query("source_disagreements")
    rows = run_named(store, disagreements, disagreements.bind({"patient_id": ""}))
    by_finding = Counter(r["finding"] for r in rows if r["kind"] == "polarity")
    console.print(counts_line("text-mined labels (Wang et al. 2017) against adjudicated ones (Majkowska et al. "
                              "2020), present vs absent, images (cypher/source_disagreements.cypher)",
                              [{"finding": f, "images": n} for f, n in by_finding.most_common()],
                              lambda r: r["finding"], "images"), highlight=False)
    if rows and rows[-1]["truncated"]:
        console.print(f"(the first {len(rows):,} disagreements only: source_disagreements caps its rows)")
    diffvqa_pairs(console, store, sorted({r["patient_id"] for r in onsets})[:200])
    return patient


def _readable_patient(store, onsets_per_patient, max_studies: int = 8) -> str:
    """The patient with the most onsets among the first 50 candidates whose timeline fits a screen."""
    from graph.store.queries import get_query, run_named

    studies = get_query("patient_studies")
    for patient, _ in onsets_per_patient.most_common(50):
        if len(run_named(store, studies, studies.bind({"patient_id": patient}))) <= max_studies:
            return patient
    return next(iter(onsets_per_patient), "13")


def diffvqa_pairs(console: Console, store, patients: list[str]) -> None:
    """Three NIH pairs with their Medical-Diff-VQA questions and the graph's answers (graph.questions)."""
    from graph.questions.generate import example_pairs

    frame = example_pairs(store, patients)
    console.print("Medical-Diff-VQA questions (Hu et al., KDD 2023) on three NIH pairs, answered from the graph "
                  "(`cxrkg diffvqa generate`, `cxrkg diffvqa ask`):", highlight=False)
    for (study, ref, patient), group in frame.groupby(["study_id", "ref_id", "subject_id"], sort=True):
        console.print(f"  patient {patient}: main study {study}, reference study {ref}", highlight=False)
        for question, answer in zip(group["question"], group["answer"], strict=True):
            console.print(f"    {question} [dim]->[/] {answer.strip()}", highlight=False)
