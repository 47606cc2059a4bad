"""The ingest flow: discover -> plan (incremental) -> load batches -> link patients -> summary.

Thin by design: each task calls a plain function of ``graph.ingest`` / ``graph.store``. Tasks receive
file paths and ids, never the driver (it is process-wide, see ``graph.store.shared_store``); one task
per batch of files, never per record.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.annotations import quote
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from graph.ingest import (
    BatchResult,
    IngestPlan,
    InputFile,
    batch_keys,
    discover,
    parsed_ahead,
    plan_ingest,
    store_files,
    with_known_fingerprints,
    write_window,
)
from graph.records import ParsedFile, Rejection, write_rejections
from graph.store import LINK_CHUNK, WriteCounts, shared_store
from graph.store.stats import summary_counts
from graph.vocabulary import vocabulary

DEFAULT_BATCH_FILES = 500  # 2,000-patient benchmark: faster than 1,000 (smaller transactions, less GC) and than 250
WRITERS = 2  # write transactions in flight at once (Neo4j runs them on separate cores)


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
    #: relations of the RadGraph files read that RadGraph's schema does not have ("ANAT modify OBS") -> count
    out_of_schema: dict[str, int] = field(default_factory=dict)
    #: what the releases read add that the readers keep (graph.records.ParsedFile.variants) -> records
    variants: dict[str, int] = field(default_factory=dict)
    rejections: list[Rejection] = field(default_factory=list)
    rejected_report: str | None = None
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)  # schema, plan, load, link, count, report
    stage_cores: dict[str, float] = field(default_factory=dict)  # bulk load: busy cores per stage (flows.cpu)
    workers: int = 0  # processes (or Dask worker threads) that wrote batches; 0: not reported
    files_cpu_seconds: float = 0.0  # the bulk files stage's CPU: this process and its local worker processes
    # (0 when the files stage ran on Dask, whose workers' CPU this process cannot see)
    engine: str = ""  # what ran them ("local processes", "Dask local cluster", "Dask at ADDR", "in turn: ...")
    inputs: list[IngestSummary] = field(default_factory=list)  # a bulk load of several inputs: each its own

    @property
    def ok(self) -> bool:
        return not self.rejections

    def add_batch(self, result: BatchResult) -> None:
        """Count one written batch in."""
        self.files_loaded += result.files_loaded
        self.files_rejected += result.files_rejected
        self.records_loaded += result.records
        self.mentions_loaded += result.mentions
        self.elements_created += result.elements.nodes + result.elements.relationships
        self.rejections += result.rejections
        self.ambiguous_comparisons += result.ambiguous_comparisons
        for name, n in result.out_of_schema.items():
            self.out_of_schema[name] = self.out_of_schema.get(name, 0) + n
        for name, n in result.variants.items():
            self.variants[name] = self.variants.get(name, 0) + n

    def stage_lines(self, batches: int, relinked_after_load: int) -> dict[str, str]:
        """What each stage did, for the log."""
        return {"schema": "constraints, indexes, vocabulary",
                "plan": f"{self.files_seen} files, {self.files_seen - self.files_unchanged} to load, "
                        f"{self.files_unchanged} unchanged",
                "load": f"{batches} batches, {self.files_loaded} files loaded, {self.files_rejected} rejected, "
                        f"{self.records_loaded} records, {self.mentions_loaded} mentions",
                "link": f"{self.patients_relinked} patients relinked ({relinked_after_load} after the load stage, "
                        "the others in their load batch)",
                "count": f"{self.studies} studies, {self.observations} observations, "
                         f"{self.progression_edges} progression edges",
                "report": f"{len(self.rejections)} rejections"}


@task(cache_policy=NO_CACHE)
def prepare_schema() -> None:
    """Constraints, indexes and vocabulary nodes exist before any load."""
    shared_store().ensure_schema(vocabulary())


@task(cache_policy=NO_CACHE)
def plan(paths: list[str], exclude: list[str]) -> IngestPlan:
    """Discover the input files under ``paths`` (less ``exclude``) and plan what to load against the
    hashes the graph holds (files whose size and modification time are unchanged are not read)."""
    skipped: list[Rejection] = []
    files = discover((Path(p) for p in paths), exclude=(Path(p) for p in exclude), fingerprints=False,
                     skipped=skipped)
    known = shared_store().source_file_hashes(f.path for f in files)
    files = with_known_fingerprints(files, known)  # reads only files whose size or mtime changed
    result = plan_ingest(files, known, vocabulary().version)
    result.skipped = skipped
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
    """Relink the patients (derived states and events) that no batch relinked itself."""
    started = time.perf_counter()
    counts = shared_store().link_patients(patient_ids)
    get_run_logger().info("link: %d patients, %d elements in %.2fs", len(patient_ids),
                          counts.nodes + counts.relationships, time.perf_counter() - started)
    return counts


def progress_bar(enabled: bool) -> Progress:
    """A rich progress bar on the terminal (disabled: draws nothing)."""
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
        counts and seconds, and ``summary.stage_seconds`` holds the seconds per stage (``schema``: what the
        schema step took beyond the plan, beside which it runs).
    """
    started = time.perf_counter()
    stages: dict[str, float] = {"schema": 0.0}
    schema = prepare_schema.submit()  # server work: it runs while this process plans
    with stage(stages, "plan"):
        the_plan = plan(paths, ([rejected_report] if rejected_report else []) + list(exclude or []))
    with stage(stages, "schema"):
        schema.result()
    summary = IngestSummary(files_seen=len(the_plan.load) + len(the_plan.unchanged),
                            files_unchanged=len(the_plan.unchanged), rejections=list(the_plan.rejections))
    batches = the_plan.batches(batch_files)
    with progress_bar(progress) as bar, stage(stages, "load"):
        unlinked = _load(the_plan, batches, doc_mapping, summary, bar)
    with progress_bar(progress) as bar, stage(stages, "link"):
        resumed = set(shared_store().unlinked_patients()) - unlinked  # stored by a run that ended before its link
        summary.patients_relinked += len(resumed)
        unlinked |= resumed
        _link(sorted(unlinked), summary, bar)
    with stage(stages, "count"):
        summary.studies, summary.observations, summary.progression_edges = summary_counts(shared_store())
    with stage(stages, "report"):
        if summary.rejections and rejected_report:
            write_rejections(Path(rejected_report), summary.rejections)
            summary.rejected_report = str(Path(rejected_report).resolve())
    summary.seconds = time.perf_counter() - started
    summary.stage_seconds = {k: round(v, 3) for k, v in stages.items()}
    logger = get_run_logger()
    for name, line in summary.stage_lines(len(batches), len(unlinked)).items():
        logger.info("stage %s: %s in %.2fs", name, line, stages[name])
    logger.info("summary: %d files loaded, %d unchanged, %d rejections, %d elements in %.1fs",
                summary.files_loaded, summary.files_unchanged, len(summary.rejections), summary.elements_created,
                summary.seconds)
    return summary


def _load(the_plan: IngestPlan, batches: list[list[InputFile]], doc_mapping: str | None, summary: IngestSummary,
          bar: Progress) -> set[str]:
    """Write the batches, parsed one ahead, two at a time where independent; returns the patients still to
    relink (written, but not relinked by the batch that wrote them last)."""
    job = bar.add_task("loading files", total=len(the_plan.load))
    patients: set[str] = set()
    unlinked: set[str] = set()
    unmapped: Counter = Counter()

    def jobs():
        for files, parsed in parsed_ahead(batches, doc_mapping):
            changed = {f.path for f in files} & the_plan.changed
            yield (files, parsed, changed), batch_keys(parsed, changed)

    def start(job_args):
        files, parsed, changed = job_args
        # quote(): Prefect would otherwise walk every parsed record looking for futures (2 s a batch)
        return store_batch.submit(files, quote(parsed), changed, the_plan.metadata, the_plan.patients_within(files))

    for (files, _, _), result in write_window(jobs(), start, WRITERS):
        summary.add_batch(result)
        unmapped.update(result.unmapped_terms)
        patients.update(result.patients)
        # batches sharing a patient are written one after the other, and come back in that order
        unlinked.difference_update(result.linked)
        unlinked.update(result.patients - result.linked)
        bar.advance(job, len(files))
    summary.patients_relinked = len(patients)
    summary.unmapped_terms = sum(unmapped.values())
    summary.top_unmapped = unmapped.most_common(10)
    return unlinked


def _link(ids: list[str], summary: IngestSummary, bar: Progress) -> None:
    """Relink the patients no load batch relinked, in chunks through the same write window as the load
    (chunks share no patient, so ``WRITERS`` of them run at once)."""
    if not ids:
        return
    job = bar.add_task("linking patients", total=len(ids))
    chunks = ((ids[i:i + LINK_CHUNK], {f"patient:{p}" for p in ids[i:i + LINK_CHUNK]})
              for i in range(0, len(ids), LINK_CHUNK))
    for chunk, counts in write_window(chunks, link.submit, WRITERS):
        summary.elements_created += counts.nodes + counts.relationships
        bar.advance(job, len(chunk))


def write_report(summary: IngestSummary, rejected_report: str | None) -> None:
    """Write the rejected-files report when anything was rejected (and a path is given)."""
    if summary.rejections and rejected_report:
        write_rejections(Path(rejected_report), summary.rejections)
        summary.rejected_report = str(Path(rejected_report).resolve())


@contextmanager
def stage(stages: dict[str, float], name: str) -> Iterator[None]:
    """Time the block into ``stages[name]`` (seconds)."""
    started = time.perf_counter()
    yield
    stages[name] = time.perf_counter() - started
