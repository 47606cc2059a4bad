"""Lunguage sequential structured reports as a third source: rows (graph.formats.lunguage) -> records.

Each Lunguage row is one entity of one sentence. Rows become records like this:

* **entity -> mention.** The entity (``ent``) names the finding through the vocabulary. An entity the
  vocabulary does not know is listed in the file's unmapped terms and stored as nothing else.
* **location -> anatomy.** ``location`` gives the regions through the vocabulary. Several regions give one
  mention each, all with the row's key. An empty location gives the finding's default regions (on the side
  the sentence names). A location the vocabulary does not know is listed too, and the default regions are
  used.
* **status and certainty -> state.** ``dx_status`` positive + ``dx_certainty`` definitive is present;
  positive + tentative is uncertain; negative is absent (:func:`graph.formats.lunguage.state_of`).
* **change columns -> stated changes.** ``onset`` becomes new; ``improved``, ``worsened`` and ``no change``
  become those changes, against the patient's previous study (:data:`graph.formats.lunguage.CHANGE_OF_FIELD`). A row with a change has one mention with the
  state and one per change.
* **severity.** ``severity`` gives the severity word and its score where it is one.
* **groups.** ``gt_entity_group`` and ``gt_temporal_group`` stay on every mention of the row. They become
  stated episodes beside the derived ones (graph.longitudinal.episodes).
* **history.** History-section rows (``section`` hist) and ``patient info.`` rows are kept apart: they are
  in the study's report text, but they are never mentions, so they never set a state.

A file that ``cxrkg export lunguage`` wrote (its header has :data:`graph.formats.lunguage.EXPORT_COLUMN`) is
the graph's own statements, not a source: it is refused whole, with one rejection that says so.

Studies carry no date in Lunguage (only ``sequence``). Their dates come from the MIMIC-CXR metadata CSV
given with the file, as for RadGraph reports. A mention's ``record`` is its Lunguage key
``subject_id|study_id|section|sent_idx|ent_idx``, which is how the Lunguage export finds its row again.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from graph.formats.lunguage import (
    CHANGE_OF_FIELD,
    EXPORT_COLUMN,
    EXPORTED_FILE,
    LunguageInputError,
    LunguageRow,
    lunguage_header,
    read_lunguage,
    state_of,
)
from graph.records import MentionRecord, ParsedFile, ReportRecord, StudyRecord, stable_id
from graph.terms import Source
from graph.vocabulary import Vocabulary


def lunguage_key(row: LunguageRow) -> str:
    """The row's Lunguage key as one text (a mention's ``record``)."""
    return "|".join(str(v) for v in row.key())


def _regions(row: LunguageRow, finding: str, vocab: Vocabulary, unmapped: list[str]) -> tuple[str, ...]:
    if row.location:
        regions = tuple(dict.fromkeys(r for part in row.location.split(",") for r in vocab.regions_for(part.strip())))
        if regions:
            return regions
        unmapped.append(row.location)
    return vocab.default_regions(finding, vocab.side_of(row.location or row.sent))


def _mentions(row: LunguageRow, path: str, vocab: Vocabulary, unmapped: list[str]) -> list[MentionRecord]:
    finding = vocab.finding_for(row.ent)
    if finding is None:
        unmapped.append(row.ent)
        return []
    severity = row.severity or None
    changes = [(change, getattr(row, column)) for column, change in CHANGE_OF_FIELD.items() if getattr(row, column)]
    out = []
    for region in _regions(row, finding, vocab, unmapped):
        for change, label in [(None, None), *changes]:
            out.append(MentionRecord(
                mention_id=stable_id(Source.LUNGUAGE, lunguage_key(row), region, change or ""),
                study_id=row.study_id, anatomy=region, finding=finding,
                polarity=state_of(row.dx_status, row.dx_certainty) if change is None else None,
                severity=severity, severity_score=vocab.severity_of(severity) if severity else None,
                change=change, change_label=label,
                prior_image_id=None, evidence=row.sent, source=Source.LUNGUAGE, file=path, record=lunguage_key(row),
                section=row.section, sentence_id=str(row.sent_idx), term=row.ent,
                entity_group=row.gt_entity_group or None, temporal_group=row.gt_temporal_group or None))
    return out


def parse_lunguage(path: Path, vocab: Vocabulary) -> ParsedFile:
    """One Lunguage CSV as records (module docstring). Rows that cannot be read are rejections naming the
    file, the line and the field; the other rows are kept.

    Raises:
        graph.formats.lunguage.LunguageInputError: the file cannot be read at all (not a CSV, a column missing),
            or ``cxrkg export lunguage`` wrote it (field :data:`~graph.formats.lunguage.EXPORT_COLUMN`).
    """
    try:
        exported = lunguage_header(path) == EXPORTED_FILE
    except OSError as exc:
        raise LunguageInputError(str(path), None, None, f"cannot read: {exc}") from exc
    if exported:
        raise LunguageInputError(str(path), "line 1 (header)", EXPORT_COLUMN,
                                 "written by `cxrkg export lunguage`: the graph's own statements, not a source; "
                                 "not loaded")
    read = read_lunguage(Path(path))
    pf = ParsedFile(path=str(path), rejections=list(read.rejections), variants=dict(read.variants))
    sentences: dict[tuple[str, str], dict[tuple[str, int], str]] = defaultdict(dict)
    seen: set[tuple[str, str]] = set()
    for row in read.rows:
        pair = (row.subject_id, row.study_id)
        if pair not in seen:
            seen.add(pair)
            pf.studies.append(StudyRecord(row.study_id, row.subject_id, None, f"{row.subject_id}|{row.study_id}"))
        sentences[pair].setdefault((row.section, row.sent_idx), row.sent)
        if row.is_mention():
            pf.mentions += _mentions(row, str(path), vocab, pf.unmapped_terms)
    for (subject, study), sents in sentences.items():
        text = " ".join(s for _, s in sorted(sents.items(), key=lambda kv: (kv[0][0] != "hist", kv[0])))
        pf.reports.append(ReportRecord(stable_id(Source.LUNGUAGE, subject, study), study, text, Source.LUNGUAGE))
    pf.unmapped_terms = sorted(set(pf.unmapped_terms))
    return pf
