"""Ingestion as plain functions: find input files, decide what is new, parse, check, write a batch.

The Prefect flow in ``flows/ingest_flow.py`` wires these together; every function here runs (and is
tested) without Prefect.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Collection, Iterable, Iterator, TypeVar

from graph.formats.metadata import StudyDates, read_metadata
from graph.formats.radgraph import (DocStudy, check_json_stream, parse_radgraph, parse_radgraph_chunks,
                                    read_doc_mapping)
from graph.formats.scene_graph import SCENE_GRAPH_SUFFIX, parse_scene_graph
from graph.formats.files import sha256_of
from graph.records import InputError, ParsedFile, Rejection
from graph.store import Batch, GraphStore, WriteCounts
from graph.vocabulary import Vocabulary, vocabulary

SCENE_GRAPH, RADGRAPH, METADATA = "chest_imagenome_scene_graph", "radgraph", "mimic_cxr_metadata"
MAX_MENTIONS_PER_WRITE = 40_000
# RadGraph files bigger than this (bytes) are streamed: parsed and written STREAM_CHUNK_DOCS documents
# per transaction (see store_files). Module attributes, read at call time: tests lower them.
STREAM_THRESHOLD_BYTES = 64 * 1024 * 1024
STREAM_CHUNK_DOCS = 2_000


@dataclass(frozen=True)
class InputFile:
    """One input file: where it is, what format it holds, and its content hash (sha256, hex)."""

    path: str
    format: str
    sha256: str


@dataclass
class IngestPlan:
    """Files to load (new or changed, in the order of :func:`plan_ingest`) and files skipped as unchanged.

    ``patient_hints`` maps a file's path to the patient its records are expected to belong to (see
    :func:`patient_hints`); it only decides the order and where batches end, never what is stored.
    """

    load: list[InputFile]
    changed: set[str]
    unchanged: list[str]
    metadata: list[str]
    patient_hints: dict[str, str] = field(default_factory=dict)

    def batches(self, batch_files: int) -> list[list[InputFile]]:
        """The files to load in batches of about ``batch_files``, a patient's files kept together.

        A batch ends at the first file of another (or an unknown) patient once it holds ``batch_files``
        files, and in any case at twice that size; so batches written at once rarely share a patient.
        """
        out: list[list[InputFile]] = []
        current: list[InputFile] = []
        for f in self.load:
            if current and (len(current) >= 2 * batch_files or (
                    len(current) >= batch_files and not self._same_patient(current[-1], f))):
                out.append(current)
                current = []
            current.append(f)
        if current:
            out.append(current)
        return out

    def patients_within(self, batch: list[InputFile]) -> set[str]:
        """The (hinted) patients all of whose files to load are in ``batch``: a batch can relink them
        in its own transaction, unless a file without a hint turns out to hold them too."""
        here = Counter(self.patient_hints[f.path] for f in batch if f.path in self.patient_hints)
        return {p for p, n in here.items() if n == self._files_per_patient[p]}

    @cached_property
    def _files_per_patient(self) -> Counter:
        return Counter(self.patient_hints[f.path] for f in self.load if f.path in self.patient_hints)

    def _same_patient(self, a: InputFile, b: InputFile) -> bool:
        hint = self.patient_hints.get(a.path)
        return hint is not None and hint == self.patient_hints.get(b.path)


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


@dataclass
class StreamedFile(ParsedFile):
    """What :func:`parse_files` returns for a RadGraph file above ``STREAM_THRESHOLD_BYTES``: nothing
    parsed yet; :func:`store_files` reads and writes it in chunks. ``mapping`` is the batch's doc mapping."""

    mapping: dict[str, DocStudy] | None = None


def file_format(path: Path) -> str | None:
    """The input format a file name announces, or None for files cxrkg does not read."""
    name = path.name
    if name.upper().startswith("README"):
        return None  # documentation kept next to data files
    if name.endswith(SCENE_GRAPH_SUFFIX):
        return SCENE_GRAPH
    if name.endswith(".csv") and "metadata" in name:
        return METADATA
    if name.endswith((".json", ".jsonl")):
        return RADGRAPH
    return None


def discover(paths: Iterable[Path], exclude: Iterable[Path] = ()) -> list[InputFile]:
    """All readable input files under the given files or folders (recursively), sorted by path.

    ``exclude`` names files to leave out, such as the rejected-files report of an earlier run.

    Raises:
        FileNotFoundError: a given path does not exist.
    """
    found: list[InputFile] = []
    skip = {Path(p).resolve() for p in exclude}
    for root in paths:
        root = Path(root)
        if not root.exists():
            raise FileNotFoundError(f"{root}: no such file or folder")
        if root.is_file():
            candidates = [(root, root.resolve())]
        else:
            # rglob does not enter linked folders, so below the resolved root only a linked file
            # needs resolving of its own (resolving every path was a quarter of planning time)
            base = root.resolve()
            candidates = [(p, p.resolve() if p.is_symlink() else base / p.relative_to(root))
                          for p in sorted(root.rglob("*")) if p.is_file()]
        for p, real in candidates:
            fmt = file_format(p)
            if fmt and real not in skip:
                found.append(InputFile(str(real), fmt, sha256_of(p)))
    return sorted(found, key=lambda f: f.path)


def plan_ingest(files: list[InputFile], known: dict[str, tuple[str, str]], vocabulary_version: str) -> IngestPlan:
    """Split files into what to load and what is unchanged since its last load.

    ``known`` maps loaded paths to (sha256, vocabulary version). A file counts as changed when its
    content or the vocabulary it was normalised with has changed.

    Files whose patient and date are known before parsing (:func:`patient_hints`) come first,
    ordered by patient, so a patient's scene graphs and reports share a batch (fewer batches touch
    an observation, and batches written at once hold different patients). The others follow, scene
    graphs before report extractions so that reports of the same run find their study dates in the
    graph.
    """
    order = {SCENE_GRAPH: 0, RADGRAPH: 1}
    load, unchanged, changed = [], [], set()
    for f in files:
        if f.format == METADATA:
            continue
        previous = known.get(f.path)
        if previous == (f.sha256, vocabulary_version):
            unchanged.append(f.path)
            continue
        if previous is not None:
            changed.add(f.path)
        load.append(f)
    metadata = [f.path for f in files if f.format == METADATA]
    hints = patient_hints(load, metadata)
    load.sort(key=lambda f: (0, hints[f.path], order[f.format], f.path) if f.path in hints
              else (1, "", order[f.format], f.path))
    return IngestPlan(load, changed, unchanged, metadata, hints)


_MIMIC_REPORT_PATH = re.compile(r"(?:^|/)p(\d+)/s(\d+)\.[^/]+$")


def patient_hints(files: list[InputFile], metadata_paths: list[str]) -> dict[str, str]:
    """path -> patient, for the files whose patient and study date are known before parsing them.

    Scene graphs (``<dicom_id>_SceneGraph.json``) through the metadata CSVs' dicom_id -> study_id ->
    subject_id; report files in the MIMIC-CXR layout (``.../p10000032/s50414267.json``) from their
    path, when the metadata CSVs date that study. Files with a known date need no other file of the
    run to be stored first, so they can be loaded patient by patient. Unreadable metadata gives no
    hints (its rejection is reported when the batches read it).
    """
    dates, _ = metadata_dates(metadata_paths)
    hints: dict[str, str] = {}
    for f in files:
        patient = None
        if f.format == SCENE_GRAPH:
            study = dates.image_study.get(Path(f.path).name.removesuffix(SCENE_GRAPH_SUFFIX))
            patient = dates.study_patient.get(study) if study else None
        elif match := _MIMIC_REPORT_PATH.search(Path(f.path).as_posix()):
            patient = match.group(1) if match.group(2) in dates.study_datetime else None
        if patient:
            hints[f.path] = patient
    return hints


@lru_cache(maxsize=4)
def _metadata(path: str, version: tuple) -> tuple[StudyDates, tuple[InputError, ...]]:
    dates, errors = read_metadata(Path(path))
    return dates, tuple(errors)


def metadata_dates(paths: Iterable[str]) -> tuple[StudyDates, list[Rejection]]:
    """Study dates and patients from all metadata CSVs.

    Each CSV is read once per version within a process: a version is (inode, size, modification time
    in ns), so a rewritten file is read again, while the planning step and every batch of a run share
    one read (the full MIMIC-CXR metadata CSV runs to tens of MB; hashing it per batch cost a full read).
    File times advance in clock ticks of milliseconds, so a file modified in the last two seconds adds
    its SHA-256 to the version (git's "racily clean" rule).
    """
    dates, patients, images, rejections = {}, {}, {}, []
    for path in paths:
        try:
            st = Path(path).stat()
            version: tuple = (st.st_ino, st.st_size, st.st_mtime_ns)
            if time.time_ns() - st.st_mtime_ns < 2_000_000_000:
                version += (sha256_of(Path(path)),)
            d, errors = _metadata(path, version)
        except OSError as exc:
            rejections.append(Rejection.from_error(InputError(path, None, None, f"cannot read: {exc}")))
            continue
        except InputError as exc:
            rejections.append(Rejection.from_error(exc))
            continue
        dates.update(d.study_datetime)
        patients.update(d.study_patient)
        images.update(d.image_study)
        rejections += [Rejection.from_error(e) for e in errors]
    return StudyDates(dates, patients, images), rejections


def parse_file(f: InputFile, vocab: Vocabulary, mapping: dict[str, DocStudy] | None) -> ParsedFile:
    """Parse one file; a file-level error becomes a single rejection of the whole file.

    A RadGraph file above ``STREAM_THRESHOLD_BYTES`` is not read here: it comes back as a
    :class:`StreamedFile` for :func:`store_files` to stream.
    """
    try:
        if f.format == RADGRAPH and Path(f.path).stat().st_size > STREAM_THRESHOLD_BYTES:
            return StreamedFile(path=f.path, mapping=mapping)
        if f.format == SCENE_GRAPH:
            return parse_scene_graph(Path(f.path), vocab)
        return parse_radgraph(Path(f.path), vocab, mapping)
    except InputError as exc:
        return ParsedFile(path=f.path, rejections=[Rejection.from_error(exc)])
    except OSError as exc:
        return ParsedFile(path=f.path, rejections=[Rejection(f.path, None, None, f"cannot read: {exc}")])


def drop_records(pf: ParsedFile, records: set[str]) -> ParsedFile:
    """A copy of a parsed file without the given records (image ids or doc_keys)."""
    if not records:
        return pf
    keep = ParsedFile(path=pf.path, rejections=pf.rejections, unmapped_terms=pf.unmapped_terms,
                      ambiguous_comparisons=pf.ambiguous_comparisons)
    keep.studies = [s for s in pf.studies if s.record not in records]
    kept_studies = {s.study_id for s in keep.studies}
    keep.images = [i for i in pf.images if i.image_id not in records and i.study_id in kept_studies]
    keep.reports = [r for r in pf.reports if r.report_id not in records]
    keep.mentions = [m for m in pf.mentions if m.record not in records]
    return keep


def check_studies(parsed: list[ParsedFile], owners: dict[str, tuple[str, Any]], dates: StudyDates) -> list[ParsedFile]:
    """Reject records whose study another patient already claims, or whose study has no date anywhere.

    Dates are looked up in the metadata CSVs, then the record, then the graph, then other records of
    the batch. The first claim of a study (graph first, then file order) wins.

    Returns:
        the parsed files without the rejected records; the rejections are appended to each file.
    """
    claimed: dict[str, str] = {sid: pid for sid, (pid, _) in owners.items()}
    batch_dates: dict[str, datetime] = {}
    for pf in parsed:
        for s in pf.studies:
            if s.study_datetime:
                batch_dates.setdefault(s.study_id, s.study_datetime)
    out = []
    for pf in parsed:
        bad: set[str] = set()
        for s in pf.studies:
            owner = claimed.setdefault(s.study_id, s.patient_id)
            if owner != s.patient_id:
                pf.rejections.append(Rejection(pf.path, s.record, "study_id" if pf.images else "doc_key",
                                               f"study {s.study_id} belongs to patient {owner}, "
                                               f"this record claims patient {s.patient_id}"))
                bad.add(s.record)
                continue
            known = (s.study_datetime or dates.study_datetime.get(s.study_id)
                     or (owners.get(s.study_id) or (None, None))[1] or batch_dates.get(s.study_id))
            if known is None:
                pf.rejections.append(Rejection(pf.path, s.record, "StudyDateTime",
                                               f"study {s.study_id} has no date in the record, the metadata CSV "
                                               "or the graph"))
                bad.add(s.record)
        if bad:
            pf = drop_records(pf, bad)
        # The metadata CSV's date (StudyDate + StudyTime, to the millisecond) wins over a record's own
        # (Chest ImaGenome's StudyDateTime is to the second): a study's stored date must not depend on
        # which of its files was written last (incremental and concurrent runs).
        meta = dates.study_datetime
        if any(s.study_datetime is None or meta.get(s.study_id, s.study_datetime) != s.study_datetime
               for s in pf.studies):
            pf.studies = [replace(s, study_datetime=meta[s.study_id]) if s.study_id in meta
                          else s if s.study_datetime else replace(s, study_datetime=batch_dates.get(s.study_id))
                          for s in pf.studies]
        out.append(pf)
    return out


def load_files(store: GraphStore, files: list[InputFile], vocab: Vocabulary, changed: set[str],
               metadata_paths: list[str], mapping_path: str | None) -> BatchResult:
    """Parse, check and store a batch of files; the unit of work of one Prefect task.

    A file rejected as a whole (unreadable, or a scene graph with any error) stores nothing and leaves
    what an earlier version of it stored untouched; it is read again on the next run. A file with some
    rejected records stores the others and is recorded with its hash. Big RadGraph files are streamed in
    chunks of their own transactions (see :func:`store_files`).
    """
    return store_files(store, files, parse_files(files, vocab, mapping_path), vocab, changed, metadata_paths)


def parse_files(files: list[InputFile], vocab: Vocabulary, mapping_path: str | None) -> list[ParsedFile]:
    """Parse a batch of files without touching the graph (so it can run while another batch is written).

    Returns:
        one ParsedFile per input file, in order; file-level errors are rejections inside them.
    """
    mapping = read_doc_mapping(Path(mapping_path)) if mapping_path else None
    return [parse_file(f, vocab, mapping) for f in files]


def parse_files_with_packaged_vocabulary(files: list[InputFile], mapping_path: str | None) -> list[ParsedFile]:
    """:func:`parse_files` with the packaged vocabulary: what a parse worker process runs (its arguments
    and result are pickled, so it takes no Vocabulary object)."""
    return parse_files(files, vocabulary(), mapping_path)


def store_files(store: GraphStore, files: list[InputFile], parsed: list[ParsedFile], vocab: Vocabulary,
                changed: set[str], metadata_paths: list[str], link: Collection[str] = ()) -> BatchResult:
    """Check a parsed batch against the graph (study owners, dates) and write it; see :func:`load_files`.

    Args:
        files: the batch's input files; ``parsed`` holds their :func:`parse_files` results, in order.
        link: patients to relink in the batch's own transaction(s) (those with no files elsewhere);
            ``result.linked`` says which were, ``result.patients`` minus those still need
            :meth:`GraphStore.link_patients`.

    Streamed files (RadGraph files above ``STREAM_THRESHOLD_BYTES``, see :func:`_store_streamed`) are
    written after the rest of the batch, each in transactions of ``STREAM_CHUNK_DOCS`` documents, so
    memory holds the rows of the chunk being written and of the next two (parsed meanwhile), never the
    whole file.
    """
    result = BatchResult()
    dates, meta_rejections = metadata_dates(metadata_paths)
    owners = store.study_owners({s.study_id for pf in parsed for s in pf.studies})
    parsed = check_studies(parsed, owners, dates)

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
        result.ambiguous_comparisons += pf.ambiguous_comparisons
        result.records += len(pf.studies)
        result.mentions += len(pf.mentions)
        if _whole_file_rejected(pf, f):
            continue  # keep whatever an earlier version of the file stored; retried on the next run
        batch.files.append(pf)
        if f.path in changed:
            batch.retract.append(f.path)
        batch.source_files.append({"path": f.path, "sha256": f.sha256, "format": f.format,
                                   "records": len(pf.studies), "rejected": len(pf.rejections),
                                   "vocabulary_version": vocab.version})
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


def _whole_file_rejected(pf: ParsedFile, f: InputFile) -> bool:
    """A file-level error, or a scene graph whose one record was rejected (a bad box alone is dropped and
    leaves the study in place)."""
    return any(r.record is None for r in pf.rejections) or (
        f.format == SCENE_GRAPH and bool(pf.rejections) and not pf.studies)


def _flush(store: GraphStore, batch: Batch, result: BatchResult) -> None:
    if not batch.files and not batch.retract:
        return
    counts, patients, linked = store.write_batch(batch)
    result.elements += counts
    result.patients |= patients
    result.linked = (result.linked - patients) | linked


_T = TypeVar("_T")


def _one_ahead(items: Iterator[_T]) -> Iterator[_T]:
    """Yield from ``items``, producing the next item in a worker thread while the caller uses this one."""
    end = object()
    with ThreadPoolExecutor(1, thread_name_prefix="cxrkg-stream") as pool:
        ahead = pool.submit(next, items, end)
        while (item := ahead.result()) is not end:
            ahead = pool.submit(next, items, end)
            yield item


def _read(reader: Any, path: Path, *args: Any) -> Any:
    """``reader(path, *args)`` with the file's OSErrors as whole-file InputErrors; a generator's
    items are passed through (its OSErrors converted as they happen)."""
    try:
        out = reader(path, *args)
    except OSError as exc:
        raise InputError(str(path), None, None, f"cannot read: {exc}") from exc
    if not isinstance(out, Iterator):
        return out

    def items() -> Iterator[Any]:
        try:
            yield from out
        except OSError as exc:
            raise InputError(str(path), None, None, f"cannot read: {exc}") from exc
    return items()


def _store_streamed(store: GraphStore, f: InputFile, pf: StreamedFile, vocab: Vocabulary, changed: bool,
                    dates: StudyDates, result: BatchResult) -> None:
    """Stream one big RadGraph file into the graph, one transaction per ``STREAM_CHUNK_DOCS`` documents.

    1. The whole JSON file is first checked for syntax (:func:`check_json_stream`, no document kept in
       memory). A file that fails (truncated, invalid) is rejected before anything is written, so what
       an earlier version stored stays untouched, as for any file rejected as a whole.
    2. Chunk by chunk: parse (the next chunk is parsed in a thread while this one is written), check
       study owners and dates against the graph, write in one transaction. The first chunk's transaction
       retracts a changed file's old mentions; the file's SourceFile row (sha256, vocabulary version,
       counts) is written only by the last chunk's transaction.
    3. Until then the first transaction leaves an *incomplete* SourceFile row (sha256 and vocabulary
       version null) for the path, so a load interrupted between chunks (crash, lost server) counts as
       changed on the next run: everything stored under the path is retracted and the file is loaded
       again in full, whatever its content by then. Reloading is idempotent (deterministic mention ids;
       CREATE falls back to MERGE on a ConstraintError). A file of a single chunk is one transaction.

    Record-level rejections, counts and touched patients are added to ``result``; ``pf.rejections``
    receives the file's rejections (a whole-file rejection has ``record`` None).
    """
    source_row = {"path": f.path, "sha256": f.sha256, "format": f.format, "records": 0, "rejected": 0,
                  "vocabulary_version": vocab.version}
    incomplete = {**source_row, "sha256": None, "vocabulary_version": None}
    first = True  # nothing of this file written yet
    try:
        _read(check_json_stream, Path(f.path), f.path)
        chunks = _one_ahead(_read(parse_radgraph_chunks, Path(f.path), vocab, pf.mapping, STREAM_CHUNK_DOCS))
        with closing(chunks):
            chunk = next(chunks)
            while chunk is not None:
                following = next(chunks, None)
                owners = store.study_owners({s.study_id for s in chunk.studies})
                [chunk] = check_studies([chunk], owners, dates)
                pf.rejections += chunk.rejections
                result.rejections += chunk.rejections
                result.unmapped_terms.update(chunk.unmapped_terms)
                result.records += len(chunk.studies)
                result.mentions += len(chunk.mentions)
                source_row["records"] += len(chunk.studies)
                source_row["rejected"] += len(chunk.rejections)
                batch = Batch(files=[chunk], merge=changed)
                if first and changed:
                    batch.retract.append(f.path)
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
