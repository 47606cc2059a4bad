"""The bulk first load (``cxrkg ingest --bulk``): check -> plan -> write import files -> stop the local
server -> ``neo4j-admin database import full`` -> start it -> constraints, indexes, vocabulary -> summary.

The files come from the same parsing, checks and derivation as the transactional load
(:class:`graph.ingest.bulk.BulkSink` stands in for the store), so the graph is the same; later runs of
``cxrkg ingest`` continue on top of it transactionally (the SourceFile rows record what was loaded).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter, deque
from datetime import datetime
from pathlib import Path
from typing import Iterator

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.ingest_flow import DEFAULT_BATCH_FILES, IngestSummary, progress_bar, stage, write_report
from graph.ingest import BatchResult, IngestPlan, InputFile, discover, parsed_ahead, plan_ingest, store_files
from graph.ingest.bulk import BulkSink, write_part
from graph.ingest.import_files import ImportFiles, keep_files
from graph.ingest.plan import with_fingerprint
from graph.ingest.schedule import forked_pool
from graph.server import LocalNeo4jServer
from graph.settings import local_server_settings, neo4j_settings
from graph.store import reset_shared_store, shared_store
from graph.vocabulary import vocabulary

MAX_WORKERS = 8  # processes writing batches at once


class BulkRefused(RuntimeError):
    """A bulk load cannot run here: another server than the local one, or a database that holds data.
    The message says what to do instead."""


@task(cache_policy=NO_CACHE)
def check_target(server: LocalNeo4jServer) -> None:
    """Refuse unless the target is the local server and its database holds no data. A stopped server whose
    database exists is started to look (the import stops it again).

    Raises:
        BulkRefused: NEO4J_URI names another server, or the local database holds data.
    """
    settings = neo4j_settings()
    if settings.external:
        raise BulkRefused(f"--bulk writes the local server's files; NEO4J_URI names {settings.uri}. Load "
                          "without --bulk, or unset NEO4J_URI to use the local server")
    running = server.status().running
    if not running and not (server.settings.data_dir / "databases" / (settings.database or "neo4j")).exists():
        return
    server.start()
    try:
        holds_data = shared_store().holds_data()
    finally:
        reset_shared_store()
    if holds_data:
        raise BulkRefused("the database already holds data; --bulk only makes a first load. Load without "
                          "--bulk to add to it, or `cxrkg db stop`, delete "
                          f"{server.settings.data_dir} and `cxrkg db start --fresh` to start over")


def _write_files(the_plan: IngestPlan, sink: BulkSink, doc_mapping: str | None, batch_files: int,
                 summary: IngestSummary, progress: bool) -> None:
    """Every batch through :func:`graph.ingest.store_files` into import files, then the parked patients.

    When every file's patient is known before parsing, batches are independent and are written by
    worker processes into files of their own (:func:`graph.ingest.bulk.write_part`); otherwise a file read
    later (a report file of many patients) may hold more of a patient, and the batches are written here,
    one after the other, parsed one ahead.
    """
    batches = the_plan.batches(batch_files)
    hinted = all(f.path in the_plan.patient_hints for f in the_plan.load)
    unlinked: set[str] = set()
    patients: set[str] = set()
    unmapped: Counter = Counter()
    with progress_bar(progress) as bar:
        job = bar.add_task("writing import files", total=len(the_plan.load))
        written = _in_parts(the_plan, batches, doc_mapping, sink) if hinted else _in_turn(the_plan, batches,
                                                                                            doc_mapping, sink)
        for files, result in written:
            summary.add_batch(result)
            unmapped.update(result.unmapped_terms)
            unlinked = (unlinked - result.linked) | (result.patients - result.linked)
            patients |= result.patients
            bar.advance(job, len(files))
    sink.link_patients(unlinked)
    summary.patients_relinked = len(patients)
    summary.unmapped_terms = sum(unmapped.values())
    summary.top_unmapped = unmapped.most_common(10)


def _in_turn(the_plan: IngestPlan, batches: list[list[InputFile]], doc_mapping: str | None,
             sink: BulkSink) -> Iterator[tuple[list[InputFile], BatchResult]]:
    vocab = vocabulary()
    for files, parsed in parsed_ahead(batches, doc_mapping):
        files = [with_fingerprint(f) for f in files]
        result = store_files(sink, files, parsed, vocab, set(), the_plan.metadata, set())
        sink.end_batch()
        yield files, result


def _in_parts(the_plan: IngestPlan, batches: list[list[InputFile]], doc_mapping: str | None,
              sink: BulkSink) -> Iterator[tuple[list[InputFile], BatchResult]]:
    """Batches written by worker processes, absorbed in batch order; at most two per worker in flight.
    One worker more than cores: a worker waiting on its files leaves the core to another (NIH cohort on 2
    cores: 29 s with 3 workers, 31 s with 2). Forked, as :func:`graph.ingest.parsed_ahead`."""
    workers = max(1, min((os.cpu_count() or 1) + 1, MAX_WORKERS, len(batches)))
    with forked_pool(workers) as pool:
        pending: deque = deque()
        for k, files in enumerate(batches):
            pending.append((files, pool.submit(write_part, files, doc_mapping, the_plan.metadata,
                                               the_plan.patients_within(files), sink.files.folder / "parts", k,
                                               sink.loaded_at)))
            while len(pending) >= 2 * workers or (pending and k == len(batches) - 1):
                done, future = pending.popleft()
                part = future.result()
                sink.absorb(part)
                yield done, part.result


def _count_rows(summary: IngestSummary, sink: BulkSink) -> None:
    """The summary's studies, observations and progression edges: rows of their import files."""
    rows: Counter[str] = Counter()
    for f in sink.listing():
        rows[f.group] += f.rows
    summary.studies, summary.observations = rows["nodes=Study"], rows["nodes=Observation"]
    summary.progression_edges = rows["relationships=PROGRESSION"]


@flow(name="cxrkg-bulk-ingest", log_prints=False)
def bulk_ingest_flow(paths: list[str], doc_mapping: str | None = None, batch_files: int = DEFAULT_BATCH_FILES,
                     rejected_report: str | None = "cxrkg-rejected.json", progress: bool = False,
                     keep_import_files: str | None = None) -> IngestSummary:
    """Load a first cohort into the empty local database through ``neo4j-admin database import full``.

    Args: as :func:`flows.ingest_flow.ingest_flow`; ``keep_import_files``: a new folder to move the import
        files to, with their listing (:func:`graph.ingest.import_files.keep_files`), instead of deleting them.

    Returns:
        the run summary (``elements_created``: nodes plus relationships imported, as are its studies,
        observations and progression edges; ``stage_seconds``: check, plan, files, import, start, schema).

    Raises:
        BulkRefused: the target is not the local server, or its database holds data.
        graph.ingest.bulk.BulkInputError: the same record in two files (nothing imported).
        graph.server.ServerError: the import or the restart failed.
    """
    started = time.perf_counter()
    stages: dict[str, float] = {}
    server = LocalNeo4jServer(local_server_settings())
    vocab = vocabulary()
    with stage(stages, "check"):
        check_target(server)
    with stage(stages, "plan"):
        # fingerprints are taken where each file is read anyway (a first load compares them with nothing)
        skipped: list = []
        files = discover([Path(p) for p in paths], exclude=[Path(rejected_report)] if rejected_report else [],
                         fingerprints=False, skipped=skipped)
        the_plan = plan_ingest(files, {}, vocab.version)
        the_plan.skipped = skipped
    summary = IngestSummary(files_seen=len(the_plan.load), rejections=list(the_plan.rejections))
    server.settings.home.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="import-", dir=server.settings.home))
    try:
        sink = BulkSink(ImportFiles(folder), vocab, datetime.now())
        with stage(stages, "files"):
            _write_files(the_plan, sink, doc_mapping, batch_files, summary, progress)
            sink.finish(vocab)
        summary.elements_created = sum(f.rows for f in sink.listing())
        with stage(stages, "import"):
            server.stop()
            server.import_database(sink.listing(), folder, neo4j_settings().database or "neo4j")
        if keep_import_files:
            keep_files(sink.listing(), folder, Path(keep_import_files))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    with stage(stages, "start"):
        server.start(fresh=True)  # the import just made the database, also where the home's data were gone
    with stage(stages, "schema"):
        reset_shared_store()
        shared_store().ensure_schema(vocab)
    _count_rows(summary, sink)
    write_report(summary, rejected_report)
    summary.seconds = time.perf_counter() - started
    summary.stage_seconds = {k: round(v, 3) for k, v in stages.items()}
    get_run_logger().info("bulk load: %d files, %d elements imported, %d rejections in %.1fs (stages %s)",
                          summary.files_loaded, summary.elements_created, len(summary.rejections), summary.seconds,
                          summary.stage_seconds)
    return summary

