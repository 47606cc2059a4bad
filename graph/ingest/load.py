"""Writing parsed batches: one transaction per batch (split by mention count), big RadGraph files streamed."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Collection, Generator, Iterable, Iterator, Protocol, TypeVar, cast

from graph.formats.metadata import StudyDates
from graph.formats.radgraph import check_json_stream, parse_radgraph_chunks
from graph.ingest.parse import StreamedFile, check_studies, parse_files, read_input
from graph.ingest.plan import SCENE_GRAPH, InputFile, metadata_dates
from graph.ingest.record_checks import check_comparisons, check_record_files, prior_image_ids, record_ids
from graph.records import InputError, ParsedFile, Rejection
from graph.store import Batch, GraphStore, WriteCounts
from graph.vocabulary import Vocabulary

MAX_MENTIONS_PER_WRITE = 40_000
STREAM_CHUNK_DOCS = 2_000  # documents per transaction of a streamed file; read at call time (tests lower it)


class BatchWriter(Protocol):
    """Where :func:`store_files` writes: a :class:`graph.store.GraphStore`, or the bulk load's
    :class:`graph.ingest.bulk.BulkSink` (import files)."""

    def study_owners(self, study_ids: Iterable[str]) -> dict[str, tuple[str, Any]]: ...

    def record_files(self, image_ids: Iterable[str], report_ids: Iterable[str]) -> dict[tuple[str, str], str]: ...

    def image_studies(self, image_ids: Iterable[str]) -> dict[str, tuple[str, str]]: ...

    def write_batch(self, batch: Batch) -> tuple[WriteCounts, set[str], set[str]]: ...


@dataclass
class BatchResult:
    """What one batch did: counts, rejections, the patients it wrote and those of them it relinked
    itself (the rest must be relinked by the caller)."""

    files_loaded: int = 0
    files_rejected: int = 0
    records: int = 0
    mentions: int = 0
    elements: WriteCounts = field(default_factory=WriteCounts)
    patients: set[str] = field(default_factory=set)
    linked: set[str] = field(default_factory=set)
    rejections: list[Rejection] = field(default_factory=list)
    unmapped_terms: Counter = field(default_factory=Counter)
    ambiguous_comparisons: int = 0
    out_of_schema: Counter = field(default_factory=Counter)  # RadGraph relations outside its schema, by name
    variants: Counter = field(default_factory=Counter)  # release variants kept, by name (ParsedFile.variants)


def load_files(store: GraphStore, files: list[InputFile], vocab: Vocabulary, changed: set[str],
               metadata_paths: list[str], mapping_path: str | None) -> BatchResult:
    """Parse, check and store a batch of files; the unit of work of one Prefect task.

    A file rejected as a whole (unreadable, or a scene graph with any error) stores nothing and leaves
    what an earlier version of it stored untouched; it is read again on the next run. A file with some
    rejected records stores the others and is recorded with its hash; when it changed, what an earlier
    version stored for the rejected records stays (until they load), the rest of the earlier version is
    replaced. A record rejected without a usable id (a JSONL line that is not JSON) keeps nothing. Big RadGraph files are streamed in
    chunks of their own transactions (see :func:`store_files`).
    """
    return store_files(store, files, parse_files(files, vocab, mapping_path), vocab, changed, metadata_paths)


def store_files(store: BatchWriter, files: list[InputFile], parsed: list[ParsedFile], vocab: Vocabulary,
                changed: set[str], metadata_paths: list[str], link: Collection[str] = ()) -> BatchResult:
    """Check a parsed batch against the graph (study owners, dates) and write it; see :func:`load_files`.

    Args:
        store: where the batch is written: the graph (:class:`graph.store.GraphStore`) or a bulk load's
            import files (:class:`graph.ingest.bulk.BulkSink`).
        files: the batch's input files.
        parsed: their :func:`parse_files` results, in order.
        vocab: the vocabulary the files were parsed with.
        changed: paths of files loaded before whose content changed (their old records are retracted).
        metadata_paths: MIMIC-CXR metadata CSV files, the study dates of records that carry none.
        link: patients to relink in the batch's own transaction(s) (those with no files elsewhere);
            ``result.linked`` says which were, ``result.patients`` minus those still need
            :meth:`GraphStore.link_patients`.

    Streamed files (RadGraph files above ``STREAM_THRESHOLD_BYTES``, see :func:`_store_streamed`) are
    written after the rest of the batch, each in transactions of ``STREAM_CHUNK_DOCS`` documents, so
    memory holds the rows of the chunk being written and of the next two (parsed meanwhile), never the
    whole file.
    """
    result = BatchResult()
    dates, _ = metadata_dates(metadata_paths)  # their rejections are the plan's (IngestPlan.metadata_rejections)
    parsed = _checked(store, parsed, dates)

    by_path = {f.path: f for f in files}
    link = frozenset(link)
    batch = Batch(link=link)
    pending = 0
    for pf in parsed:
        f = by_path[pf.path]
        if isinstance(pf, StreamedFile):
            continue  # written below, after the rest of the batch
        result.rejections += pf.rejections
        result.unmapped_terms.update(pf.unmapped_terms)
        result.out_of_schema.update(pf.out_of_schema)
        result.variants.update(pf.variants)
        result.ambiguous_comparisons += pf.ambiguous_comparisons
        result.records += len(pf.studies)
        result.mentions += len(pf.mentions)
        if _whole_file_rejected(pf, f):
            continue  # keep whatever an earlier version of the file stored; retried on the next run
        batch.files.append(pf)
        if f.path in changed:
            batch.retract.append(f.path)
            batch.retract_keep[f.path] = _rejected_records(pf)
        batch.source_files.append({"path": f.path, "sha256": f.sha256, "format": f.format,
                                   "records": len(pf.studies), "rejected": len(pf.rejections),
                                   "vocabulary_version": vocab.version, "size": f.size, "mtime_ns": f.mtime_ns})
        pending += len(pf.mentions)
        if pending >= MAX_MENTIONS_PER_WRITE:
            _flush(store, batch, result)
            batch, pending = Batch(link=link), 0
    _flush(store, batch, result)
    for pf in parsed:
        if isinstance(pf, StreamedFile):
            _store_streamed(store, by_path[pf.path], pf, vocab, pf.path in changed, dates, result)
    result.files_rejected = sum(1 for pf in parsed if _whole_file_rejected(pf, by_path[pf.path]))
    result.files_loaded = len(parsed) - result.files_rejected
    return result


def _checked(store: BatchWriter, parsed: list[ParsedFile], dates: StudyDates) -> list[ParsedFile]:
    """The parsed files without the records rejected against the graph and each other: study owners and
    dates (:func:`check_studies`), one file per image and report, comparisons within the patient
    (:mod:`graph.ingest.record_checks`)."""
    parsed = check_studies(parsed, store.study_owners({s.study_id for pf in parsed for s in pf.studies}), dates)
    parsed = check_record_files(parsed, store.record_files(*record_ids(parsed)))
    return check_comparisons(parsed, store.image_studies(prior_image_ids(parsed)))


def _whole_file_rejected(pf: ParsedFile, f: InputFile) -> bool:
    """A file-level error, or a scene graph whose one record was rejected (a bad box alone is dropped and
    leaves the study in place)."""
    return any(r.record is None for r in pf.rejections) or (
        f.format == SCENE_GRAPH and bool(pf.rejections) and not pf.studies)


def _rejected_records(pf: ParsedFile) -> list[str]:
    return sorted({r.record for r in pf.rejections if r.record is not None})


def _records(pf: ParsedFile) -> set[str]:
    """The records a parsed file (or chunk) stores."""
    return {s.record for s in pf.studies} | {m.record for m in pf.mentions}


def _flush(store: BatchWriter, batch: Batch, result: BatchResult) -> None:
    if not batch.files and not batch.retract:
        return
    counts, patients, linked = store.write_batch(batch)
    result.elements += counts
    result.patients |= patients
    result.linked = (result.linked - patients) | linked


def _retract_chunk(batch: Batch, path: str, chunk: ParsedFile, earlier: set[str], last: bool) -> None:
    """What a chunk of a changed streamed file retracts of the earlier version: its own records' mentions,
    and with the last chunk every other record's but those stored or rejected by this load; the result is
    a whole-file load's. ``earlier`` gains the chunk's records."""
    batch.retract.append(path)
    if last:
        batch.retract_keep[path] = sorted(earlier | set(_rejected_records(chunk)))
    else:
        batch.retract_only[path] = sorted(_records(chunk))
        batch.retract_keep[path] = _rejected_records(chunk)
    earlier |= _records(chunk) | set(_rejected_records(chunk))


_T = TypeVar("_T")


def _one_ahead(items: Iterator[_T]) -> Generator[_T, None, None]:
    """Yield from ``items``, producing the next item in a worker thread while the caller uses this one."""
    end = object()
    with ThreadPoolExecutor(1, thread_name_prefix="cxrkg-stream") as pool:
        ahead = pool.submit(next, items, end)
        while (item := ahead.result()) is not end:
            ahead = pool.submit(next, items, end)
            yield cast(_T, item)  # not ``end``, so an item of ``items``


def _count_chunk(chunk: ParsedFile, pf: StreamedFile, result: BatchResult, source_row: dict[str, Any]) -> None:
    """Add one streamed chunk's rejections, terms and counts to its file, the batch result and the SourceFile row."""
    pf.rejections += chunk.rejections
    result.rejections += chunk.rejections
    result.unmapped_terms.update(chunk.unmapped_terms)
    result.out_of_schema.update(chunk.out_of_schema)
    result.variants.update(chunk.variants)
    result.records += len(chunk.studies)
    result.mentions += len(chunk.mentions)
    source_row["records"] += len(chunk.studies)
    source_row["rejected"] += len(chunk.rejections)


def _store_streamed(store: BatchWriter, f: InputFile, pf: StreamedFile, vocab: Vocabulary, changed: bool,
                    dates: StudyDates, result: BatchResult) -> None:
    """Stream one big RadGraph file into the graph, one transaction per ``STREAM_CHUNK_DOCS`` documents.

    1. The whole JSON file is first checked for syntax (:func:`check_json_stream`, no document kept in
       memory). A file that fails (truncated, invalid) is rejected before anything is written, so what
       an earlier version stored stays untouched, as for any file rejected as a whole.
    2. Chunk by chunk: parse (the next chunk is parsed in a thread while this one is written), check
       study owners and dates against the graph, write in one transaction. Each chunk's transaction
       retracts a changed file's old mentions of its records, the last one those of all other records
       but the rejected ones (:func:`_retract_chunk`); the file's SourceFile row (sha256, vocabulary version,
       counts) is written only by the last chunk's transaction.
    3. Until then the first transaction leaves an *incomplete* SourceFile row (sha256 and vocabulary
       version null) for the path, so a load interrupted between chunks (crash, lost server) counts as
       changed on the next run: everything stored under the path is retracted and the file is loaded
       again in full, whatever its content by then. Reloading is idempotent (deterministic mention ids;
       CREATE falls back to MERGE on a ConstraintError). A file of a single chunk is one transaction.

    Record-level rejections, counts and touched patients are added to ``result``; ``pf.rejections``
    receives the file's rejections (a whole-file rejection has ``record`` None).
    """
    source_row: dict[str, Any] = {"path": f.path, "sha256": f.sha256, "format": f.format, "records": 0,
                                  "rejected": 0, "vocabulary_version": vocab.version, "size": f.size,
                                  "mtime_ns": f.mtime_ns}
    incomplete = {**source_row, "sha256": None, "vocabulary_version": None, "size": None, "mtime_ns": None}
    first = True  # nothing of this file written yet
    earlier: set[str] = set()  # records stored by this file's earlier chunks (and rejected ones)
    try:
        read_input(check_json_stream, Path(f.path), f.path)
        chunks = _one_ahead(read_input(parse_radgraph_chunks, Path(f.path), vocab, pf.mapping, STREAM_CHUNK_DOCS))
        with closing(chunks):
            chunk = next(chunks)
            while chunk is not None:
                following = next(chunks, None)
                [chunk] = _checked(store, [chunk], dates)
                _count_chunk(chunk, pf, result, source_row)
                batch = Batch(files=[chunk], merge=changed)
                if changed:
                    _retract_chunk(batch, f.path, chunk, earlier, last=following is None)
                if following is None:
                    batch.source_files.append(source_row)
                elif first:
                    batch.source_files.append(incomplete)
                _flush(store, batch, result)
                chunk, first = following, False
    except InputError as exc:  # errors of the graph side (lost server, ...) propagate as for any batch
        rejection = Rejection.from_error(exc)
    else:
        return
    if not first:  # the file broke after some chunks were stored (it changed while being read)
        rejection = replace(rejection, reason=rejection.reason + "; the chunks stored before stay marked "
                                                                 "incomplete and the file is reloaded in full next run")
    pf.rejections.append(rejection)
    result.rejections.append(rejection)
