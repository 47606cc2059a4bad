"""Plain records that parsers produce and the loader writes: one shape for every input format.

A parser turns one input file into a :class:`ParsedFile`; records it could not read become
:class:`Rejection` entries that name the file, the record and the field.
"""

from __future__ import annotations

import gc
import hashlib
import json
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from functools import lru_cache
from hashlib import sha1
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from graph.errors import CxrkgError


def stable_id(*parts: object) -> str:
    """A deterministic 20-hex-digit id from the parts (SHA-1 of their ``|``-joined text)."""
    return joined_id("|".join(str(p) for p in parts))


def joined_id(text: str) -> str:
    """:func:`stable_id` of parts the caller joined already: ``joined_id(f"{a}|{b}")`` is ``stable_id(a, b)`` for
    texts and integers (a parser's per-mention ids, without the generator and the ``str()`` calls)."""
    return sha1(text.encode()).hexdigest()[:20]


@lru_cache(maxsize=1 << 16)  # one call per mention, and a file holds many
def file_key(path: str) -> int:
    """A signed 64-bit integer standing for a file path (the first 8 bytes of its SHA-1): what the
    Mention index holds, much cheaper for Neo4j to index than the path string. Lookups compare the
    path too, so a collision cannot mix two files."""
    return int.from_bytes(hashlib.sha1(path.encode()).digest()[:8], "big", signed=True)


def observation_id(study_id: str, anatomy: str, finding: str) -> str:
    """The natural key of an Observation: one finding at one anatomy in one study."""
    return f"{study_id}|{anatomy}|{finding}"


class InputError(CxrkgError, ValueError):
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
    """A study of a patient; ``study_datetime`` is None when the input carries no date (filled later).

    Attributes:
        gender: the patient's gender as written (Chest ImaGenome ``gender``, ``"F"`` / ``"M"``), or None.
        age_decile: the patient's age bucket at the study as written (``"60-70"``), or None.
        reason_for_exam: the exam indication, free text (MIMIC de-identification ``___`` kept), or None.
        (The last three come from scene graphs, docs/formats.md §1.2; other inputs leave them None.)
    """

    study_id: str
    patient_id: str
    study_datetime: datetime | None
    record: str
    gender: str | None = None
    age_decile: str | None = None
    reason_for_exam: str | None = None


@dataclass(frozen=True)
class BoundingBoxRecord:
    """One anatomical bounding box of an image (a Chest ImaGenome ``objects[]`` entry, docs/formats.md §1.3).

    Attributes:
        bbox_id: ``"<image_id>|<index in objects>"``: unique and deterministic for a file's content.
        bbox_name: the region (a vocabulary region name).
        x1, y1, x2, y2, width, height: pixels in the 224 x 224 resized and padded frame; ``width`` and
            ``height`` as written (None when absent), not recomputed.
        original_x1 .. original_height: pixels in the original DICOM / JPG, None when absent.
        finding_label: cxrkg extension key of ``objects[]`` (a finding the box outlines), or None.
    """

    bbox_id: str
    image_id: str
    bbox_name: str
    x1: int
    y1: int
    x2: int
    y2: int
    width: int | None = None
    height: int | None = None
    original_x1: int | None = None
    original_y1: int | None = None
    original_x2: int | None = None
    original_y2: int | None = None
    original_width: int | None = None
    original_height: int | None = None
    finding_label: str | None = None


@dataclass(frozen=True)
class ImageRecord:
    """One image of a study.

    Attributes:
        view: ``AP`` / ``PA`` (Chest ImaGenome ``viewpoint``), or None.
        study_order: the study's rank within the patient as the input states it (Chest ImaGenome
            ``StudyOrder``, 1-based), or None; cxrkg's own ``Study.study_order`` is computed from dates.
        objects: the image's bounding boxes, in the order of the file's ``objects[]``.
        rows, columns: the image's height and width in original pixels (DICOM ``Rows`` / ``Columns``), from
            the MIMIC-CXR-JPG metadata CSV (scene graphs do not state them), or None.
    """

    image_id: str
    study_id: str
    view: str | None
    study_order: int | None = None
    objects: tuple[BoundingBoxRecord, ...] = ()
    rows: int | None = None
    columns: int | None = None


@dataclass(frozen=True)
class ReportRecord:
    """One report of a study (a RadGraph document).

    Attributes:
        text: the report text as the input gives it (RadGraph ``text``, or the tokens joined).
        source: the extraction it comes from (``radgraph``).
        unmapped_terms: observation phrases the vocabulary has no finding for, kept for review.
    """

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
        sentence_id: the sentence's id: Chest ImaGenome's ``phrase_IDs`` entry (``"<study_id>|<sentence
            index>"``) or, for RadGraph documents, ``"<doc_key>|<sentence index>"`` (sentences as
            :func:`graph.formats.radgraph.sentence_index` splits the tokens); None when the input has none.
        temporal_cues, texture_cues, comparison_cues: the cue labels stated for the sentence as written
            (``("temporal|yes|acute",)``, Chest ImaGenome ``*_cues``, docs/formats.md §1.4); () when none.
        side: the side a report states for the finding (``left`` / ``right`` / ``bilateral``), also where
            its region has none ("left PICC" in the SVC); None when no side is stated (scene graphs: the
            region's side is the statement).
        term: the entity as written, where the source keeps it apart from its sentence (Lunguage ``ent``).
        entity_group / temporal_group: a source's own grouping of mentions (Lunguage ``gt_entity_group``:
            one finding across studies; ``gt_temporal_group``: one diagnostic episode), scoped by patient.
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
    sentence_id: str | None = None
    temporal_cues: tuple[str, ...] = ()
    texture_cues: tuple[str, ...] = ()
    comparison_cues: tuple[str, ...] = ()
    side: str | None = None
    term: str | None = None
    entity_group: str | None = None
    temporal_group: str | None = None


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
    #: RadGraph relations outside its schema ("ANAT modify OBS") in the accepted records -> count
    out_of_schema: dict[str, int] = field(default_factory=dict)
    #: what a public release adds that the reader keeps (a variant spelling, an optional field or value), by
    #: name ("radgraph package: list of per-call outputs") -> records; in every run summary
    #: (docs/formats.md §2.8, §4.1)
    variants: dict[str, int] = field(default_factory=dict)
    #: hex SHA-256 of the bytes parsed, where the file was read whole (else empty)
    sha256: str = ""


def write_rejections(path: Path, rejections: list[Rejection]) -> None:
    """Write the rejected-files report: a JSON list of {file, record, field, reason}.

    Raises:
        OSError: the report cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(r) for r in rejections], indent=2) + "\n")


#: the folder of ``CXRKG_HOME`` that the commands write their rejection reports to by default
REJECTED_FOLDER = "rejected"


def rejected_folder(home: Path | None = None) -> Path:
    """``home/rejected`` (default ``CXRKG_HOME``'s).

    Raises:
        graph.settings.ConfigError: a bad setting.
    """
    if home is None:
        from graph.settings import local_server_settings

        home = local_server_settings().home
    return home / REJECTED_FOLDER


def rejected_report_path(command: str, now: datetime | None = None, home: Path | None = None) -> Path:
    """Where ``command`` (``ingest``, ``eval-reports``: its words joined by ``-``) writes its rejection report
    by default: ``CXRKG_HOME/rejected/<command>-<UTC time>.json`` (``ingest-20260105T101502Z.json``), a name
    not yet taken (``-2``, ``-3``... after the time when it is). Nothing is written here.

    Raises:
        graph.settings.ConfigError: a bad setting.
    """
    from datetime import timezone

    folder = rejected_folder(home)
    stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path, n = folder / f"{command}-{stamp}.json", 1
    while path.exists():
        n += 1
        path = folder / f"{command}-{stamp}-{n}.json"
    return path


def drop_folder_report_path(drop_folder: Path, home: Path | None = None) -> Path:
    """The rejection report of a watched drop folder, rewritten on every run:
    ``CXRKG_HOME/rejected/serve-<folder name>-<8 hex digits of its absolute path>.json`` (two drop folders of
    one name keep a report each).

    Raises:
        graph.settings.ConfigError: a bad setting.
    """
    folder = drop_folder.resolve()
    return rejected_folder(home) / f"serve-{folder.name}-{sha1(str(folder).encode()).hexdigest()[:8]}.json"


def companion_report(path: Path, part: str) -> Path:
    """The report of a second stage beside ``path``: ``x.json`` -> ``x-<part>.json``."""
    return path.with_name(f"{path.stem}-{part}{path.suffix}")


_R = TypeVar("_R")


def record_maker(cls: type[_R]) -> Callable[..., _R]:
    """A cheaper constructor of a frozen record class, for parsers that make thousands: ``make(*values)`` with
    the values of all of ``cls``'s fields in their order is the object ``cls(*values)`` is (equal, the same
    hash, the same ``vars()`` in the same order, pickled alike), without the ``object.__setattr__`` call per
    field of a frozen dataclass's ``__init__``: a function generated for ``cls`` stores each value into the new
    object's ``__dict__`` (a third of the time of ``cls(*values)`` for a MentionRecord's 23 fields). No default
    is filled in and nothing is converted.

    Raises:
        TypeError: ``cls`` is not a dataclass. ``make`` raises ValueError for fewer values than fields and
            TypeError for more.
    """
    names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]  # any dataclass
    params = ", ".join(f"v{i}=missing" for i in range(len(names)))
    stores = "".join(f"    d[{name!r}] = v{i}\n" for i, name in enumerate(names))
    source = (f"def make({params}):\n    if v{len(names) - 1} is missing:\n"
              f"        raise ValueError('{cls.__name__} takes {len(names)} values')\n"
              f"    record = new(cls)\n    d = record.__dict__\n{stores}    return record\n")
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls, "missing": object()}
    exec(source, namespace)  # noqa: S102  # the source is built above from the dataclass's own field names
    make: Callable[..., _R] = namespace["make"]
    return make


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block, unless something else paused it already: for
    code that allocates many objects that stay alive and form no reference cycle (a batch of parsed records,
    a decoded query answer), where the collector's passes over them free nothing. Reference counting frees
    everything as before; the first collection after the block looks at the block's objects once."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
