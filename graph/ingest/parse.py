"""Parsing a batch of files into records, and the checks that need the graph's view of their studies."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from graph.formats.files import read_bytes
from graph.formats.metadata import StudyDates
from graph.formats.radgraph import DocStudy, parse_radgraph, read_doc_mapping
from graph.formats.scene_graph import parse_scene_graph
from graph.ingest import plan
from graph.ingest.lunguage import parse_lunguage
from graph.ingest.plan import LUNGUAGE, RADGRAPH, SCENE_GRAPH, InputFile
from graph.records import ImageRecord, InputError, ParsedFile, Rejection, cyclic_gc_paused
from graph.vocabulary import Vocabulary, vocabulary


@dataclass
class StreamedFile(ParsedFile):
    """What :func:`parse_files` returns for a RadGraph file above ``STREAM_THRESHOLD_BYTES``: nothing
    parsed yet; :func:`store_files` reads and writes it in chunks. ``mapping`` is the batch's doc mapping."""

    mapping: dict[str, DocStudy] | None = None


def parse_file(f: InputFile, vocab: Vocabulary, mapping: dict[str, DocStudy] | None) -> ParsedFile:
    """Parse one file; a file-level error becomes a single rejection of the whole file.

    A scene graph or RadGraph JSON file is read once, whole: its ``sha256`` is that of the bytes parsed
    (:func:`fingerprinted` takes it from there). A RadGraph file above ``STREAM_THRESHOLD_BYTES`` is not
    read here: it comes back as a :class:`StreamedFile` for :func:`store_files` to stream.
    """
    digest = ""
    try:
        # the size the plan found (one system call less per file); a file's own stat where it has none
        path, size = Path(f.path), (f.size if f.size >= 0 else None)
        if f.format == RADGRAPH and (path.stat().st_size if size is None else size) > plan.STREAM_THRESHOLD_BYTES:
            return StreamedFile(path=f.path, mapping=mapping)
        if f.format == LUNGUAGE:
            return parse_lunguage(path, vocab)
        if f.format == RADGRAPH and path.suffix == ".jsonl":  # read line by line
            return parse_radgraph(path, vocab, mapping)
        data = read_bytes(path, size)
        digest = hashlib.sha256(data).hexdigest()
        out = (parse_scene_graph(path, vocab, data=data) if f.format == SCENE_GRAPH
               else parse_radgraph(path, vocab, mapping, data=data))
        out.sha256 = digest
        return out
    except InputError as exc:
        return ParsedFile(path=f.path, rejections=[Rejection.from_error(exc)], sha256=digest)
    except OSError as exc:
        return ParsedFile(path=f.path, rejections=[Rejection(f.path, None, None, f"cannot read: {exc}")])
    except RecursionError:
        # json's decoder and the validators recurse once per nesting level; no real input nests deeply
        return ParsedFile(path=f.path, rejections=[Rejection(f.path, None, None, "JSON nested too deeply to read "
                                                             f"(deeper than about {sys.getrecursionlimit()} levels)")])


def drop_records(pf: ParsedFile, records: set[str]) -> ParsedFile:
    """A copy of a parsed file without the given records (image ids or doc_keys)."""
    if not records:
        return pf
    keep = ParsedFile(path=pf.path, rejections=pf.rejections, unmapped_terms=pf.unmapped_terms,
                      ambiguous_comparisons=pf.ambiguous_comparisons, out_of_schema=pf.out_of_schema, variants=pf.variants,
                      sha256=pf.sha256)
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
        if dates.image_size and any(i.image_id in dates.image_size for i in pf.images):
            pf.images = [_sized(i, dates.image_size.get(i.image_id)) for i in pf.images]
        out.append(pf)
    return out


def _sized(image: ImageRecord, size: tuple[int, int] | None) -> ImageRecord:
    """The image with the metadata CSV's Rows and Columns (a record states none)."""
    return image if size is None else replace(image, rows=size[0], columns=size[1])


def fingerprinted(files: list[InputFile], parsed: list[ParsedFile]) -> list[InputFile]:
    """``files`` with their ``sha256`` filled in where empty: from the bytes :func:`parse_file` parsed, else
    (a streamed, JSON Lines, Lunguage or rejected file) by reading the file
    (:func:`graph.ingest.plan.with_fingerprint`). ``parsed`` is :func:`parse_files`' answer for ``files``."""
    return [f if f.sha256 else replace(f, sha256=pf.sha256) if pf.sha256 else plan.with_fingerprint(f)
            for f, pf in zip(files, parsed, strict=True)]


def parse_files(files: list[InputFile], vocab: Vocabulary, mapping_path: str | None) -> list[ParsedFile]:
    """Parse a batch of files without touching the graph (so it can run while another batch is written).

    Returns:
        one ParsedFile per input file, in order; file-level errors are rejections inside them.
    """
    mapping = read_doc_mapping(Path(mapping_path)) if mapping_path else None
    # a batch allocates a few hundred containers per file (decoded lists, records) that stay alive and form
    # no cycle: the collector's passes over them freed nothing and cost about a fifth of the parse's CPU
    with cyclic_gc_paused():
        return [parse_file(f, vocab, mapping) for f in files]


def parse_files_with_packaged_vocabulary(files: list[InputFile], mapping_path: str | None) -> list[ParsedFile]:
    """:func:`parse_files` with the packaged vocabulary: what a parse worker process runs (its arguments
    and result are pickled, so it takes no Vocabulary object)."""
    return parse_files(files, vocabulary(), mapping_path)


def read_input(reader: Any, path: Path, *args: Any) -> Any:
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
