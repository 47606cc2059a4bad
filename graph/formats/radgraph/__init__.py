"""RadGraph-style report extractions in every spelling users hold, normalised to mention records.

Accepted inputs (docs/formats.md §2-§3):

* RadGraph v1 / RadGraph2 JSON: ``{doc_key: {"text", "entities": {id: {tokens, label, start_ix, end_ix,
  relations: [[type, target_id], ...]}}, "data_source", "data_split"}}``; labels ``ANAT-DP``, ``OBS-DP``,
  ``OBS-U``, ``OBS-DA`` and RadGraph2's ``CHAN-*`` change labels with the code aliases of its repository.
* the ``test.json`` variant with ``labeler_1`` / ``labeler_2`` per document (``labeler_1`` is read, as the
  dataset's own loaders do).
* the ``radgraph`` package / RadGraph-XL output (``Observation::definitely present``, measurement
  variants), keyed ``"0"``, ``"1"`` ..., lists of such outputs (one ``{"0": doc}`` per call), and lists of
  ``{report_id, report_text, processed_annotations: {radgraph_annotations: {"0": doc}}}`` as the package's
  processed-annotations helper returns them.
* RadGraph-XL DyGIE JSONL: one ``{doc_key, sentences, ner, relations}`` per line, document-level
  inclusive token offsets; a DyGIE prediction file's ``predicted_ner`` / ``predicted_relations`` (with
  scores) where ``ner`` is absent.

A document read from a variant spelling (test.json's labelers, a list, DyGIE predictions) is counted by
the variant's name in ``ParsedFile.variants``.

Patient and study come from a MIMIC doc_key (``p10/p10000032/s50414267.txt``) or from a mapping the
user gives (:func:`read_doc_mapping`). Each accepted document's relations are checked against RadGraph's
schema (:mod:`~graph.formats.radgraph.schema`); ``ParsedFile.out_of_schema`` counts those outside it by name
(``"ANAT modify OBS"``), which are still read (an anatomy word modifying an observation is its side).

:func:`parse_radgraph` reads a file whole; :func:`parse_radgraph_chunks` streams the same spellings with
``ijson`` (JSON) or line by line (JSONL) for files too big for memory, such as the 220,000-report
inference release, and :func:`check_json_stream` checks such a file's syntax up front.

Modules: :mod:`~graph.formats.radgraph.documents` (the spellings, a file read whole),
:mod:`~graph.formats.radgraph.stream` (big files through ijson, the syntax check),
:mod:`~graph.formats.radgraph.doc_mapping` (patient and study of a doc_key),
:mod:`~graph.formats.radgraph.entities` (labels and entity validation) and
:mod:`~graph.formats.radgraph.records` (entities to mentions). This module turns their documents into
:class:`~graph.records.ParsedFile` records and is their public face: other code imports from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from graph.formats.files import read_bytes
from graph.formats.radgraph.doc_mapping import DocStudy, read_doc_mapping, study_for_doc_key
from graph.formats.radgraph.documents import VARIANT, iter_documents
from graph.formats.radgraph.entities import Entity, document_entities, parse_entities
from graph.formats.radgraph.records import SECTION_NAMES, doc_to_records, sentence_index, token_sections
from graph.formats.radgraph.schema import schema_violations
from graph.formats.radgraph.stream import STREAM_BUFFER_BYTES, check_json_stream, stream_documents
from graph.records import InputError, ParsedFile, Rejection, StudyRecord, record_maker
from graph.vocabulary import Vocabulary

_study_record = record_maker(StudyRecord)  # StudyRecord(*values), made faster: one per document

__all__ = [
    "SECTION_NAMES", "STREAM_BUFFER_BYTES", "DocStudy", "Entity", "check_json_stream", "doc_to_records",
    "document_entities", "iter_documents", "parse_entities", "parse_radgraph", "parse_radgraph_chunks",
    "read_doc_mapping", "sentence_index", "stream_documents", "study_for_doc_key", "token_sections",
]


def _add_document(out: ParsedFile, doc_key: str, doc: Any, file: str, vocab: Vocabulary,
                  mapping: dict[str, DocStudy] | None) -> None:
    """Normalise one document into ``out`` (its study, report and mentions, its relations outside the
    schema counted by name and its variant spelling, if any, in ``out.variants``), or append its rejection
    to ``out.rejections``."""
    try:
        if isinstance(doc, InputError):
            raise doc
        text, entities = document_entities(doc_key, doc, file, vocab)
        study = study_for_doc_key(doc_key, mapping)
        if study is None:
            raise InputError(file, doc_key, "doc_key", "not a MIMIC doc_key (p10/p10000032/s50414267.txt) "
                             "and not in the doc mapping")
    except InputError as exc:
        out.rejections.append(Rejection.from_error(exc))
        return
    report, mentions = doc_to_records(doc_key, text, entities, study, file, vocab)
    out.studies.append(_study_record(study.study_id, study.patient_id, study.study_datetime, doc_key, None, None, None))
    out.reports.append(report)
    out.mentions.extend(mentions)
    out.unmapped_terms.extend(report.unmapped_terms)
    for name, n in schema_violations(doc["entities"]).items():
        out.out_of_schema[name] = out.out_of_schema.get(name, 0) + n
    if variant := doc.get(VARIANT):
        out.variants[variant] = out.variants.get(variant, 0) + 1


def parse_radgraph(path: Path, vocab: Vocabulary, mapping: dict[str, DocStudy] | None = None,
                   display_path: str | None = None, data: bytes | None = None) -> ParsedFile:
    """Read a RadGraph-family file; each document is a record, rejected on its own when malformed.

    ``data`` is the bytes of a JSON file when the caller has read them already (not read again; else
    :func:`~graph.formats.files.read_bytes`); a JSON Lines file is streamed line by line whatever is given.

    Raises:
        InputError: the file as a whole cannot be read (invalid or truncated JSON, wrong top level).
    """
    file = display_path or str(path)
    out = ParsedFile(path=file)
    if path.suffix == ".jsonl":
        data = None
    elif data is None:
        data = read_bytes(path)
    for doc_key, doc in iter_documents(path, file, data):
        _add_document(out, doc_key, doc, file, vocab, mapping)
    return out


def parse_radgraph_chunks(path: Path, vocab: Vocabulary, mapping: dict[str, DocStudy] | None = None,
                          docs_per_chunk: int = 2000, display_path: str | None = None) -> Iterator[ParsedFile]:
    """Read a RadGraph-family file as a stream: one ParsedFile per ``docs_per_chunk`` documents.

    Memory holds the ijson buffer, the current chunk's records and the doc_keys seen so far, not the
    file. Every chunk has ``path`` = the file; documents count whether accepted or rejected; at least
    one chunk is yielded (empty for a file without documents). Records are exactly those
    :func:`parse_radgraph` gives, in the same order, except for repeated doc_keys (see
    :func:`stream_documents`).

    Raises:
        InputError: the stream breaks (invalid or truncated JSON) - after the chunks before the fault
            were yielded; check the file with :func:`check_json_stream` first to reject it up front.
        ValueError: ``docs_per_chunk`` < 1.
    """
    if docs_per_chunk < 1:
        raise ValueError(f"docs_per_chunk must be at least 1, got {docs_per_chunk}")
    file = display_path or str(path)
    out, n, yielded = ParsedFile(path=file), 0, False
    for doc_key, doc in stream_documents(path, file):
        _add_document(out, doc_key, doc, file, vocab, mapping)
        n += 1
        if n == docs_per_chunk:
            yield out
            out, n, yielded = ParsedFile(path=file), 0, True
    if n or not yielded:
        yield out
