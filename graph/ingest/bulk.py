"""The bulk first load: batches are written to ``neo4j-admin database import`` files instead of the
database, with the same rows and the same derivation as the transactional load, so both make the same graph.

:class:`BulkSink` stands in for :class:`graph.store.GraphStore` where :func:`graph.ingest.store_files`
writes (``study_owners``, ``write_batch``, ``link_patients``): parsing, checks, rejections and streamed
files work as in a transactional load. What a store would merge over batches (a study's attributes, a
patient's gender, a source file's row) is merged in memory, last value first, as MERGE ... SET does;
everything else goes to the files at once. A patient whose files all lie in one batch is derived when the
batch ends; the facts of the others are parked on disk in buckets by patient and derived at the end, a
bucket at a time, so memory does not grow with the cohort.

When every patient's files are known before parsing (patient hints), batches share nothing but
bookkeeping, so :func:`write_part` writes each batch in a worker process (into that worker's own files)
and the load's sink merges what it hands back (:meth:`BulkSink.absorb`), in batch order.
"""

from __future__ import annotations

import atexit
import os
import pickle
import threading
import zlib
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, BinaryIO, Iterable

from graph.errors import CxrkgError
from graph.ingest.import_files import ImportFiles, Listing
from graph.ingest.load import BatchResult, store_files
from graph.ingest.parse import fingerprinted, parse_files
from graph.ingest.plan import InputFile
from graph.longitudinal.derived_rows import DerivedRows, batch_rows, derived_rows, finding_parents, mention_fact
from graph.longitudinal.events import MentionFact, StudyFact, derive_patient
from graph.measurements.rows import measurement_rows
from graph.records import BoundingBoxRecord, ParsedFile, cyclic_gc_paused
from graph.schema import graph_schema
from graph.store import Batch, WriteCounts
from graph.vocabulary import Vocabulary, vocabulary

BUCKETS = 64  # parked patients are derived one bucket at a time at the end


class BulkInputError(CxrkgError, ValueError):
    """Input a bulk load cannot turn into import files (the same image or report in two files, a patient
    whose records come back after it was derived); names the record and files. Nothing was imported."""


@dataclass
class Part:
    """What a batch written apart (:func:`write_part`) hands back: its result, its files and what the
    load's sink merges over batches."""

    result: BatchResult
    files: list[Listing]
    studies: dict[str, dict[str, Any]]
    patients: dict[str, dict[str, Any]]
    incomplete_sources: dict[str, dict[str, Any]]
    record_file: dict[str, str]
    study_order: dict[str, int]
    derived: set[str]
    parked: set[str]
    buckets: list[Path]


class BulkSink:
    """Import files for one bulk load, written batch by batch.

    Args:
        files: the import files to write (see :class:`graph.ingest.import_files.ImportFiles`).
        vocab: the vocabulary (Anatomy and Finding nodes, the findings' IS_A parents).
        loaded_at: the SourceFile nodes' ``loaded_at`` (the load's start; a transactional load stamps each
            batch as it commits).
        park_in: the folder of the parked patients' bucket files (default: the files' folder).
    """

    def __init__(self, files: ImportFiles, vocab: Vocabulary, loaded_at: datetime, park_in: Path | None = None):
        self.files = files
        self.loaded_at = loaded_at
        self._stamp = loaded_at.isoformat()
        self._park_in = park_in or files.folder
        self._regions = set(vocab.regions)
        self._findings = set(vocab.findings)
        self._studies: dict[str, dict[str, Any]] = {}
        self._patients: dict[str, dict[str, Any]] = {}  # patient -> its properties (graph/schema.yaml)
        # the Patient's properties, which a study's row carries (graph.longitudinal.derived_rows.batch_rows)
        self._patient_props = tuple(graph_schema().loaded_properties("Patient"))
        self._no_study = dict.fromkeys(graph_schema().loaded_properties("Study"))
        self._no_progression = dict.fromkeys(graph_schema().loaded_properties("PROGRESSION"))
        self._study_order: dict[str, int] = {}
        # a streamed file's first chunk marks it incomplete until its last chunk's row replaces it (see
        # graph.ingest.load); every other SourceFile row is written at once, as the plan lists a file once
        self._incomplete_sources: dict[str, dict[str, Any]] = {}
        self._record_file: dict[str, str] = {}  # "image:<id>" / "report:<id>" -> file
        self._derived: set[str] = set()
        self._parked: set[str] = set()
        self._buckets: dict[int, BinaryIO] = {}
        self._part_buckets: list[Path] = []
        self._part_files: dict[Path, Listing] = {}
        # patients of the current batch's link, derived by end_batch: their study images and mention facts
        self._held: tuple[dict[str, dict[str, list[str]]], dict[str, list[MentionFact]]] = ({}, {})
        self._parents = finding_parents()

    # --- what store_files asks of a store ------------------------------------------------------

    def study_owners(self, study_ids: Iterable[str]) -> dict[str, tuple[str, Any]]:
        """For studies of earlier batches: study_id -> (patient_id, study_datetime or None)."""
        out = {}
        for sid in study_ids:
            if (row := self._studies.get(sid)) is not None:
                when = row.get("study_datetime")
                out[sid] = (row["patient_id"], datetime.fromisoformat(when) if when else None)
        return out

    def record_files(self, image_ids: Iterable[str], report_ids: Iterable[str]) -> dict[tuple[str, str], str]:
        """For images and reports of earlier batches of this sink: ``("image" | "report", id) -> file`` (one
        also in another worker's part stops the load when the parts are absorbed)."""
        keys = [("image", i) for i in image_ids] + [("report", r) for r in report_ids]
        return {(kind, rid): path for kind, rid in keys if (path := self._record_file.get(f"{kind}:{rid}"))}

    def image_studies(self, image_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Nothing: comparisons are checked within each batch only (``cxrkg stats`` checks the whole graph)."""
        return {}

    @cyclic_gc_paused()  # millions of short-lived objects, no cycles: a quarter of the CPU went to collections
    def write_batch(self, batch: Batch) -> tuple[WriteCounts, set[str], set[str]]:
        """Write one batch's rows; hold the facts of the patients of ``batch.link`` (all of whose files are
        in the batch, which store_files may write in several parts) for :meth:`end_batch` and park the
        others. Returns rows written, the batch's patients and those that end_batch derives.

        Raises:
            BulkInputError: an image or report already written from another file, or a patient derived
                in an earlier batch.
        """
        before = self.files.elements
        self._check_unique(batch.files)
        studies, images, boxes, reports, observations = batch_rows(batch.files, records=True)
        for row in studies.values():
            self._merge_study(row)
        patients = {row["patient_id"] for row in studies.values()}
        if again := sorted(patients & self._derived):
            raise BulkInputError(f"patient {again[0]} has records in {batch.files[0].path} after its other files "
                                 "were loaded and derived; load without --bulk")
        self._write_records(images, boxes, reports, observations)
        measurements = measurement_rows(batch.files, {sid: row["patient_id"] for sid, row in studies.items()})
        self.files.node_rows("Measurement", measurements)
        self.files.relationship_pairs("HAS_MEASUREMENT", "Image", "Measurement",
                                      _pairs(measurements, "image_id", "measurement_id"))
        self._write_source_files(batch.source_files)
        held = {p for p in batch.link & patients if p not in self._parked}
        study_images, mentions = _facts(held, studies, images, batch.files)
        for pid, by_study in study_images.items():
            _extend(self._held[0].setdefault(pid, {}), by_study)
        for pid, facts in mentions.items():
            self._held[1].setdefault(pid, []).extend(facts)
        self._park(patients - held, studies, images, batch.files)
        return self._counts_since(before), patients, held

    def end_batch(self) -> WriteCounts:
        """Derive the patients the batch held (call once store_files has written the whole batch)."""
        before = self.files.elements
        study_images, mentions = self._held
        self._held = ({}, {})
        self._derive_patients(study_images, mentions)
        return self._counts_since(before)

    def part(self, result: BatchResult) -> Part:
        """This sink's state after one batch, for :meth:`absorb` in the load's own sink: bucket files closed,
        import files flushed (they stay open for the worker's next batch)."""
        self.end_batch()
        for handle in self._buckets.values():
            handle.close()
        self.files.flush()
        return Part(result, self.files.listing(), self._studies, self._patients, self._incomplete_sources,
                    self._record_file, self._study_order, self._derived, self._parked,
                    [Path(h.name) for h in self._buckets.values()])

    def absorb(self, part: Part) -> None:
        """Merge a batch written apart, as :meth:`write_batch` would have merged it (call in batch order).

        Raises:
            BulkInputError: a study of the part claimed by another patient in an earlier batch, a record
                already written from another file, or a patient derived in an earlier batch.
        """
        for sid, row in part.studies.items():
            owner = self._studies.get(sid, row)["patient_id"]
            if owner != row["patient_id"]:
                raise BulkInputError(f"study {sid} belongs to patient {owner} and, in a later batch, to patient "
                                     f"{row['patient_id']}; load without --bulk, which rejects the later record")
        for key, path in part.record_file.items():
            first = self._record_file.setdefault(key, path)
            if first != path:
                raise BulkInputError(f"{key.replace(':', ' ')} is in both {first} and {path}; remove one copy, "
                                     "or load without --bulk")
        if again := sorted((part.derived | part.parked) & self._derived | part.derived & self._parked):
            raise BulkInputError(f"patient {again[0]} has records in a later batch than the one it was derived "
                                 "in; load without --bulk")
        for sid, row in part.studies.items():
            self._merge_study({"study_id": sid, **row, **part.patients.get(row["patient_id"], {})})
        self._incomplete_sources.update(part.incomplete_sources)
        self._study_order.update(part.study_order)
        self._derived |= part.derived
        self._parked |= part.parked
        for f in part.files:  # a worker's files grow batch by batch, and a Dask worker may run a later batch
            known = self._part_files.get(f.path, f)  # first: the largest count and any line break hold
            self._part_files[f.path] = Listing(f.group, f.path, max(f.rows, known.rows),
                                               f.multiline or known.multiline)
        self._part_buckets += part.buckets

    def listing(self) -> list[Listing]:
        """Every file of the load: the sink's own and those of absorbed parts."""
        return [*self._part_files.values(), *self.files.listing()]

    def link_patients(self, patient_ids: Iterable[str]) -> WriteCounts:
        """Derive every parked patient (``patient_ids`` must name them all), one bucket at a time."""
        before = self.files.elements
        self.end_batch()
        missing = self._parked - set(patient_ids)
        if missing:
            raise ValueError(f"{len(missing)} parked patients not named, e.g. {sorted(missing)[0]}")
        paths: dict[str, list[Path]] = defaultdict(list)
        for handle in self._buckets.values():
            handle.close()
            paths[Path(handle.name).name].append(Path(handle.name))
        for path in self._part_buckets:
            paths[path.name].append(path)
        for name in sorted(paths):
            self._derive_bucket(paths[name])
        self._buckets.clear()
        self._part_buckets.clear()
        self._derived |= self._parked
        self._parked.clear()
        return self._counts_since(before)

    # --- the end -------------------------------------------------------------------------------

    def finish(self, vocab: Vocabulary | None) -> ImportFiles:
        """Write what was merged over batches (patients, studies, incomplete source files) and the vocabulary's
        Anatomy and Finding nodes (their properties and PART_OF / IS_A come from ``ensure_schema``, as in
        a transactional load; ``vocab`` None: none, another sink of the same import writes them), close
        the files and return them."""
        if self._parked:
            raise ValueError(f"{len(self._parked)} patients still parked: call link_patients first")
        f, order = self.files, self._study_order
        f.node_rows("Patient", [{"patient_id": pid, **props} for pid, props in self._patients.items()])
        f.node_rows("Study", [{"study_id": sid, **self._no_study, **row, "study_order": order.get(sid)}
                              for sid, row in self._studies.items()])
        f.relationship_pairs("HAS_STUDY", "Patient", "Study", [(row["patient_id"], sid) for sid, row in self._studies.items()])
        f.node_rows("SourceFile", [{**row, "loaded_at": self._stamp} for row in self._incomplete_sources.values()])
        f.node_rows("Anatomy", [{"name": name} for name in (vocab.regions if vocab else ())])
        f.node_rows("Finding", [{"name": name} for name in (vocab.findings if vocab else ())])
        f.close()
        return f

    def shared_with(self, other: BulkSink) -> str | None:
        """The first patient, study, image or report that this sink and ``other`` (another input of the same
        import) both wrote, e.g. ``"patient 10000032"``; None when they share none (their import files can
        then be imported together: no node twice)."""
        for kind, mine, theirs in (("patient", self._patients, other._patients),
                                   ("study", self._studies, other._studies),
                                   ("record", self._record_file, other._record_file)):
            if both := mine.keys() & theirs.keys():
                return f"{kind} {min(both).replace(':', ' ')}"
        return None

    # --- internals -----------------------------------------------------------------------------

    def _counts_since(self, before: int) -> WriteCounts:
        # nodes and relationships are not told apart per batch; the summary reports their sum
        return WriteCounts(nodes=self.files.elements - before)

    def _check_unique(self, files: list[ParsedFile]) -> None:
        for pf in files:
            for kind, ids in (("image", [i.image_id for i in pf.images]), ("report", [r.report_id for r in pf.reports])):
                for record_id in ids:
                    first = self._record_file.setdefault(f"{kind}:{record_id}", pf.path)
                    if first != pf.path:
                        raise BulkInputError(f"{kind} {record_id} is in both {first} and {pf.path}; remove one "
                                             "copy, or load without --bulk")

    def _write_source_files(self, rows: list[dict[str, Any]]) -> None:
        """SourceFile rows (graph.ingest.load): an incomplete one is held until its complete one comes."""
        complete = []
        for row in rows:
            if row["sha256"] is None:
                self._incomplete_sources[row["path"]] = dict(row)
            else:
                self._incomplete_sources.pop(row["path"], None)
                complete.append({**row, "loaded_at": self._stamp})
        self.files.node_rows("SourceFile", complete)

    def _merge_study(self, row: dict[str, Any]) -> None:
        """A study's properties and its patient's over batches (a row of graph.longitudinal.derived_rows.batch_rows): a
        later non-null value replaces an earlier one (merge_studies_statement's ``coalesce(new, stored)``)."""
        stored = self._studies.setdefault(row["study_id"], {"patient_id": row["patient_id"]})
        patient = self._patients.setdefault(row["patient_id"], {})
        for key, value in row.items():
            if value is not None and key != "study_id":
                (patient if key in self._patient_props else stored)[key] = value

    def _write_records(self, images: list[dict], boxes: list[BoundingBoxRecord], reports: list[dict],
                       observations: dict[str, dict[str, Any]]) -> None:
        """A batch's records, each file's rows in one call (in each file, the order of one by one)."""
        f, regions = self.files, self._regions
        f.node_rows("Image", images)
        f.relationship_pairs("HAS_IMAGE", "Study", "Image", _pairs(images, "study_id", "image_id"))
        boxes = [box for box in boxes if box.bbox_name in regions]  # as the transactional MATCH on its Anatomy
        f.node_records("BoundingBox", boxes)  # BoundingBoxRecords: the widest rows, from their fields
        f.relationship_pairs("HAS_BBOX", "Image", "BoundingBox", list(map(_BOX_IMAGE, boxes)))
        f.relationship_pairs("OF_ANATOMY", "BoundingBox", "Anatomy", list(map(_BOX_ANATOMY, boxes)))
        f.node_rows("Report", reports)
        f.relationship_pairs("HAS_REPORT", "Study", "Report", _pairs(reports, "study_id", "report_id"))
        kept = [(oid, props) for oid, o in observations.items()  # as the transactional MATCH on both ends
                if o["anatomy"] in regions and o["finding"] in self._findings for props in o["mentions"]]
        f.node_rows("Mention", [props for _, props in kept])
        f.relationship_pairs("HAS_MENTION", "Observation", "Mention", [(oid, p["mention_id"]) for oid, p in kept])

    def _park(self, patients: set[str], studies: dict[str, dict], images: list[dict], files: list[ParsedFile]) -> None:
        if not patients:
            return
        study_images, mentions = _facts(patients, studies, images, files)
        for pid in patients:
            bucket = zlib.crc32(pid.encode()) % BUCKETS
            if bucket not in self._buckets:
                self._park_in.mkdir(parents=True, exist_ok=True)
                self._buckets[bucket] = open(self._park_in / f"parked_{bucket:02d}.pickle", "wb")
            # what derivation needs of the patient from this batch: its studies' image ids, and the fields of
            # its MentionFacts
            pickle.dump((pid, study_images.get(pid, {}), [tuple(m) for m in mentions.get(pid, [])]),
                        self._buckets[bucket], protocol=pickle.HIGHEST_PROTOCOL)
        self._parked |= patients

    def _derive_bucket(self, paths: list[Path]) -> None:
        """Derive the patients parked in one bucket (its files from every part, in batch order)."""
        study_images: dict[str, dict[str, list[str]]] = {}
        mentions: dict[str, list[MentionFact]] = {}
        for path in paths:
            with open(path, "rb") as handle:
                while True:
                    try:
                        pid, images, fields = pickle.load(handle)
                    except EOFError:
                        break
                    _extend(study_images.setdefault(pid, {}), images)
                    mentions.setdefault(pid, []).extend(MentionFact(*t) for t in fields)
            path.unlink()
        self._derive_patients(study_images, mentions)

    @cyclic_gc_paused()  # millions of short-lived objects, no cycles: a quarter of the CPU went to collections
    def _derive_patients(self, study_images: dict[str, dict[str, list[str]]],
                         mentions: dict[str, list[MentionFact]]) -> None:
        """Derive and write patients from their studies' image ids (dates from the merged study rows)."""
        if not study_images:
            return
        derivations = {}
        for pid, by_study in study_images.items():
            facts = [StudyFact(sid, _when(self._studies[sid].get("study_datetime")), tuple(iids))
                     for sid, iids in by_study.items()]
            derivations[pid] = derive_patient(facts, mentions.get(pid, []), self._parents)
        self._write_derived(derived_rows(derivations, {p: mentions.get(p, []) for p in derivations}))
        self._derived |= set(derivations)

    def _write_derived(self, rows: DerivedRows) -> None:
        """The rows of a derivation as the transactional statements store them (graph.store.statements:
        study order, observations, study findings, the two progression statements, episodes), each file's rows in one call. The rows are
        this derivation's own: they take their file's fields in place (no copy per row)."""
        f, studies, regions, findings = self.files, self._studies, self._regions, self._findings
        for r in rows.studies:
            self._study_order[r["study_id"]] = r["order"]
        f.relationship_rows("PRIOR", "Study", "Study", [{"start": r["study_id"], "end": r["prior_id"], "days": r["days"]}
                                                        for r in rows.studies if r["prior_id"] is not None])
        kept = []
        for r in rows.observations:
            p = r["props"]
            if p["anatomy"] in regions and p["finding"] in findings:
                p["onset_datetime"] = studies[p["study_id"]].get("study_datetime") if r["onset"] else None
                kept.append(p)
        f.node_rows("Observation", kept)
        f.relationship_pairs("HAS_OBSERVATION", "Study", "Observation", _pairs(kept, "study_id", "observation_id"))
        f.relationship_pairs("OF_FINDING", "Observation", "Finding", _pairs(kept, "observation_id", "finding"))
        f.relationship_pairs("LOCATED_AT", "Observation", "Anatomy", _pairs(kept, "observation_id", "anatomy"))
        found = rows.study_findings
        for r in found:  # the file's row: without the onset flag, with the onset's date-time
            r["onset_datetime"] = studies[r["study_id"]].get("study_datetime") if r.pop("onset") else None
        f.node_rows("StudyFinding", found)
        f.relationship_pairs("HAS_STUDY_FINDING", "Study", "StudyFinding", _pairs(found, "study_id", "study_finding_id"))
        f.relationship_pairs("OF_FINDING", "StudyFinding", "Finding", _pairs(found, "study_finding_id", "finding"))
        for label, events in (("Observation", rows.anatomy_events), ("StudyFinding", rows.study_events)):
            # every property a key (None where absent): the writer reads a full row's values in one call
            edges = [{**self._no_progression, **e["props"], "start": e["current"], "end": e["prior"]} for e in events]
            f.relationship_rows("PROGRESSION", label, label, edges)
        episodes = rows.episodes
        f.node_rows("Episode", episodes)
        f.relationship_pairs("HAS_EPISODE", "Patient", "Episode", _pairs(episodes, "patient_id", "episode_id"))
        f.relationship_pairs("OF_FINDING", "Episode", "Finding", _pairs(episodes, "episode_id", "finding"))


_BOX_IMAGE, _BOX_ANATOMY = attrgetter("image_id", "bbox_id"), attrgetter("bbox_id", "bbox_name")


def _pairs(rows: list[dict[str, Any]], start: str, end: str) -> list[tuple[str, str]]:
    """(row[start], row[end]) of every row: the (start key, end key) of relationships without properties."""
    return list(map(itemgetter(start, end), rows))


def _when(iso: str | None) -> datetime | None:
    return datetime.fromisoformat(iso) if iso else None


def _extend(into: dict | list, values: dict | list) -> None:
    """Add a batch's facts of one patient to those held: lists are extended, {study: image ids} merged."""
    if isinstance(into, list):
        into.extend(values)
    elif isinstance(values, dict):
        for sid, iids in values.items():
            into.setdefault(sid, []).extend(iids)


def _facts(patients: set[str], studies: dict[str, dict], images: list[dict],
           files: list[ParsedFile]) -> tuple[dict[str, dict[str, list[str]]], dict[str, list[MentionFact]]]:
    """What derivation needs of ``patients`` from one batch's rows and records: patient -> study -> image
    ids (every study of the patient, with or without images), and patient -> mention facts."""
    study_images: dict[str, dict[str, list[str]]] = {}
    for sid, row in studies.items():
        if row["patient_id"] in patients:
            study_images.setdefault(row["patient_id"], {})[sid] = []
    for i in images:
        pid = studies[i["study_id"]]["patient_id"]
        if pid in patients:
            study_images[pid][i["study_id"]].append(i["image_id"])
    mentions: dict[str, list[MentionFact]] = {}
    for pf in files:
        for m in pf.mentions:
            if (study := studies.get(m.study_id)) is not None and study["patient_id"] in patients:
                mentions.setdefault(study["patient_id"], []).append(mention_fact(m))
    return study_images, mentions


# a worker's import files, kept open over its batches: one set per thread (a Dask worker may run several
# tasks at once in threads), replaced when a new load writes elsewhere
_worker_files: dict[int, ImportFiles] = {}


@atexit.register
def _close_worker_files() -> None:
    # a worker's files are flushed after each batch; closing them at exit only spares the interpreter's warning
    for files in _worker_files.values():
        files.close()
    _worker_files.clear()


def write_part(files: list[InputFile], doc_mapping: str | None, metadata: list[str], link: set[str],
               folder: Path, batch: int, loaded_at: datetime) -> Part:
    """Parse, check and write one batch: what a worker process of a bulk load runs (arguments and result are
    pickled). Each worker process writes all its batches into files of its own under ``folder`` (the
    importer reads a few large files faster than thousands of small ones: 3,733 files took 3 to 4 s longer
    than the same rows in 23 on the NIH cohort). Files are fingerprinted from the bytes parsed
    (:func:`~graph.ingest.parse.fingerprinted`).
    Studies are checked against the batch alone (:meth:`BulkSink.absorb` checks them against the earlier
    batches). The worker may be a forked process of the load or a Dask worker (of any machine that sees
    ``folder`` at the same path)."""
    thread = threading.get_ident()
    mine = _worker_files.get(thread)
    if mine is None or mine.folder.parent != folder:
        if mine is not None:
            mine.close()  # an earlier load's
        mine = _worker_files[thread] = ImportFiles(folder / f"worker{os.getpid()}-{thread}")
    vocab = vocabulary()
    parsed = parse_files(files, vocab, doc_mapping)
    files = fingerprinted(files, parsed)
    sink = BulkSink(mine, vocab, loaded_at, park_in=folder / f"parked{batch:05d}")
    result = store_files(sink, files, parsed, vocab, set(), metadata, link)
    return sink.part(result)
