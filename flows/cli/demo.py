"""``cxrkg demo``: the whole path on one machine, as a runnable example.

Starts the local Neo4j when no external one is configured, writes a synthetic cohort, ingests it with
the real RadGraph-XL sample, and prints one patient's worsening pleural effusions from the graph next to
the synthetic ground truth, with the cohort-wide agreement, then the graph statistics. Each part is
loaded the fastest way the project has, and the demo says which: the NIH cohort, by far the largest,
through the bulk import when the database is still empty (so it goes first, its lines printed in its own
section), the small parts through the transactional ingest flow.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.console import Console

from flows.cli.app import app
from flows.cli.common import console, library_log, print_rows, print_summary_line, run_ingest

if TYPE_CHECKING:  # pandas and the driver load inside the commands: the quick commands never need them
    import pandas as pd

FINDING = "pleural effusion"


def sample_paths() -> tuple[Path, Path]:
    """The shipped RadGraph-XL sample (MIT, Stanford-AIMI) and its doc mapping CSV."""
    root = Path(str(resources.files("graph") / "samples" / "radgraph_xl"))
    return root / "expected_processed_annotations.json", root / "doc_mapping.csv"


def worsening_agreement(graph_rows: list[dict], truth: pd.DataFrame) -> tuple[set, set, set]:
    """(graph, truly worsened, truly worsened or new) (study_id, anatomy) pairs of one finding.

    Precision counts a graph worsening as right when the truth is worsened or new: Chest ImaGenome's
    comparison vocabulary has only improved / worsened / no change, so a finding that appears is
    "worsened" there. Recall is over the truly worsened pairs.
    """
    got = {(r["study_id"], r["anatomy"]) for r in graph_rows}
    worse = truth[truth["change"] == "worsened"]
    up = truth[truth["change"].isin(["worsened", "new"])]
    return got, set(zip(worse["study_id"], worse["anatomy"], strict=True)), set(zip(up["study_id"], up["anatomy"], strict=True))


def _truth(cohort: Path) -> pd.DataFrame:
    import pandas as pd

    truth = pd.read_parquet(cohort / "ground_truth.parquet")
    return truth[truth["finding"] == FINDING]


def run_demo(console: Console, out: Path | None, patients: int, seed: int) -> None:
    """The demo, start to end; a local server it had to start is stopped at the end (and on Ctrl-C)."""
    from graph.server import LocalNeo4jServer
    from graph.settings import local_server_settings, neo4j_settings

    server = None
    if not neo4j_settings().external:
        console.rule("local Neo4j")
        server = LocalNeo4jServer(local_server_settings())
        if server.status().running:
            server = None  # the user's running server: left running
        else:
            server.start()
        console.print(f"running at {local_server_settings().bolt_uri}, data in {local_server_settings().data_dir}")
    console.print(f"library log (Prefect, warnings): {library_log()}", highlight=False)
    try:
        _run_sections(console, out, patients, seed)
    finally:
        if server is not None:  # started by the demo: stopped, also on Ctrl-C
            server.stop()
            console.print("Neo4j stopped (the demo started it); `cxrkg db start` brings the graph back to explore")


def _run_sections(console: Console, out: Path | None, patients: int, seed: int) -> None:
    from graph.settings import local_server_settings
    from graph.store import shared_store
    from graph.store.stats import graph_stats
    from graph.synth import write_cohort

    cohort = out or local_server_settings().home / "demo" / f"cohort-{patients}-seed{seed}"
    console.rule(f"synthetic cohort: {patients} patients, seed {seed}")
    if not (cohort / "ground_truth.parquet").exists():
        console.print(write_cohort(cohort, patients=patients, seed=seed).line(), highlight=False)
    else:
        console.print(f"reusing {cohort}")

    nih = _nih_ahead(Path(cohort).parent / "nih")
    console.rule("ingest (Prefect flow)")
    sample, mapping = sample_paths()
    run_ingest([cohort, sample], mapping, Path(cohort) / "rejected.json", progress=False, brief=True)
    console.print(f"loaded by: {TRANSACTIONAL}", highlight=False)

    truth = _truth(cohort)
    store = shared_store()
    per_patient = _worsenings(store, sorted(truth.loc[truth["change"] == "worsened", "patient_id"].unique()))
    got_all: set[tuple[str, str]] = set()
    worse_all: set[tuple[str, str]] = set()
    up_all: set[tuple[str, str]] = set()
    exact = []
    for pid, rows in per_patient.items():
        got, worse, up = worsening_agreement(rows, truth[truth["patient_id"] == pid])
        got_all, worse_all, up_all = got_all | got, worse_all | worse, up_all | up
        if got == worse:
            exact.append((len(worse), pid))
    patient = max(exact)[1] if exact else max(per_patient, key=lambda p: len(per_patient[p]))

    console.rule(f"worsening pleural effusions of patient {patient}")
    t = truth[truth["patient_id"] == patient]
    said = {(r.study_id, r.anatomy): r.change for r in t.itertuples()}
    rows = [{**r, "truth": said.get((r["study_id"], r["anatomy"]), "-")} for r in per_patient[patient]]
    print_rows(rows, "table", ["study_id", "prior_study_id", "anatomy", "sources", "truth", "evidence"],
               title="graph (cypher/worsening_findings.cypher) beside the synthetic ground truth", wrap=False)
    precision = f"{len(got_all & up_all) / len(got_all):.3f}" if got_all else "n/a"
    recall = f"{len(got_all & worse_all) / len(worse_all):.3f}" if worse_all else "n/a"
    console.print(f"cohort, worsened {FINDING} per (study, anatomy): {len(got_all)} in the graph, {len(worse_all)} "
                  f"true; precision {precision}, recall {recall} (reports state only some changes, ~10% noise)",
                  highlight=False)

    iu_section(console, Path(cohort).parent / "iu-extract")
    nih_section(console, Path(cohort).parent / "nih", nih)

    console.rule("graph statistics")
    stats = graph_stats(store)
    nodes, rels = stats["nodes"], stats["relationships"]
    console.print(f"{stats['total_nodes']:,} nodes, {stats['total_relationships']:,} relationships: "
                  + ", ".join(f"{n:,} {what}" for what, n in (
                      ("patients", nodes.get("Patient", 0)), ("studies", nodes.get("Study", 0)),
                      ("observations", nodes.get("Observation", 0)), ("mentions", nodes.get("Mention", 0)),
                      ("progression edges", rels.get("PROGRESSION", 0)))) + " (`cxrkg stats` for all)",
                  highlight=False)
    if stats["orphans"]:
        console.print(f"orphans: {stats['orphans']}")


TRANSACTIONAL = ("transactional ingest (Prefect flow), the fastest way for a part this small or a graph that "
                 "holds data")
BULK = "bulk import (neo4j-admin database import), the fastest way into an empty database"


@dataclass
class NihAhead:
    """The NIH part converted and bulk-loaded before the other parts (see :func:`_nih_ahead`)."""

    converted: Any  # graph.datasets.nih.convert.NIHSummary, or None when converted by an earlier demo
    loaded: Any  # flows.ingest_flow.IngestSummary


def _nih_ahead(out: Path) -> NihAhead | None:
    """The NIH cohort, the demo's largest part (112,120 files), loaded first by the bulk import when the
    local database holds no data yet, which it only can be then; its lines are printed in its section.
    None (the section then loads it transactionally, or says why it skips it) when NEO4J_URI names
    another server, the graph holds data, or the wheel cannot be fetched."""
    from flows.bulk_flow import BulkRefused, bulk_ingest_flow
    from graph.datasets.nih.convert import DatasetUnavailable, convert_nih
    from graph.datasets.wheel import WheelUnavailable
    from graph.settings import neo4j_settings
    from graph.store import shared_store

    if neo4j_settings().external or shared_store().holds_data():
        return None
    try:
        converted = None if (out / "metadata.csv").exists() else convert_nih(out)
    except (DatasetUnavailable, WheelUnavailable):
        return None
    try:
        loaded = bulk_ingest_flow([str(out)], rejected_report=str(out.parent / "nih-rejected.json"))
    except BulkRefused:
        return None
    return NihAhead(converted, loaded)


def _worsenings(store, patients: list[str]) -> dict[str, list[dict]]:
    """Each patient's worsenings of the finding at anatomy level (the ground truth is per study and anatomy)."""
    from graph.store.queries import get_query, run_named

    worsening = get_query("worsening_findings")
    return {pid: run_named(store, worsening, worsening.bind({"patient_id": pid, "finding": FINDING,
                                                            "level": "anatomy"}))
            for pid in patients}


def _counts_line(title: str, rows: list[dict], key, count: str) -> str:
    """``title: a (3), b (2), ...`` from rows of a name and a count."""
    return f"{title}: " + ", ".join(f"{key(r)} ({r[count]:,})" for r in rows)


def iu_section(console: Console, out: Path) -> None:
    """Extract and ingest the 3,955 IU reports (rules extractor) and print their ten most frequent present
    findings and stated changes; says why and skips when the IU wheel cannot be fetched or spaCy is missing."""
    from graph.datasets.wheel import WheelUnavailable, fetch_wheel
    from graph.store import read_statements as rs
    from graph.store import shared_store

    console.rule("real reports: Indiana University chest X-rays (CC BY-NC-ND 4.0, Demner-Fushman et al. 2016)")
    try:
        import medspacy  # noqa: F401

        fetch_wheel()
    except (WheelUnavailable, ImportError) as exc:
        console.print(f"skipped: {exc}")
        return
    from flows.extract_flow import extract_flow

    result = extract_flow("iu", str(out))
    console.print(f"{result.extraction.documents:,} reports extracted, {len(result.extraction.rejections)} rejected "
                  f"({Path(result.extraction.rejected_report or '').name or 'none'}); each its own patient, "
                  "dates redacted", highlight=False)
    console.print(f"loaded by: {TRANSACTIONAL}", highlight=False)
    store = shared_store()
    console.print(_counts_line("most frequent present findings (reports)", store.read(rs.IU_TOP_FINDINGS)[:6],
                               lambda r: r["finding"], "reports"), highlight=False)
    console.print(_counts_line("most frequent stated changes (reports)", store.read(rs.IU_TOP_CHANGES)[:4],
                               lambda r: f"{r['finding']} {r['change']}", "reports"), highlight=False)


def _readable_patient(store, onsets_per_patient, max_studies: int = 8) -> str:
    """The patient with the most onsets among the first 50 candidates whose timeline fits a screen."""
    from graph.store.queries import get_query, run_named

    studies = get_query("patient_studies")
    for patient, _ in onsets_per_patient.most_common(50):
        if len(run_named(store, studies, studies.bind({"patient_id": patient}))) <= max_studies:
            return patient
    return next(iter(onsets_per_patient), "13")


def nih_section(console: Console, out: Path, ahead: NihAhead | None = None) -> None:
    """Convert and ingest the NIH ChestX-ray14 cohort (unless ``ahead`` did: then its lines), then
    answers on it: new effusions per (synthetic) follow-up year, one patient's effusion timeline, where the
    text-mined labels and the radiologist-adjudicated ones disagree, and three pairs' Medical-Diff-VQA
    questions. Says why and skips when the wheel
    cannot be fetched."""
    from collections import Counter

    from graph.datasets.nih.convert import ATTRIBUTION, SYNTHETIC_DATES_NOTE, DatasetUnavailable, convert_nih
    from graph.datasets.wheel import WheelUnavailable
    from graph.store import shared_store
    from graph.store.queries import get_query, run_named

    console.rule("real longitudinal labels: NIH ChestX-ray14 (NIH Clinical Center; Google adjudicated labels)")
    try:
        nih = ahead.converted if ahead else None if (out / "metadata.csv").exists() else convert_nih(out)
    except (DatasetUnavailable, WheelUnavailable) as exc:
        console.print(f"skipped: {exc}")
        return
    if nih is not None:
        console.print(f"{nih.images:,} images (= studies) of {nih.patients:,} patients, "
                      f"{nih.longitudinal_patients:,} with two or more -> {nih.out}", highlight=False)
    if ahead:
        print_summary_line(ahead.loaded)
    else:
        run_ingest([out], None, out.parent / "nih-rejected.json", progress=False, brief=True)
    console.print(f"loaded by: {BULK if ahead else TRANSACTIONAL}", highlight=False)
    store = shared_store()
    source = f"Source: {ATTRIBUTION.split(';')[0]}. {SYNTHETIC_DATES_NOTE}."

    new = get_query("new_finding_patients")
    onsets = run_named(store, new, new.bind({"finding": FINDING, "start_date": "2000-01-01", "end_date": "2099-12-31"}))
    per_year = Counter(r["study_datetime"][:4] for r in onsets)
    strict = Counter(r["study_datetime"][:4] for r in onsets if r["prior_state"] == "absent")
    console.print("patients with a new pleural effusion per follow-up year (after a stated absence): "
                  + ", ".join(f"{y} {n} ({strict[y]})" for y, n in
                                                                      sorted(per_year.items())[:6]), highlight=False)

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
    console.print(_counts_line("text-mined labels (Wang et al. 2017) against adjudicated ones (Majkowska et al. "
                               "2020), present vs absent, images (cypher/source_disagreements.cypher)",
                               [{"finding": f, "images": n} for f, n in by_finding.most_common()],
                               lambda r: r["finding"], "images"), highlight=False)
    if rows and rows[-1]["truncated"]:
        console.print(f"(the first {len(rows):,} disagreements only: source_disagreements caps its rows)")
    diffvqa_pairs(console, store, sorted({r["patient_id"] for r in onsets})[:200])


def diffvqa_pairs(console: Console, store, patients: list[str]) -> None:
    """Three NIH pairs with their Medical-Diff-VQA questions and the graph's answers (graph.questions)."""
    from graph.questions.generate import example_pairs

    frame = example_pairs(store, patients)
    console.print("Medical-Diff-VQA questions (Hu et al., KDD 2023) on three NIH pairs, answered from the graph "
                  "(`cxrkg diffvqa generate`, `cxrkg ask`):", highlight=False)
    for (study, ref, patient), group in frame.groupby(["study_id", "ref_id", "subject_id"], sort=True):
        console.print(f"  patient {patient}: main study {study}, reference study {ref}", highlight=False)
        for question, answer in zip(group["question"], group["answer"], strict=True):
            console.print(f"    {question} [dim]->[/] {answer.strip()}", highlight=False)


@app.command()
def demo(out: Optional[Path] = typer.Option(None, help="where to write the synthetic cohort "
                                                        "(default: CXRKG_HOME/demo)"),
         patients: int = typer.Option(200, min=2), seed: int = typer.Option(7)) -> None:
    """Start Neo4j if needed, write a synthetic cohort, ingest it and the real RadGraph-XL sample, and
    print one patient's worsening pleural effusions next to the ground truth, then graph statistics."""
    run_demo(console, out, patients, seed)
