"""RadGraph-style report extractions in every spelling users hold, normalised to mention records.

Accepted inputs (docs/formats.md §2-§3):

* RadGraph v1 / RadGraph2 JSON: ``{doc_key: {"text", "entities": {id: {tokens, label, start_ix, end_ix,
  relations: [[type, target_id], ...]}}, "data_source", "data_split"}}``; labels ``ANAT-DP``, ``OBS-DP``,
  ``OBS-U``, ``OBS-DA`` and RadGraph2's ``CHAN-*`` change labels with the code aliases of its repository.
* the ``test.json`` variant with ``labeler_1`` / ``labeler_2`` per document (``labeler_1`` is read, as the
  dataset's own loaders do).
* the ``radgraph`` package / RadGraph-XL output (``Observation::definitely present``, measurement
  variants), keyed ``"0"``, ``"1"`` ..., and lists of ``{report_id, report_text, processed_annotations:
  {radgraph_annotations: {"0": doc}}}`` as the package's processed-annotations helper returns them.
* RadGraph-XL DyGIE JSONL: one ``{doc_key, sentences, ner, relations}`` per line, document-level
  inclusive token offsets.

Patient and study come from a MIMIC doc_key (``p10/p10000032/s50414267.txt``) or from a mapping the
user gives (:func:`read_doc_mapping`).

:func:`parse_radgraph` reads a file whole; :func:`parse_radgraph_chunks` streams the same spellings with
``ijson`` (JSON) or line by line (JSONL) for files too big for memory, such as the 220,000-report
inference release, and :func:`check_json_stream` checks such a file's syntax up front.
"""

from __future__ import annotations

import csv
import json
import re
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import ijson

from graph.formats.scene_graph import parse_datetime
from graph.records import (
    SOURCE_RADGRAPH,
    InputError,
    MentionRecord,
    ParsedFile,
    Rejection,
    ReportRecord,
    StudyRecord,
    stable_id,
)
from graph.vocabulary import Vocabulary, normalise_phrase, normalise_region_phrase

_MIMIC_KEY = re.compile(r"(?:^|/)p\d{2}/p(?P<patient>\d+)/s(?P<study>\d+)\.txt$")
#: Report section headers recognised in tokenized text (``FINDINGS :`` or ``FINDINGS:``), MIMIC-CXR's and
#: Open-i's section names.
SECTION_NAMES = ("comparison", "indication", "history", "technique", "examination", "findings", "impression")
_SENTENCE_END = {".", "?", "!"}
STREAM_BUFFER_BYTES = 1 << 16  # bytes ijson reads at a time from a streamed file

_ASSERTIONS = {"definitely present": "present", "definitely absent": "absent", "uncertain": "uncertain"}
_V1_LABELS = {"ANAT-DP": ("ANAT", "present"), "OBS-DP": ("OBS", "present"), "OBS-U": ("OBS", "uncertain"),
              "OBS-DA": ("OBS", "absent")}


@dataclass(frozen=True)
class DocStudy:
    """Where a report belongs: patient, study and (optionally) the study's date."""

    patient_id: str
    study_id: str
    study_datetime: datetime | None = None


@dataclass(frozen=True)
class _Entity:
    eid: str
    tokens: str
    kind: str  # ANAT, OBS or CHAN
    polarity: str | None
    change_label: str | None
    start: int
    end: int
    relations: tuple[tuple[str, str], ...]


def read_doc_mapping(path: Path) -> dict[str, DocStudy]:
    """Read a mapping CSV with columns ``doc_key, patient_id, study_id`` and optional ``study_datetime``.

    Raises:
        InputError: a column is missing, or a row has an empty id or an unreadable date.
    """
    file = str(path)
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"doc_key", "patient_id", "study_id"} - set(reader.fieldnames or ())
        if missing:
            raise InputError(file, None, ", ".join(sorted(missing)), "missing column(s)")
        out: dict[str, DocStudy] = {}
        for n, row in enumerate(reader, start=2):
            record = f"line {n}"
            for col in ("doc_key", "patient_id", "study_id"):
                if not (row.get(col) or "").strip():
                    raise InputError(file, record, col, "empty")
            when = None
            if (row.get("study_datetime") or "").strip():
                try:
                    when = parse_datetime(row["study_datetime"])
                except ValueError as exc:
                    raise InputError(file, record, "study_datetime", str(exc)) from exc
            out[row["doc_key"].strip()] = DocStudy(row["patient_id"].strip(), row["study_id"].strip(), when)
    return out


def study_for_doc_key(doc_key: str, mapping: dict[str, DocStudy] | None) -> DocStudy | None:
    """Mapping first, then the MIMIC doc_key layout (any ``files/`` prefix is ignored)."""
    if mapping and doc_key in mapping:
        return mapping[doc_key]
    m = _MIMIC_KEY.search(doc_key)
    return DocStudy(m["patient"], m["study"]) if m else None


def _label(label: Any, vocab: Vocabulary) -> tuple[str, str | None, str | None] | None:
    """(kind, polarity, change label) for an entity label in any supported spelling, or None if unknown."""
    if not isinstance(label, str):
        return None
    if label in _V1_LABELS:
        kind, pol = _V1_LABELS[label]
        return kind, pol, None
    if label in vocab.change_labels:
        return "CHAN", None, label
    parts = label.split("::")
    if len(parts) in (2, 3) and parts[0] in ("Anatomy", "Observation") and parts[-1] in _ASSERTIONS:
        return ("ANAT" if parts[0] == "Anatomy" else "OBS"), _ASSERTIONS[parts[-1]], None
    return None


def _entities(doc_key: str, raw: Any, file: str, vocab: Vocabulary) -> dict[str, _Entity]:
    if not isinstance(raw, dict):
        raise InputError(file, doc_key, "entities", f"is {type(raw).__name__}, expected an object")
    out: dict[str, _Entity] = {}
    for eid, ent in raw.items():
        where = f"entities.{eid}"
        if not isinstance(ent, dict):
            raise InputError(file, doc_key, where, "expected an object")
        parsed = _label(ent.get("label"), vocab)
        if parsed is None:
            raise InputError(file, doc_key, f"{where}.label", f"unknown entity label {ent.get('label')!r}")
        start, end, tokens = ent.get("start_ix"), ent.get("end_ix"), ent.get("tokens")
        if not isinstance(start, int) or not isinstance(end, int) or end < start:
            raise InputError(file, doc_key, f"{where}.start_ix", f"bad token span {start!r}..{end!r}")
        if not isinstance(tokens, str):
            raise InputError(file, doc_key, f"{where}.tokens", f"is {type(tokens).__name__}, expected text")
        rels = ent.get("relations", [])
        if not isinstance(rels, list) or not all(isinstance(r, (list, tuple)) and len(r) == 2 for r in rels):
            raise InputError(file, doc_key, f"{where}.relations", "expected a list of [type, target_id] pairs")
        out[str(eid)] = _Entity(str(eid), tokens, parsed[0], parsed[1], parsed[2], start, end,
                                tuple((str(t), str(target)) for t, target in rels))
    for ent in out.values():
        for rtype, target in ent.relations:
            if target not in out:
                raise InputError(file, doc_key, f"entities.{ent.eid}.relations",
                                 f"{rtype} relation targets entity {target!r}, which does not exist")
    return out


def token_sections(tokens: list[str], names: tuple[str, ...] = SECTION_NAMES) -> list[str | None]:
    """Per token, the (lower-case) report section it sits in: a header is a section name followed by a colon,
    in the token or the next one (``FINDINGS :``); None before the first header."""
    out, section = [], None
    for i, tok in enumerate(tokens):
        word = tok.rstrip(":").lower()
        if word in names and (tok.endswith(":") or (i + 1 < len(tokens) and tokens[i + 1] == ":")):
            section = word
        out.append(section)
    return out


def _sentences(tokens: list[str]) -> tuple[list[int], list[str | None]]:
    """Per token: its sentence index and the report section it sits in."""
    sent_of, sent = [], 0
    for tok in tokens:
        sent_of.append(sent)
        if tok in _SENTENCE_END or tok == ":":
            sent += 1
    return sent_of, token_sections(tokens)


def doc_to_records(doc_key: str, text: str, entities: dict[str, _Entity], study: DocStudy, file: str,
                   vocab: Vocabulary) -> tuple[ReportRecord, list[MentionRecord]]:
    """Normalise one document's entities into mentions.

    For each observation entity: the finding is its span, or anatomy + span (``pleural`` + ``effusion``),
    or modifier + span, looked up in the vocabulary; its anatomy is the located_at target with that
    target's own modifiers (``left`` -> ``base``), else the finding's default regions on the stated side;
    severity comes from modifying severity words; a change comes from a CHAN entity linked by a relation
    in either direction, else from an unlinked CHAN entity in the same sentence. Observation spans that only
    modify another observation (``small``, ``increased``) are modifiers, not findings. Unknown terms are
    returned on the report's ``unmapped_terms``.
    """
    tokens = text.split(" ")
    sent_of, section_of = _sentences(tokens)
    incoming: dict[str, list[tuple[str, _Entity]]] = {eid: [] for eid in entities}
    for ent in entities.values():
        for rtype, target in ent.relations:
            incoming[target].append((rtype, ent))
    linked_changes = _changes_by_observation(entities, incoming, sent_of)

    mentions: list[MentionRecord] = []
    unmapped: list[str] = []
    for obs in (e for e in entities.values() if e.kind == "OBS"):
        anatomy_ents = [entities[t] for rtype, t in obs.relations if rtype == "located_at" and entities[t].kind == "ANAT"]
        modifiers = [src for rtype, src in incoming[obs.eid] if rtype == "modify" and src.kind == "OBS"]
        finding, consumed = _finding_of(obs, anatomy_ents, modifiers, vocab)
        if finding is None:
            modifies_obs = any(rtype == "modify" and entities[t].kind == "OBS" for rtype, t in obs.relations)
            if not modifies_obs and vocab.severity_of(obs.tokens) is None:
                unmapped.append(obs.tokens.lower())
            continue
        regions = _regions_of(obs, finding, anatomy_ents, consumed, incoming, vocab, unmapped)
        scored = [(vocab.severity_of(mod.tokens), mod.tokens.lower()) for mod in modifiers]
        score, severity = max(((sc, w) for sc, w in scored if sc is not None), key=lambda x: x[0], default=(None, None))
        changes = linked_changes.get(obs.eid, [])
        change_ent = changes[0] if changes else None
        sentence = sent_of[min(obs.start, len(tokens) - 1)] if tokens else 0
        evidence = " ".join(t for t, si in zip(tokens, sent_of) if si == sentence)
        section = section_of[min(obs.start, len(section_of) - 1)] if section_of else None
        for region in dict.fromkeys(regions):
            mentions.append(MentionRecord(
                mention_id=stable_id(SOURCE_RADGRAPH, study.study_id, doc_key, region, finding, obs.eid),
                study_id=study.study_id, anatomy=region, finding=finding, polarity=obs.polarity,
                severity=severity, severity_score=score,
                change=vocab.change_labels[change_ent.change_label] if change_ent else None,
                change_label=change_ent.change_label if change_ent else None, prior_image_id=None,
                evidence=evidence, source=SOURCE_RADGRAPH, file=file, record=doc_key, section=section,
            ))
    report = ReportRecord(doc_key, study.study_id, text, SOURCE_RADGRAPH, tuple(unmapped))
    return report, mentions


def _changes_by_observation(entities: dict[str, _Entity], incoming: dict[str, list[tuple[str, _Entity]]],
                            sent_of: list[int]) -> dict[str, list[_Entity]]:
    """observation eid -> its CHAN entities: linked by a relation in either direction, else (an unlinked
    CHAN) the nearest observation of the same sentence."""
    linked: dict[str, list[_Entity]] = {}
    unlinked: list[_Entity] = []
    for ent in entities.values():
        if ent.kind != "CHAN":
            continue
        targets = [entities[t] for _, t in ent.relations if entities[t].kind == "OBS"]
        targets += [src for _, src in incoming[ent.eid] if src.kind == "OBS"]
        for t in targets:
            linked.setdefault(t.eid, []).append(ent)
        if not targets:
            unlinked.append(ent)
    observations = [e for e in entities.values() if e.kind == "OBS"]
    last = len(sent_of) - 1
    for chan in unlinked:
        same = [o for o in observations if sent_of[min(o.start, last)] == sent_of[min(chan.start, last)]]
        if same:
            linked.setdefault(min(same, key=lambda o: abs(o.start - chan.start)).eid, []).append(chan)
    return linked


def _finding_of(obs: _Entity, anatomy_ents: list[_Entity], modifiers: list[_Entity],
                vocab: Vocabulary) -> tuple[str | None, set[str]]:
    """(finding, eids of the anatomy entities its name used): modifier + span, anatomy + span
    (``pleural`` + ``effusion``), else the span alone; None when the vocabulary knows none of them."""
    finding, consumed = None, set()
    for mod in modifiers:
        finding = finding or vocab.finding_for(f"{mod.tokens} {obs.tokens}")
    for anat in anatomy_ents:
        if finding is None and (f := vocab.finding_for(f"{anat.tokens} {obs.tokens}")):
            finding, consumed = f, {anat.eid}
    return finding or vocab.finding_for(obs.tokens), consumed


def _regions_of(obs: _Entity, finding: str, anatomy_ents: list[_Entity], consumed: set[str],
                incoming: dict[str, list[tuple[str, _Entity]]], vocab: Vocabulary, unmapped: list[str]) -> list[str]:
    """The observation's regions: its located_at targets with their own modifiers (``left`` -> ``base``),
    else the finding's default regions on the stated side. Unknown places are added to ``unmapped``."""
    def phrase(ent: _Entity) -> str:
        parts = [ent] + [src for rtype, src in incoming[ent.eid] if rtype == "modify" and src.kind == "ANAT"]
        return " ".join(p.tokens for p in sorted(parts, key=lambda e: e.start))

    regions: list[str] = []
    side = None
    for rtype, src in incoming[obs.eid]:
        if rtype == "modify" and src.kind == "ANAT":
            side = side or vocab.side_of(src.tokens)
    for anat in anatomy_ents:
        text_ = phrase(anat)
        side = side or vocab.side_of(text_)
        if anat.eid in consumed:
            # "pleural" went into "pleural effusion"; keep a more specific place its modifiers name
            # ("left mid lung" + "opacity"), else the finding's default regions on that side
            rest = " ".join(w for w in normalise_region_phrase(text_).split() if w not in ("left", "right", "bilateral"))
            if rest == normalise_phrase(anat.tokens):
                continue
        found = vocab.regions_for(text_) or vocab.regions_for(anat.tokens)
        if not found:
            unmapped.append(f"region:{text_.lower()}")
        regions.extend(found)
    return regions or list(vocab.default_regions(finding, side if side in ("left", "right") else None))


def _jsonl_doc(line: dict, file: str) -> tuple[str, str, dict]:
    """Convert one DyGIE-style RadGraph-XL line to (doc_key, text, v1-style entities)."""
    doc_key = str(line.get("doc_key", ""))
    sentences, ner, rels = line.get("sentences"), line.get("ner"), line.get("relations", [])
    if not isinstance(sentences, list) or not isinstance(ner, list):
        raise InputError(file, doc_key, "sentences" if not isinstance(sentences, list) else "ner", "expected a list")
    tokens = [t for sent in sentences for t in sent]
    entities, by_span = {}, {}
    for sent in ner:
        for span in sent:
            s, e, label = span
            eid = str(len(entities) + 1)
            entities[eid] = {"tokens": " ".join(tokens[s:e + 1]), "label": label, "start_ix": s, "end_ix": e, "relations": []}
            by_span[(s, e)] = eid
    for sent in rels:
        for s1, e1, s2, e2, label in sent:
            if (s1, e1) not in by_span or (s2, e2) not in by_span:
                raise InputError(file, doc_key, "relations", f"{label} relation between spans that are not entities")
            entities[by_span[(s1, e1)]]["relations"].append([label, by_span[(s2, e2)]])
    return doc_key, " ".join(tokens), entities


def _jsonl_documents(path: Path, file: str) -> Iterator[tuple[str, Any]]:
    """JSONL, one line at a time: each line is a record of its own (an unreadable line is rejected alone)."""
    with path.open("rb") as fh:
        for n, raw_line in enumerate(fh, start=1):
            if not raw_line.strip():
                continue
            try:
                line = json.loads(raw_line)
                doc_key, text, ents = _jsonl_doc(line, file)
                yield doc_key or f"line {n}", {"text": text, "entities": ents}
            except json.JSONDecodeError as exc:
                yield f"line {n}", InputError(file, f"line {n}", None, f"invalid JSON: {exc}")
            except InputError as exc:
                yield exc.record or f"line {n}", exc
            except (TypeError, ValueError) as exc:
                yield f"line {n}", InputError(file, f"line {n}", "ner", f"malformed span: {exc}")


def _list_item(n: int, item: Any, file: str) -> tuple[str, Any]:
    """One item of the package's processed-annotations list as (report_id, doc or InputError)."""
    if not isinstance(item, dict) or "report_id" not in item:
        return f"[{n}]", InputError(file, f"[{n}]", "report_id", "list items need report_id")
    doc = (item.get("processed_annotations") or {}).get("radgraph_annotations", {}).get("0")
    return str(item["report_id"]), doc if doc is not None else InputError(
        file, str(item["report_id"]), "processed_annotations.radgraph_annotations.0", "missing")


def _labeler_1(doc: Any) -> Any:
    """The ``test.json`` variant: a document without ``entities`` but with ``labeler_1`` reads labeler_1."""
    if isinstance(doc, dict) and "entities" not in doc and "labeler_1" in doc:
        return {**doc, "entities": (doc["labeler_1"] or {}).get("entities")}
    return doc


def iter_documents(path: Path, file: str) -> Iterator[tuple[str, Any]]:
    """Yield ``(doc_key, doc)`` with doc = ``{"text", "entities"}`` or an InputError for a bad record.

    Reads a JSON file whole (see :func:`stream_documents` for big files); JSONL line by line.

    Raises:
        InputError: the whole file is unreadable (invalid JSON, unexpected top level).
    """
    if path.suffix == ".jsonl":
        yield from _jsonl_documents(path, file)
        return
    try:
        raw = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(file, None, None, f"invalid JSON: {exc}") from exc
    if isinstance(raw, list):  # radgraph package processed-annotations list
        for n, item in enumerate(raw):
            yield _list_item(n, item, file)
        return
    if not isinstance(raw, dict):
        raise InputError(file, None, None, f"top level is {type(raw).__name__}, expected an object or list")
    for doc_key, doc in raw.items():
        yield doc_key, _labeler_1(doc)


# --- streaming (big files) ------------------------------------------------------------------------

_BOM = b"\xef\xbb\xbf"


class _CountingReader:
    """A binary file wrapper that remembers which bytes the last ``read`` returned (for error positions)."""

    def __init__(self, fh: BinaryIO, offset: int):
        self.fh, self.start, self.end = fh, offset, offset

    def read(self, size: int = -1) -> bytes:
        data = self.fh.read(size)
        if data:
            self.start, self.end = self.end, self.end + len(data)
        return data


def _open_stream(path: Path, file: str) -> tuple[BinaryIO, int, str]:
    """Open a JSON file for streaming: (file positioned after any UTF-8 BOM, that offset, ``{`` or ``[``).

    Raises:
        InputError: the file is empty, not UTF-8 JSON, or its top level is neither an object nor a list.
    """
    fh = path.open("rb")
    try:
        head = fh.read(4096)
        offset = len(_BOM) if head.startswith(_BOM) else 0
        body = head[offset:]
        while not body.strip() and (more := fh.read(1 << 16)):
            body += more
        first = body.lstrip()[:1]
        if first not in (b"{", b"["):
            what = "the file is empty" if not first else f"it starts with {first!r}"
            raise InputError(file, None, None, f"invalid JSON for streaming: {what}; expected a UTF-8 JSON "
                                                "object or list")
        fh.seek(offset)
        return fh, offset, first.decode()
    except BaseException:
        fh.close()
        raise


def _json_error(exc: BaseException) -> str:
    """The first line of an ijson / yajl error (its message may be bytes and spans several lines)."""
    msg = exc.args[0] if exc.args else str(exc)
    if isinstance(msg, bytes):
        msg = msg.decode("utf-8", "replace")
    return str(msg).strip().splitlines()[0] if str(msg).strip() else type(exc).__name__


def _stream_items(reader: Any, kind: str, file: str, buf_size: int = STREAM_BUFFER_BYTES) -> Iterator[tuple[str, Any]]:
    if kind == "{":
        for doc_key, doc in ijson.kvitems(reader, "", use_float=True, buf_size=buf_size):
            yield doc_key, _labeler_1(doc)
    else:
        for n, item in enumerate(ijson.items(reader, "item", use_float=True, buf_size=buf_size)):
            yield _list_item(n, item, file)


def _position_error(path: Path, file: str, reason: str) -> InputError:
    """An InputError naming where a streamed JSON file breaks: a byte range of at most 4 KiB and the
    complete documents before it. Reads the file again up to the break (only on this error path)."""
    fh, offset, kind = _open_stream(path, file)
    reader, count, last = _CountingReader(fh, offset), 0, None
    with fh:
        try:
            for doc_key, _ in _stream_items(reader, kind, file, buf_size=4096):
                count, last = count + 1, doc_key
        except (ijson.JSONError, UnicodeDecodeError):
            pass
    before = f"{count} complete document(s) before them" + (f", the last {last!r}" if last is not None else "")
    return InputError(file, None, None, f"invalid JSON in bytes {reader.start}-{reader.end} of "
                                        f"{path.stat().st_size} ({before}): {reason}")


def check_json_stream(path: Path, file: str | None = None) -> None:
    """Check that a RadGraph JSON file is well-formed from start to end, holding no document in memory.

    A syntax-only pass (ijson's C backend, ``STREAM_BUFFER_BYTES`` at a time); JSONL files are not
    checked here, their lines are independent records.

    Raises:
        InputError: the file is not one UTF-8 JSON object or list (truncated, invalid syntax, trailing
            data); the message names the byte range (at most 4 KiB) where the problem lies and how many
            complete documents (and which doc_key last) come before it.
        OSError: the file cannot be read.
    """
    file = file or str(path)
    if path.suffix == ".jsonl":
        return
    fh, offset, _ = _open_stream(path, file)
    with fh:
        try:
            deque(ijson.basic_parse(fh, buf_size=STREAM_BUFFER_BYTES), maxlen=0)
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            reason = _json_error(exc)
        else:
            return
    raise _position_error(path, file, reason)


def stream_documents(path: Path, file: str) -> Iterator[tuple[str, Any]]:
    """Like :func:`iter_documents`, holding one document at a time: JSON through ijson, JSONL by line.

    Accepts the same spellings (``{doc_key: doc}`` with the labeler_1 variant, the processed-annotations
    list, JSONL). In a JSON object a doc_key that occurs again is rejected as a record (the whole-file
    reader would keep only its last occurrence, which a stream cannot know in advance).

    Raises:
        InputError: the file is not readable JSON; raised when the stream reaches the fault, after the
            documents before it were yielded (call :func:`check_json_stream` first to fail early).
    """
    if path.suffix == ".jsonl":
        yield from _jsonl_documents(path, file)
        return
    fh, offset, kind = _open_stream(path, file)
    reader = _CountingReader(fh, offset)
    seen: set[str] = set()
    with fh:
        try:
            for doc_key, doc in _stream_items(reader, kind, file):
                if kind == "{":
                    if doc_key in seen:
                        doc = InputError(file, doc_key, "doc_key", "duplicate doc_key: an earlier document of "
                                                                   "this file has it; this one is skipped")
                    seen.add(doc_key)
                yield doc_key, doc
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            raise InputError(file, None, None, f"invalid JSON in bytes {reader.start}-{reader.end}: "
                                               f"{_json_error(exc)}") from exc


def _add_document(out: ParsedFile, doc_key: str, doc: Any, file: str, vocab: Vocabulary,
                  mapping: dict[str, DocStudy] | None) -> None:
    """Normalise one document into ``out``, or append its rejection to ``out.rejections``."""
    try:
        if isinstance(doc, InputError):
            raise doc
        if not isinstance(doc, dict):
            raise InputError(file, doc_key, None, f"document is {type(doc).__name__}, expected an object")
        text = doc.get("text")
        if not isinstance(text, str):
            raise InputError(file, doc_key, "text", "missing or not text")
        study = study_for_doc_key(doc_key, mapping)
        if study is None:
            raise InputError(file, doc_key, "doc_key", "not a MIMIC doc_key (p10/p10000032/s50414267.txt) "
                             "and not in the doc mapping")
        entities = _entities(doc_key, doc.get("entities"), file, vocab)
        n_tokens = len(text.split(" "))
        for ent in entities.values():
            if ent.end >= n_tokens:
                raise InputError(file, doc_key, f"entities.{ent.eid}.end_ix", f"{ent.end} is past the last token ({n_tokens - 1})")
        report, mentions = doc_to_records(doc_key, text, entities, study, file, vocab)
    except InputError as exc:
        out.rejections.append(Rejection.from_error(exc))
        return
    out.studies.append(StudyRecord(study.study_id, study.patient_id, study.study_datetime, doc_key))
    out.reports.append(report)
    out.mentions.extend(mentions)
    out.unmapped_terms.extend(report.unmapped_terms)


def parse_radgraph(path: Path, vocab: Vocabulary, mapping: dict[str, DocStudy] | None = None,
                   display_path: str | None = None) -> ParsedFile:
    """Read a RadGraph-family file; each document is a record, rejected on its own when malformed.

    Raises:
        InputError: the file as a whole cannot be read (invalid or truncated JSON, wrong top level).
    """
    file = display_path or str(path)
    out = ParsedFile(path=file)
    for doc_key, doc in iter_documents(path, file):
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
