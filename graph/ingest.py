"""Ingestion as plain functions: find input files, decide what is new, parse, check, write a batch.

The Prefect flow in ``flows/ingest_flow.py`` wires these together; every function here runs (and is
tested) without Prefect.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from graph.formats.metadata import StudyDates, read_metadata
from graph.formats.radgraph import DocStudy, parse_radgraph, read_doc_mapping
from graph.formats.scene_graph import SCENE_GRAPH_SUFFIX, parse_scene_graph
from graph.records import InputError, ParsedFile, Rejection
from graph.store import Batch, GraphStore, WriteCounts
from graph.vocabulary import Vocabulary

SCENE_GRAPH, RADGRAPH, METADATA = "chest_imagenome_scene_graph", "radgraph", "mimic_cxr_metadata"
MAX_MENTIONS_PER_WRITE = 40_000


@dataclass(frozen=True)
class InputFile:
    """One input file: where it is, what format it holds, and its content hash (sha256, hex)."""

    path: str
    format: str
    sha256: str


@dataclass
class IngestPlan:
    """Files to load (new or changed, scene graphs first) and files skipped as unchanged."""

    load: list[InputFile]
    changed: set[str]
    unchanged: list[str]
    metadata: list[str]


@dataclass
class BatchResult:
    """What one batch did: counts, rejections and the patients whose derived structure must be relinked."""

    files_loaded: int = 0
    files_rejected: int = 0
    records: int = 0
    mentions: int = 0
    elements: WriteCounts = field(default_factory=WriteCounts)
    patients: set[str] = field(default_factory=set)
    rejections: list[Rejection] = field(default_factory=list)
    unmapped_terms: Counter = field(default_factory=Counter)
    ambiguous_comparisons: int = 0


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


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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
        candidates = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for p in candidates:
            fmt = file_format(p)
            if fmt and p.resolve() not in skip:
                found.append(InputFile(str(p.resolve()), fmt, sha256_of(p)))
    return sorted(found, key=lambda f: f.path)


def plan_ingest(files: list[InputFile], known: dict[str, tuple[str, str]], vocabulary_version: str) -> IngestPlan:
    """Split files into what to load and what is unchanged since its last load.

    ``known`` maps loaded paths to (sha256, vocabulary version). A file counts as changed when its
    content or the vocabulary it was normalised with has changed.

    Scene graphs are ordered before report extractions so that reports of the same run find their
    study dates in the graph.
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
    load.sort(key=lambda f: (order[f.format], f.path))
    return IngestPlan(load, changed, unchanged, [f.path for f in files if f.format == METADATA])


@lru_cache(maxsize=4)
def _metadata(path: str, sha256: str) -> tuple[StudyDates, tuple[InputError, ...]]:
    dates, errors = read_metadata(Path(path))
    return dates, tuple(errors)


def metadata_dates(paths: Iterable[str]) -> tuple[StudyDates, list[Rejection]]:
    """Study dates and patients from all metadata CSVs (cached per file content within a process)."""
    dates, patients, rejections = {}, {}, []
    for path in paths:
        try:
            d, errors = _metadata(path, sha256_of(Path(path)))
        except InputError as exc:
            rejections.append(Rejection.from_error(exc))
            continue
        dates.update(d.study_datetime)
        patients.update(d.study_patient)
        rejections += [Rejection.from_error(e) for e in errors]
    return StudyDates(dates, patients), rejections


def parse_file(f: InputFile, vocab: Vocabulary, mapping: dict[str, DocStudy] | None) -> ParsedFile:
    """Parse one file; a file-level error becomes a single rejection of the whole file."""
    try:
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

    Dates are looked up in the record, then the metadata CSVs, then the graph, then other records of
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
        fill = [s for s in pf.studies if s.study_datetime is None]
        if fill:
            pf.studies = [s if s.study_datetime else replace(s, study_datetime=dates.study_datetime.get(s.study_id)
                                                             or batch_dates.get(s.study_id)) for s in pf.studies]
        out.append(pf)
    return out


def load_files(store: GraphStore, files: list[InputFile], vocab: Vocabulary, changed: set[str],
               metadata_paths: list[str], mapping_path: str | None) -> BatchResult:
    """Parse, check and store a batch of files; the unit of work of one Prefect task.

    A file rejected as a whole (unreadable, or a scene graph with any error) stores nothing and leaves
    what an earlier version of it stored untouched; it is read again on the next run. A file with some
    rejected records stores the others and is recorded with its hash.
    """
    result = BatchResult()
    mapping = read_doc_mapping(Path(mapping_path)) if mapping_path else None
    dates, meta_rejections = metadata_dates(metadata_paths)
    parsed = [parse_file(f, vocab, mapping) for f in files]
    owners = store.study_owners({s.study_id for pf in parsed for s in pf.studies})
    parsed = check_studies(parsed, owners, dates)

    by_path = {f.path: f for f in files}
    batch = Batch()
    pending = 0
    for pf in parsed:
        f = by_path[pf.path]
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
            batch, pending = Batch(), 0
    _flush(store, batch, result)
    result.files_rejected = sum(1 for pf in parsed if _whole_file_rejected(pf, by_path[pf.path]))
    result.files_loaded = len(parsed) - result.files_rejected
    return result


def _whole_file_rejected(pf: ParsedFile, f: InputFile) -> bool:
    return any(r.record is None for r in pf.rejections) or (f.format == SCENE_GRAPH and bool(pf.rejections))


def _flush(store: GraphStore, batch: Batch, result: BatchResult) -> None:
    if not batch.files and not batch.retract:
        return
    counts, patients = store.write_batch(batch)
    result.elements += counts
    result.patients |= patients


def write_rejections(path: Path, rejections: list[Rejection]) -> None:
    """Write the rejected-files report: a JSON list of {file, record, field, reason}."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(r) for r in rejections], indent=2) + "\n")
