"""Plain records that parsers produce and the loader writes: one shape for every input format.

A parser turns one input file into a :class:`ParsedFile`; records it could not read become
:class:`Rejection` entries that name the file, the record and the field.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

POLARITIES = ("present", "absent", "uncertain")

SOURCE_IMAGENOME = "chest_imagenome"
SOURCE_RADGRAPH = "radgraph"
SOURCE_PRESENCE = "presence"


def stable_id(*parts: object) -> str:
    """A deterministic 20-hex-digit id from the parts (SHA-1 of their ``|``-joined text)."""
    return hashlib.sha1("|".join(str(p) for p in parts).encode()).hexdigest()[:20]


def file_key(path: str) -> int:
    """A signed 64-bit integer standing for a file path (the first 8 bytes of its SHA-1): what the
    Mention index holds, much cheaper for Neo4j to index than the path string. Lookups compare the
    path too, so a collision cannot mix two files."""
    return int.from_bytes(hashlib.sha1(path.encode()).digest()[:8], "big", signed=True)


def observation_id(study_id: str, anatomy: str, finding: str) -> str:
    """The natural key of an Observation: one finding at one anatomy in one study."""
    return f"{study_id}|{anatomy}|{finding}"


class InputError(ValueError):
    """A record that cannot be read: names the file, the record inside it and the offending field."""

    def __init__(self, file: str, record: str | None, field: str | None, reason: str):
        self.file, self.record, self.field, self.reason = file, record, field, reason
        where = ", ".join(p for p in (f"record {record}" if record else "", f"field {field}" if field else "") if p)
        super().__init__(f"{file}: {where + ': ' if where else ''}{reason}")


@dataclass(frozen=True)
class Rejection:
    """One rejected file or record, as written to the rejected-files report."""

    file: str
    record: str | None
    field: str | None
    reason: str

    @classmethod
    def from_error(cls, err: InputError) -> "Rejection":
        return cls(err.file, err.record, err.field, err.reason)


@dataclass(frozen=True)
class StudyRecord:
    """A study of a patient; ``study_datetime`` is None when the input carries no date (filled later)."""

    study_id: str
    patient_id: str
    study_datetime: datetime | None
    record: str


@dataclass(frozen=True)
class ImageRecord:
    image_id: str
    study_id: str
    view: str | None


@dataclass(frozen=True)
class ReportRecord:
    report_id: str
    study_id: str
    text: str
    source: str
    unmapped_terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class MentionRecord:
    """One statement about one finding at one anatomy in one study, from one source.

    Attributes:
        polarity: ``present`` / ``absent`` / ``uncertain``.
        severity: the severity word as written (``"moderate"``), or None.
        severity_score: its ordinal, 1 (mild) .. 3 (marked), or None.
        change: a stated progression class (improved / worsened / no change / new / resolved /
            repositioned) relative to the prior study, or None.
        change_label: the label as written in the input (``comparison|yes|worsened``, ``CHAN-CON-WOR``).
        prior_image_id: the prior image the statement compares with, when the input names it
            (Chest ImaGenome relationships); else the statement refers to the study's prior study.
        evidence: the sentence or phrase the statement comes from.
        record: the record inside the file (image id or doc_key).
    """

    mention_id: str
    study_id: str
    anatomy: str
    finding: str
    polarity: str | None
    severity: str | None
    severity_score: int | None
    change: str | None
    change_label: str | None
    prior_image_id: str | None
    evidence: str
    source: str
    file: str
    record: str
    section: str | None = None


@dataclass
class ParsedFile:
    """Everything read from one input file."""

    path: str
    studies: list[StudyRecord] = field(default_factory=list)
    images: list[ImageRecord] = field(default_factory=list)
    reports: list[ReportRecord] = field(default_factory=list)
    mentions: list[MentionRecord] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    unmapped_terms: list[str] = field(default_factory=list)
    ambiguous_comparisons: int = 0
