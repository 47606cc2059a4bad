"""The ingest flow: discover -> plan (incremental) -> load batches -> link patients -> summary.

Thin by design: each task calls a plain function of ``graph.ingest`` / ``graph.store``. Tasks receive
file paths and ids, never the driver (it is process-wide, see ``graph.store.shared_store``); one task
per batch of files, never per record.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter, deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture
from prefect.utilities.annotations import quote
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from graph.ingest import (BatchResult, InputFile, IngestPlan, StreamedFile, discover, parse_files,
                          parse_files_with_packaged_vocabulary, plan_ingest, store_files)
from graph.records import ParsedFile, Rejection, write_rejections
from graph.store.stats import label_counts
from graph.store import LINK_CHUNK, WriteCounts, shared_store
from graph.vocabulary import vocabulary

DEFAULT_BATCH_FILES = 500  # 2,000-patient benchmark: faster than 1,000 (smaller transactions, less GC) and than 250
WRITERS = 2  # write transactions in flight at once (Neo4j runs them on separate cores)


def _batch_keys(parsed: list[ParsedFile], changed: set[str]) -> set[str] | None:
    """The patients and studies a parsed batch writes; None when not all are known before writing
    (a streamed file, or a changed file whose earlier records may name others)."""
    if any(isinstance(pf, StreamedFile) or pf.path in changed for pf in parsed):
        return None
    return {key for pf in parsed for s in pf.studies for key in (f"patient:{s.patient_id}", f"study:{s.study_id}")}


def _independent(keys: set[str] | None, in_flight: deque) -> bool:
    """Whether a batch may be written while the in-flight ones are: no shared patient (whose lock it
    would wait for) and no shared study (whose owner check must see the other batch's commit)."""
    return keys is not None and all(other is not None and not keys & other for _, _, other in in_flight)


@dataclass
class IngestSummary:
    """The end-of-run summary printed by ``cxrkg ingest`` and published as a flow result."""

    files_seen: int = 0
    files_loaded: int = 0
    files_unchanged: int = 0
    files_rejected: int = 0
    records_loaded: int = 0
    mentions_loaded: int = 0
    elements_created: int = 0
    patients_relinked: int = 0
    studies: int = 0
    observations: int = 0
    progression_edges: int = 0
    unmapped_terms: int = 0
    top_unmapped: list[tuple[str, int]] = field(default_factory=list)
    ambiguous_comparisons: int = 0
    rejections: list[Rejection] = field(default_factory=list)
    rejected_report: str | None = None
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)  # schema, plan, load, link, count, report

    @property
    def ok(self) -> bool:
        return not self.rejections


@task(cache_policy=NO_CACHE)
def prepare_schema() -> None:
    """Constraints, indexes and vocabulary nodes exist before any load."""
    shared_store().ensure_schema(vocabulary())


@task(cache_policy=NO_CACHE)
def plan(paths: list[str], exclude: list[str]) -> IngestPlan:
    files = discover((Path(p) for p in paths), exclude=(Path(p) for p in exclude))
    known = shared_store().source_file_hashes(f.path for f in files)
    result = plan_ingest(files, known, vocabulary().version)
    get_run_logger().info("plan: %d files, %d to load (%d changed), %d unchanged, %d metadata",
                          len(files), len(result.load), len(result.changed), len(result.unchanged),
                          len(result.metadata))
    return result


@task(cache_policy=NO_CACHE)
def store_batch(files: list[InputFile], parsed: list[ParsedFile], changed: set[str], metadata: list[str],
                link: set[str]) -> BatchResult:
    """Check one parsed batch against the graph and write it in one transaction, relinking the
    patients in ``link`` (those with no files in other batches) in the same transaction."""
    started = time.perf_counter()
    result = store_files(shared_store(), files, parsed, vocabulary(), changed, metadata, link)
    get_run_logger().info("load: %d files, %d records, %d mentions, %d elements, %d rejected in %.2fs",
                          len(files), result.records, result.mentions,
                          result.elements.nodes + result.elements.relationships, len(result.rejections),
                          time.perf_counter() - started)
    return result


@task(cache_policy=NO_CACHE)
def link(patient_ids: list[str]) -> WriteCounts:
    started = time.perf_counter()
    counts = shared_store().link_patients(patient_ids)
    get_run_logger().info("link: %d patients, %d elements in %.2fs", len(patient_ids),
                          counts.nodes + counts.relationships, time.perf_counter() - started)
    return counts


def parsed_ahead(batches: list[list[InputFile]], doc_mapping: str | None) -> Iterator[tuple[list[InputFile], list[ParsedFile]]]:
    """Yield (batch, its parsed files), parsing the next batch in a worker process meanwhile.

    Parsing is Python work and writing is Neo4j work, so on two cores they overlap. A process, not a
    thread: parsing in a thread of this process measured 3-4x slower (GIL contention with the driver and
    Prefect's own threads) and did not overlap. A run of a single batch parses inline (no worker start).
    The worker is forked: ``spawn`` would re-run the caller's main module in the worker, which for a
    script without an ``if __name__ == "__main__"`` guard means running the script twice. The forked
    worker only parses files (no driver, no Prefect calls, no logging), which is what makes forking
    a process that has threads safe enough here.
    """
    if len(batches) < 2:
        for files in batches:
            yield files, parse_files(files, vocabulary(), doc_mapping)
        return
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        ahead = pool.submit(parse_files_with_packaged_vocabulary, batches[0], doc_mapping)
        for k, files in enumerate(batches):
            parsed = ahead.result()
            if k + 1 < len(batches):
                ahead = pool.submit(parse_files_with_packaged_vocabulary, batches[k + 1], doc_mapping)
            yield files, parsed


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    disable=not enabled, transient=False)


@flow(name="cxrkg-ingest", log_prints=False)
def ingest_flow(paths: list[str], doc_mapping: str | None = None, batch_files: int = DEFAULT_BATCH_FILES,
                rejected_report: str | None = "cxrkg-rejected.json", progress: bool = False,
                exclude: list[str] | None = None) -> IngestSummary:
    """Load Chest ImaGenome scene graphs, RadGraph-family files and MIMIC-CXR metadata into the graph.

    Args:
        paths: files or folders (searched recursively).
        doc_mapping: CSV mapping RadGraph doc_keys to patient, study and date (see
            ``graph.formats.radgraph.read_doc_mapping``), for doc_keys that are not MIMIC paths.
        batch_files: files per load task (one write transaction per task, split further when a
            batch holds more than 40,000 mentions). A RadGraph file above
            ``graph.ingest.STREAM_THRESHOLD_BYTES`` is streamed inside its batch's load task, one
            transaction per ``graph.ingest.STREAM_CHUNK_DOCS`` documents.
        rejected_report: where to write the JSON list of rejected files and records (only written when
            something was rejected); None to skip.
        progress: show a progress bar on the terminal.
        exclude: files to leave out (e.g. files of a drop folder still being written).

    Returns:
        the run summary; ``summary.ok`` is False when anything was rejected. Every stage logs its
        counts and seconds, and ``summary.stage_seconds`` holds the seconds per stage.
    """
    started = time.perf_counter()
    stages: dict[str, float] = {}
    prepare_schema()
    stages["schema"] = time.perf_counter() - started
    mark = time.perf_counter()
    the_plan = plan(paths, ([rejected_report] if rejected_report else []) + list(exclude or []))
    stages["plan"] = time.perf_counter() - mark
    summary = IngestSummary(files_seen=len(the_plan.load) + len(the_plan.unchanged),
                            files_unchanged=len(the_plan.unchanged))
    mark = time.perf_counter()
    patients: set[str] = set()
    unlinked: set[str] = set()  # patients written but not relinked by the batch that wrote them last
    unmapped: Counter = Counter()
    batches = the_plan.batches(batch_files)
    with _progress(progress) as bar:
        job = bar.add_task("loading files", total=len(the_plan.load))
        def collect(result: BatchResult, files_in_batch: int) -> None:
            summary.files_loaded += result.files_loaded
            summary.files_rejected += result.files_rejected
            summary.records_loaded += result.records
            summary.mentions_loaded += result.mentions
            summary.elements_created += result.elements.nodes + result.elements.relationships
            summary.rejections += result.rejections
            summary.ambiguous_comparisons += result.ambiguous_comparisons
            unmapped.update(result.unmapped_terms)
            patients.update(result.patients)
            # batches sharing a patient are written one after the other, and collected in that order
            unlinked.difference_update(result.linked)
            unlinked.update(result.patients - result.linked)
            bar.advance(job, files_in_batch)

        in_flight: deque[tuple[PrefectFuture, int, set[str] | None]] = deque()
        for files, parsed in parsed_ahead(batches, doc_mapping):
            changed = {f.path for f in files} & the_plan.changed
            keys = _batch_keys(parsed, changed)
            while in_flight and (len(in_flight) >= WRITERS or not _independent(keys, in_flight)):
                future, n, _ = in_flight.popleft()
                collect(future.result(), n)
            # quote(): Prefect would otherwise walk every parsed record looking for futures (2 s a batch)
            in_flight.append((store_batch.submit(files, quote(parsed), changed, the_plan.metadata,
                                                 the_plan.patients_within(files)), len(files), keys))
        while in_flight:
            future, n, _ = in_flight.popleft()
            collect(future.result(), n)
        stages["load"] = time.perf_counter() - mark
        mark = time.perf_counter()
        ids = sorted(unlinked)
        if ids:
            job = bar.add_task("linking patients", total=len(ids))
            chunks = [ids[i:i + LINK_CHUNK] for i in range(0, len(ids), LINK_CHUNK)]
            for i in range(0, len(chunks), WRITERS):
                futures = [link.submit(c) for c in chunks[i:i + WRITERS]]
                for c, future in zip(chunks[i:i + WRITERS], futures):
                    counts = future.result()
                    summary.elements_created += counts.nodes + counts.relationships
                    bar.advance(job, len(c))
        stages["link"] = time.perf_counter() - mark
    summary.patients_relinked = len(patients)
    summary.unmapped_terms = sum(unmapped.values())
    summary.top_unmapped = unmapped.most_common(10)
    mark = time.perf_counter()
    nodes, rels = label_counts(shared_store())
    summary.studies = nodes.get("Study", 0)
    summary.observations = nodes.get("Observation", 0)
    summary.progression_edges = rels.get("PROGRESSION", 0)
    stages["count"] = time.perf_counter() - mark
    mark = time.perf_counter()
    if summary.rejections and rejected_report:
        write_rejections(Path(rejected_report), summary.rejections)
        summary.rejected_report = str(Path(rejected_report).resolve())
    stages["report"] = time.perf_counter() - mark
    summary.seconds = time.perf_counter() - started
    summary.stage_seconds = {k: round(v, 3) for k, v in stages.items()}
    logger = get_run_logger()
    stage_counts = {"schema": "constraints, indexes, vocabulary",
                    "plan": f"{summary.files_seen} files, {len(the_plan.load)} to load, "
                            f"{summary.files_unchanged} unchanged",
                    "load": f"{len(batches)} batches, {summary.files_loaded} files loaded, "
                            f"{summary.files_rejected} rejected, {summary.records_loaded} records, "
                            f"{summary.mentions_loaded} mentions",
                    "link": f"{summary.patients_relinked} patients relinked ({len(ids)} after the load "
                            "stage, the others in their load batch)",
                    "count": f"{summary.studies} studies, {summary.observations} observations, "
                             f"{summary.progression_edges} progression edges",
                    "report": f"{len(summary.rejections)} rejections"}
    for name, seconds in stages.items():
        logger.info("stage %s: %s in %.2fs", name, stage_counts[name], seconds)
    get_run_logger().info("summary: %d files loaded, %d unchanged, %d rejections, %d elements in %.1fs",
                          summary.files_loaded, summary.files_unchanged, len(summary.rejections),
                          summary.elements_created, summary.seconds)
    return summary
