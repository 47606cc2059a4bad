"""``cxrkg demo``: the whole path on one machine, as a runnable example (``make demo``).

Three inputs are made side by side in worker processes (:mod:`flows.demo.inputs`): a synthetic cohort with its
ground truth, NIH ChestX-ray14 converted to scene graphs, and the IU reports' rules extraction; they are kept
under ``CXRKG_HOME/demo`` and reused by a later run while what made them is unchanged. Into an empty local
database, the NIH cohort, the synthetic cohort with the real RadGraph-XL sample and the IU extraction go in
one bulk import (``neo4j-admin database import``), which also makes the database and starts the server; when
``NEO4J_URI`` names another server or the graph already holds data, each part is loaded through the
transactional ingest flow instead, and each section says which way its part was loaded.

Then a section per part: the synthetic cohort (one patient's worsening pleural effusions from the graph
beside the ground truth, the cohort-wide precision and recall, and its reports scored against the graph
beside the copy-prior baseline), the IU reports (most frequent findings and stated changes), NIH (new
effusions per follow-up year, one patient's timeline, where text-mined and adjudicated labels disagree,
Medical-Diff-VQA questions on three pairs answered from the graph, and one study's CXRTrek staged questions,
stage 6 beside a forecaster's), and the graph statistics. The last line gives the seconds (and CPU seconds) of
each part. A local server the demo started is stopped at the end.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional

import typer
from rich.console import Console

from flows.cli.app import app
from flows.cli.common import console, library_log, print_rows, print_summary_line, run_ingest

if TYPE_CHECKING:  # pandas and the driver load inside the commands: the quick commands never need them
    import pandas as pd

    from flows.demo.gnn import CohortWorsenings
    from flows.demo.inputs import Made

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
    """The demo, start to end; a local server it had to start is stopped at the end (and on Ctrl-C).

    Into a local home with no database yet, the server is not started first: the NIH bulk import makes the
    database and starts it (one start instead of a start, a stop and a start). A second Ctrl-C or SIGTERM
    ends the demo at once (:func:`_interrupts`). The last line says where the seconds went."""
    from flows.demo.inputs import DemoInputs, start_prefect_api
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings, neo4j_settings

    times = PartTimes()
    server, fresh = None, False
    if not neo4j_settings().external:
        console.rule("local Neo4j")
        server = LocalNeo4jServer(local_server_settings())
        if server.status().running:
            server = None  # the user's running server: left running
        elif (server.settings.data_dir / "databases" / (neo4j_settings().database or "neo4j")).exists():
            with times.part("Neo4j start"):
                server.start()
        else:
            fresh = True  # nothing to look at: the NIH bulk import makes the database and starts the server
    inputs = DemoInputs()  # forked before any thread or connection of this process
    try:
        with _interrupts(server):
            _run_sections(console, out, patients, seed, _Run(inputs, start_prefect_api(), server, fresh, times))
    finally:
        inputs.close()
        if server is not None and server.status().running:  # started by the demo: stopped, also on Ctrl-C
            with times.part("Neo4j stop"):
                server.stop()
            console.print("Neo4j stopped (the demo started it); `cxrkg db start` brings the graph back to explore")
    console.print(times.line(), highlight=False)


class PartTimes:
    """Wall seconds of the demo's parts in the order they ran (and their CPU seconds,
    :func:`flows.cpu.cpu_seconds`), and of the inputs made beside them (:mod:`flows.demo.inputs`, with their
    workers' CPU seconds); :meth:`line` is the demo's last line."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.parts: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.made: dict[str, Made] = {}

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Time the block as part ``name`` (added to an earlier block of that name)."""
        from flows.cpu import cpu_seconds  # psutil, 15 ms at load: not for the commands beside the demo

        started, cpu = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.parts[name] = self.parts.get(name, 0.0) + time.perf_counter() - started
            self.cpu[name] = self.cpu.get(name, 0.0) + cpu_seconds() - cpu

    def beside(self, name: str, made: Made) -> Made:
        """Note an input made beside the parts (its own seconds); returns it."""
        self.made[name] = made
        return made

    def line(self) -> str:
        """``seconds per part: ... (CPU s); made beside them: ...; total ... s, load average ...``."""
        parts = ", ".join(f"{name} {s:.1f} ({self.cpu.get(name, 0.0):.1f})" for name, s in self.parts.items())
        made = ", ".join(f"{name} {m.seconds:.1f} ({m.cpu_seconds:.1f})"
                         + (" (kept from an earlier run)" if m.reused else "") for name, m in self.made.items())
        return (f"seconds per part (CPU s): {parts}; made beside them: {made or 'none'}; total "
                f"{time.perf_counter() - self.started:.1f} s, load average {os.getloadavg()[0]:.2f}")


@contextmanager
def _interrupts(server) -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM: the first interrupts the demo (``KeyboardInterrupt``: the server it
    started is stopped on the way out, as the inputs' workers); a second one, while that clean-up waits
    (on Prefect's API server, already stopped by the same Ctrl-C, or on Neo4j), asks the server to stop
    and ends the process at once with code 130. Prefect's own SIGTERM handler, installed during a flow
    run, hands the signal on to this one. The child guard (:mod:`flows.child_guard`) ends the command's
    other children (Prefect's server, the workers) once it is gone."""
    import signal

    received: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        received.append(signum)
        if len(received) == 1:
            raise KeyboardInterrupt
        try:  # the server the demo started (or was starting) closes its stores and exits by itself
            os.kill(int(server.settings.pid_file.read_text()), signal.SIGTERM)
        except (AttributeError, OSError, ValueError):  # none, or already gone
            pass
        os._exit(130)

    try:
        before = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: the default behaviour
        before = {}
    try:
        yield
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


@dataclass
class _Run:
    """What the sections share: the inputs being made, the thread starting Prefect's API server (joined
    before the first flow run), the server the demo started (or will), whether the database is new (no
    database yet: the NIH cohort is bulk-imported without a look), the timer."""

    inputs: Any  # flows.demo.inputs.DemoInputs
    prefect_api: Any  # threading.Thread
    server: Any  # graph.runtime.server.LocalNeo4jServer, or None
    fresh: bool
    times: PartTimes


def _run_sections(console: Console, out: Path | None, patients: int, seed: int, run: _Run) -> None:
    from flows.demo.inputs import convert_nih_cached, extract_iu_cached, write_cohort_line
    from graph.settings import local_server_settings, neo4j_settings
    from graph.store import shared_store
    from graph.store.stats import graph_stats

    cohort = Path(out or local_server_settings().home / "demo" / f"cohort-{patients}-seed{seed}")
    reuse = (cohort / "ground_truth.parquet").exists()
    if not reuse:
        run.inputs.start("cohort", write_cohort_line, cohort, patients, seed)
    run.inputs.start("nih", convert_nih_cached, cohort.parent / "nih")
    run.inputs.start("iu", extract_iu_cached, cohort.parent / "iu-extract")
    with run.times.part("inputs and bulk load (NIH, cohort, IU)"):
        first = _first_load(cohort, reuse, run)
    nih = first.nih if first else None
    if run.server is not None and not run.server.status().running:  # no bulk load started it
        with run.times.part("Neo4j start"):
            run.server.start()
    if not neo4j_settings().external:
        console.print(f"running at {local_server_settings().bolt_uri}, data in {local_server_settings().data_dir}")
    console.print(f"library log (Prefect, warnings): {library_log()}", highlight=False)

    console.rule(f"synthetic cohort: {patients} patients, seed {seed}")
    with run.times.part("synthetic cohort ingest"):
        if reuse:
            console.print(f"reusing {cohort}")
        else:
            console.print(run.times.beside("synthetic cohort", run.inputs.get("cohort")).value, highlight=False)
        console.rule("ingest (Prefect flow)")
        if first and first.cohort:
            print_summary_line(first.cohort)
        else:
            run.prefect_api.join()
            sample, mapping = sample_paths()
            run_ingest([cohort, sample], mapping, cohort / "rejected.json", progress=False, brief=True)
        console.print(f"loaded by: {BULK if first and first.cohort else TRANSACTIONAL}", highlight=False)
    _cohort_answers(console, cohort, run)

    with run.times.part("IU (load, queries)"):
        iu_section(console, cohort.parent / "iu-extract", run.times.beside("IU extraction", run.inputs.get("iu")),
                   first.iu if first else None)
    with run.times.part("NIH answers"):
        from flows.demo.answers import cxrtrek_section

        patient = nih_section(console, cohort.parent / "nih", nih,
                              None if nih else run.times.beside("NIH conversion", run.inputs.get("nih")))
        cxrtrek_section(console, patient, cohort.parent / "nih")

    with run.times.part("statistics"):
        console.rule("graph statistics")
        stats = graph_stats(shared_store())
    nodes, rels = stats["nodes"], stats["relationships"]
    console.print(f"{stats['total_nodes']:,} nodes, {stats['total_relationships']:,} relationships: "
                  + ", ".join(f"{n:,} {what}" for what, n in (
                      ("patients", nodes.get("Patient", 0)), ("studies", nodes.get("Study", 0)),
                      ("observations", nodes.get("Observation", 0)), ("mentions", nodes.get("Mention", 0)),
                      ("progression edges", rels.get("PROGRESSION", 0)))) + " (`cxrkg stats` for all)",
                  highlight=False)
    if stats["orphans"]:
        console.print(f"orphans: {stats['orphans']}")


def _cohort_answers(console: Console, cohort: Path, run: _Run) -> None:
    with run.times.part("worsening query"):
        worsenings = _worsening_section(console, cohort)
    with run.times.part("worsening GNN"):
        from flows.demo.gnn import worsening_lines

        for line in worsening_lines(cohort, worsenings, FINDING):
            console.print(line, highlight=False, markup=False)  # "cxrkg[gnn]" as written
    with run.times.part("report scoring"):
        from flows.demo.answers import baseline_lines
        from graph.store import shared_store

        console.print("the cohort's own reports scored against the graph, beside copy-prior (each study's prior "
                      "report as its report; `cxrkg score-reports --baseline`):")
        for line in baseline_lines(shared_store(), cohort):
            console.print(line, highlight=False)


def _worsening_section(console: Console, cohort: Path) -> CohortWorsenings:
    """One patient's worsening pleural effusions beside the ground truth, and the cohort's agreement."""
    from flows.demo.answers import figure
    from flows.demo.gnn import CohortWorsenings, precision_recall
    from graph.store import shared_store

    truth = _truth(cohort)
    per_patient = _worsenings(shared_store(), sorted(truth.loc[truth["change"] == "worsened", "patient_id"].unique()))
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
    precision, recall = precision_recall(got_all, worse_all, up_all)
    console.print(f"cohort, worsened {FINDING} per (study, anatomy): {len(got_all)} in the graph, {len(worse_all)} "
                  f"true; precision {figure(precision)}, recall {figure(recall)} (reports state only some changes, "
                  "~10% noise)", highlight=False)
    return CohortWorsenings(list(per_patient), got_all, worse_all, up_all)


TRANSACTIONAL = ("transactional ingest (Prefect flow), the fastest way for a part this small or a graph that "
                 "holds data")
BULK = "bulk import (neo4j-admin database import), the fastest way into an empty database"


@dataclass
class NihAhead:
    """The NIH part converted and bulk-loaded before the other parts (see :func:`_first_load`)."""

    converted: Any  # graph.datasets.nih.convert.NIHSummary (kept from an earlier demo's conversion or made now)
    loaded: Any  # flows.ingest_flow.IngestSummary


@dataclass
class FirstLoad:
    """What :func:`_first_load` bulk-imported: each part's own summary, None for a part it did not load."""

    nih: NihAhead | None
    cohort: Any  # flows.ingest_flow.IngestSummary (the cohort and the RadGraph-XL sample)
    iu: Any  # flows.ingest_flow.IngestSummary (the IU extraction's shards)


def _first_load(cohort: Path, reuse: bool, run: _Run) -> FirstLoad | None:
    """Every part into the empty local database in one bulk import (:func:`flows.bulk_flow.bulk_ingest_flow`
    with several inputs, each of its own doc mapping: one files stage, one ``neo4j-admin database import``,
    one start, one schema step), the NIH cohort (112,120 files, written by the workers) first, the cohort
    with the RadGraph-XL sample and the IU extraction in turn beside it. Waits for the inputs. None (each
    section then loads its part transactionally, or says why it skips it) when NEO4J_URI names another
    server or the graph holds data; a part whose input cannot be made (the wheel cannot be fetched) is
    left out."""
    from flows.bulk_flow import BulkRefused, bulk_ingest_flow
    from graph.settings import neo4j_settings
    from graph.store import shared_store

    if neo4j_settings().external or not (run.fresh or not shared_store().holds_data()):
        return None
    if not reuse:
        run.times.beside("synthetic cohort", run.inputs.get("cohort"))
    nih = run.times.beside("NIH conversion", run.inputs.get("nih"))
    iu = run.times.beside("IU extraction", run.inputs.get("iu"))
    sample, mapping = sample_paths()
    inputs: dict[str, tuple[list[str], str | None]] = {"cohort": ([str(cohort), str(sample)], str(mapping))}
    if not nih.skipped:
        inputs = {"nih": ([str(cohort.parent / "nih")], None), **inputs}
    if not iu.skipped and iu.value.documents:
        inputs["iu"] = ([iu.value.radgraph_dir], iu.value.doc_mapping)
    (paths, doc_mapping), *also = inputs.values()
    run.prefect_api.join()
    try:
        loaded = bulk_ingest_flow(paths, doc_mapping=doc_mapping, also=also,
                                  rejected_report=str(cohort.parent / "demo-rejected.json"))
    except BulkRefused:
        return None
    parts = dict(zip(inputs, loaded.inputs or [loaded], strict=True))
    return FirstLoad(NihAhead(nih.value, parts["nih"]) if "nih" in parts else None, parts["cohort"], parts.get("iu"))


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


def iu_section(console: Console, out: Path, made: Made | None = None, loaded: Any = None) -> None:
    """Load the 3,955 IU reports' rules extraction (``made``: :func:`flows.demo.inputs.extract_iu_cached`'s
    outcome; None: extracted here) through the ingest flow, as ``cxrkg extract iu --ingest`` does, unless
    the bulk import loaded it (``loaded``: its summary), and print their most frequent present findings and
    stated changes; says why and skips when the IU wheel cannot be fetched or spaCy is missing."""
    from flows.demo.inputs import extract_iu_cached
    from flows.extract_flow import INGEST_BATCH_FILES
    from flows.ingest_flow import ingest_flow
    from graph.store import read_statements as rs
    from graph.store import shared_store

    console.rule("real reports: Indiana University chest X-rays (CC BY-NC-ND 4.0, Demner-Fushman et al. 2016)")
    made = made or extract_iu_cached(out)
    if made.skipped:
        console.print(f"skipped: {made.skipped}")
        return
    extraction = made.value
    if extraction.documents and loaded is None:
        ingest_flow([extraction.radgraph_dir], doc_mapping=extraction.doc_mapping, batch_files=INGEST_BATCH_FILES,
                    rejected_report=str(out / "rejected-ingest.json"))
    console.print(f"{extraction.documents:,} reports extracted, {len(extraction.rejections)} rejected "
                  f"({Path(extraction.rejected_report or '').name or 'none'}); each its own patient, "
                  "dates redacted", highlight=False)
    console.print(f"loaded by: {BULK if loaded else TRANSACTIONAL}", highlight=False)
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


def nih_section(console: Console, out: Path, ahead: NihAhead | None = None, made: Made | None = None) -> str | None:
    """Ingest the NIH ChestX-ray14 cohort (unless ``ahead`` did: then its lines; ``made``: the conversion's
    outcome, :func:`flows.demo.inputs.convert_nih_cached`; None: converted here), then
    answers on it: new effusions per (synthetic) follow-up year, one patient's effusion timeline, where the
    text-mined labels and the radiologist-adjudicated ones disagree, and three pairs' Medical-Diff-VQA
    questions. Says why and skips when the wheel
    cannot be fetched."""
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
    return patient


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
def demo(out: Optional[Path] = typer.Option(None, help="the synthetic cohort's folder; the NIH and IU inputs are "
                                                        "kept beside it (default: CXRKG_HOME/demo/cohort-N-seedS)"),
         patients: int = typer.Option(200, min=2, help="patients of the synthetic cohort"),
         seed: int = typer.Option(7, help="the synthetic cohort's random seed (the same seed writes the same "
                                          "cohort)")) -> None:
    """Load NIH ChestX-ray14, a synthetic cohort with the real RadGraph-XL sample and the IU reports'
    extractions into Neo4j (one bulk import into an empty local database, else the ingest flow), then
    print a section per part: the synthetic cohort against its ground truth and its reports scored against
    the graph beside copy-prior, IU, NIH with Medical-Diff-VQA questions, the graph statistics, and the
    seconds of each part."""
    run_demo(console, out, patients, seed)
