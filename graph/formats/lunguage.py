"""Lunguage sequential structured reports (CSV): typed rows in, the same CSV out, and made-up files for tests.

Lunguage (Moon, Choi, Rabaey et al., PhysioNet 2026, credentialed; arXiv 2505.21190) annotates chest X-ray
reports as one row per (sentence, entity) with 18 relation types; in its longitudinal cases ``gt_entity_group``
links the mentions of one finding across a patient's studies and ``gt_temporal_group`` marks a diagnostic
episode (one entity group in two temporal groups is two episodes). The columns read and written are
:data:`LUNGUAGE_COLUMNS`, in that order; value sets follow the benchmark's schema: ``section`` hist / find /
impr, ``cat`` pf / cf / cof / ncd / oth / patient info. (and the merged ncd/cof, cof/ncd and pf/cf its
evaluation uses), ``dx_status`` positive / negative, ``dx_certainty`` definitive / tentative. Attribute cells
are free text (several values comma-separated); an empty cell is ``""``.

What the release has beyond that, as the ``lunguage-score`` 1.0.0 package (PyPI; ``singleSR/utils.py``
``create_input``, ``sequentialSR/runner.py``, ``lunguagescore.py``) reads ``Lunguage.csv``, is kept and counted
(:attr:`LunguageFile.variants`), not rejected: the relation columns :data:`OPTIONAL_COLUMNS` (``associate``,
``evidence``: ``idx<N>`` references to another entity of the report), the older column name
``dx_uncertainty`` (:data:`COLUMN_ALIASES`), ``cat`` ``lf`` / ``If`` (read as ``pf``, :data:`CAT_ALIASES`) and
any other category (kept as written), ``loc:`` / ``det:`` prefixes in ``location`` (dropped), status and
certainty in another case or with spaces (normalised), and an empty status or certainty on a row that is never
a mention (history section, ``patient info.``). A mention row still needs both: its state is made of them.

Group ids are scoped by patient (``subject_id``): ``EG1`` of one patient is not ``EG1`` of another. A temporal
group needs an entity group. A mention is keyed by :data:`MENTION_KEY`; a study has one ``sequence`` (its
order among the patient's studies).

The credentialed data never enter the project: tests use :func:`made_up_rows`, files this module writes
itself in the exact columns, with invented ids and text.
"""

from __future__ import annotations

import csv
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from graph.formats.files import read_string_csv
from graph.records import InputError, Rejection
from graph.terms import Change, State

LUNGUAGE_COLUMNS = (
    "subject_id", "study_id", "sequence", "section", "sent_idx", "sent", "ent_idx", "ent", "cat", "dx_status",
    "dx_certainty", "location", "morphology", "distribution", "measurement", "severity", "comparison", "onset",
    "no change", "improved", "worsened", "placement", "past hx", "other source", "assessment limitations",
    "gt_entity_group", "gt_temporal_group",
)
#: Relation columns of the release that the graph does not use: read onto the row when the file has them.
OPTIONAL_COLUMNS = ("associate", "evidence")
#: An older column name -> the name read (lunguage-score renames ``dx_uncertainty`` so).
COLUMN_ALIASES = {"dx_uncertainty": "dx_certainty"}
#: ``cat`` values read as another (lunguage-score's ``replace(['lf', 'If'], 'pf')``).
CAT_ALIASES = {"lf": "pf", "If": "pf"}
#: The categories of the schema and of lunguage-score's ``ENTITY_CATEGORY``; another is kept and counted.
CATEGORIES = ("pf", "cf", "cof", "ncd", "oth", "patient info.", "ncd/cof", "cof/ncd", "pf/cf")
_LOCATION_PREFIX = re.compile(r"(loc|det):\s*")  # lunguage-score strips these from ``location``
#: What identifies one mention (one entity in one sentence of one study).
MENTION_KEY = ("subject_id", "study_id", "section", "sent_idx", "ent_idx")

#: The column ``cxrkg export lunguage`` adds after :data:`LUNGUAGE_COLUMNS` (every cell :data:`EXPORT_MARK`).
#: A Lunguage file of the benchmark has no such column, so a file that has it holds the graph's own
#: statements written back; ingestion refuses it as a source, or each load would add them again as
#: Lunguage mentions of the statements they were written from.
EXPORT_COLUMN = "cxrkg_export"
EXPORT_MARK = "graph"
#: What :func:`lunguage_header` calls a file: a Lunguage file, or a ``cxrkg export lunguage`` file.
LUNGUAGE_FILE, EXPORTED_FILE = "lunguage", "cxrkg export"

#: The graph's mention state -> the Lunguage (``dx_status``, ``dx_certainty``) it is written as; the
#: inverse is :func:`state_of`. Lunguage has no uncertain state: a tentative positive is the graph's uncertain.
STATE_STATUS = {State.PRESENT: ("positive", "definitive"), State.UNCERTAIN: ("positive", "tentative"),
                State.ABSENT: ("negative", "definitive")}
#: The change columns (:class:`LunguageRow` field names) -> the stated change each one is (RadGraph2's
#: progression classes: ``onset`` is ``new``); the inverse is :data:`CHANGE_FIELD`.
CHANGE_OF_FIELD = {"onset": Change.NEW, "improved": Change.IMPROVED, "worsened": Change.WORSENED,
                   "no_change": Change.NO_CHANGE}
CHANGE_FIELD = {change: column for column, change in CHANGE_OF_FIELD.items()}
_STATE_OF = {status: state for state, status in STATE_STATUS.items()}


def state_of(dx_status: str, dx_certainty: str) -> str:
    """The graph's mention state of a Lunguage status and certainty (the inverse of :data:`STATE_STATUS`).

    A negative is ``absent`` whatever its certainty: the graph has no hedged absence, so a tentative
    negative is read as the definitive one.

    >>> state_of("positive", "tentative"), state_of("negative", "tentative")
    ('uncertain', 'absent')
    """
    return _STATE_OF.get((dx_status, dx_certainty)) or _STATE_OF[(dx_status, "definitive")]

Section = Literal["hist", "find", "impr"]


class LunguageInputError(InputError):
    """A Lunguage file that cannot be read at all (unreadable, or a column missing)."""


class LunguageRow(BaseModel):
    """One row of a Lunguage CSV: an entity of a sentence with its attributes and its groups.

    Field names are the columns' with spaces as underscores (``no change`` -> ``no_change``); the CSV
    names are the aliases. Integers: ``sequence`` >= 0 (study order within the patient), ``sent_idx`` and
    ``ent_idx`` >= 0. ``dx_status`` and ``dx_certainty`` may be empty only on a row that is never a mention
    (:meth:`is_mention`).
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid", str_strip_whitespace=False)

    subject_id: str = Field(min_length=1)
    study_id: str = Field(min_length=1)
    sequence: int = Field(ge=0)
    section: Section
    sent_idx: int = Field(ge=0)
    sent: str = ""
    ent_idx: int = Field(ge=0)
    ent: str = Field(min_length=1)
    cat: str = Field(min_length=1)
    dx_status: Literal["positive", "negative", ""]
    dx_certainty: Literal["definitive", "tentative", ""]
    location: str = ""
    morphology: str = ""
    distribution: str = ""
    measurement: str = ""
    severity: str = ""
    comparison: str = ""
    onset: str = ""
    no_change: str = Field("", alias="no change")
    improved: str = ""
    worsened: str = ""
    placement: str = ""
    past_hx: str = Field("", alias="past hx")
    other_source: str = Field("", alias="other source")
    assessment_limitations: str = Field("", alias="assessment limitations")
    gt_entity_group: str = ""
    gt_temporal_group: str = ""
    associate: str = ""
    evidence: str = ""

    @model_validator(mode="after")
    def _temporal_needs_entity(self) -> "LunguageRow":
        if self.gt_temporal_group and not self.gt_entity_group:
            raise ValueError("gt_temporal_group without gt_entity_group (an episode belongs to an entity group)")
        if self.is_mention() and not (self.dx_status and self.dx_certainty):
            raise ValueError(f"{'dx_status' if not self.dx_status else 'dx_certainty'} empty on a finding row "
                             "(its state is made of dx_status and dx_certainty)")
        return self

    def is_mention(self) -> bool:
        """Whether the row states a finding of its study: not history (``section`` hist), not ``patient info.``."""
        return self.section != "hist" and self.cat != "patient info."

    def key(self) -> tuple[str, str, str, int, int]:
        """The mention's :data:`MENTION_KEY` values."""
        return (self.subject_id, self.study_id, self.section, self.sent_idx, self.ent_idx)

    def cells(self) -> list[str]:
        """The row's CSV cells in :data:`LUNGUAGE_COLUMNS` order."""
        values = self.model_dump(by_alias=True)
        return [str(values[c]) for c in LUNGUAGE_COLUMNS]


_FIELD_OF = {name: (f.alias or name) for name, f in LunguageRow.model_fields.items()}


@dataclass(frozen=True)
class LunguageFile:
    """The valid rows of one file, in file order, and the rows rejected (file, ``line N``, field, reason)."""

    rows: list[LunguageRow]
    rejections: list[Rejection]
    #: what the file has beyond :data:`LUNGUAGE_COLUMNS`' schema that was kept, by name -> rows
    variants: dict[str, int] = field(default_factory=dict)


def _rejection(path: Path, line: int, exc: ValidationError) -> Rejection:
    first = exc.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else _row_level_field(first["msg"])
    return Rejection(str(path), f"line {line}", _FIELD_OF.get(name, name), first["msg"])


def _row_level_field(message: str) -> str:
    """The field a row-level check names first in its message (``gt_temporal_group``, ``dx_status`` ...)."""
    named = [(message.find(f), f) for f in ("gt_temporal_group", "dx_status", "dx_certainty") if f in message]
    return min(named)[1] if named else "gt_temporal_group"


def _normalised(record: dict[str, str], variants: Counter) -> dict[str, str]:
    """A row's cells as the release's own reader reads them (module docstring), each change counted."""
    cat = record["cat"]
    if cat in CAT_ALIASES:
        record["cat"] = CAT_ALIASES[cat]
        variants[f"lunguage: cat {cat!r} read as {CAT_ALIASES[cat]!r}"] += 1
    elif cat and cat not in CATEGORIES:
        variants["lunguage: cat outside the schema kept"] += 1
    if _LOCATION_PREFIX.search(record["location"]):
        record["location"] = _LOCATION_PREFIX.sub("", record["location"])
        variants["lunguage: loc:/det: prefixes of location dropped"] += 1
    for name in ("dx_status", "dx_certainty"):
        value = record[name].strip().lower()
        if value != record[name]:
            record[name] = value
            variants[f"lunguage: {name} case or spaces normalised"] += 1
    if not (record["dx_status"] and record["dx_certainty"]) and (
            record["section"] == "hist" or record["cat"] == "patient info."):
        variants["lunguage: empty dx_status/dx_certainty on a history or patient info. row"] += 1
    for name in OPTIONAL_COLUMNS:
        if record.get(name):
            variants[f"lunguage: {name} column kept"] += 1
    return record


def _read_frame(path: Path, variants: Counter) -> pd.DataFrame:
    """The file's cells, its older column names renamed (counted); every column of LUNGUAGE_COLUMNS required."""
    frame = read_string_csv(path, (), LunguageInputError, "a Lunguage file")
    renamed = {old: new for old, new in COLUMN_ALIASES.items() if old in frame.columns and new not in frame.columns}
    for old, new in renamed.items():
        variants[f"lunguage: column {old} read as {new}"] += len(frame)
    frame = frame.rename(columns=renamed)
    missing = [c for c in LUNGUAGE_COLUMNS if c not in frame.columns]
    if missing:
        raise LunguageInputError(str(path), "line 1 (header)", missing[0],
                                 f"column(s) {', '.join(missing)} missing; a Lunguage file has "
                                 f"{', '.join(LUNGUAGE_COLUMNS)}")
    return frame


def _consistency(path: Path, rows: list[tuple[int, LunguageRow]]) -> tuple[list[LunguageRow], list[Rejection]]:
    """Drop a mention key seen before, and a row whose study already has another sequence."""
    keys: dict[tuple, int] = {}
    sequence: dict[tuple[str, str], tuple[int, int]] = {}
    kept, rejected = [], []
    for line, row in rows:
        study = (row.subject_id, row.study_id)
        if row.key() in keys:
            rejected.append(Rejection(str(path), f"line {line}", "ent_idx",
                                      f"mention {row.key()} already at line {keys[row.key()]}"))
        elif study in sequence and sequence[study][0] != row.sequence:
            rejected.append(Rejection(str(path), f"line {line}", "sequence",
                                      f"study {row.study_id} has sequence {sequence[study][0]} at line "
                                      f"{sequence[study][1]}"))
        else:
            keys[row.key()] = line
            sequence.setdefault(study, (row.sequence, line))
            kept.append(row)
    return kept, rejected


def read_lunguage(path: Path) -> LunguageFile:
    """Read a Lunguage CSV into typed rows; bad rows are rejected (file, line, field named), the rest kept.

    Args:
        path: a CSV with at least :data:`LUNGUAGE_COLUMNS` (``dx_uncertainty`` for ``dx_certainty`` allowed);
            :data:`OPTIONAL_COLUMNS` are read when present, other columns (``report``, ``section_report``,
            ``normed_ent``) are ignored.

    Returns:
        A :class:`LunguageFile`: the valid rows in file order, one rejection per bad row (a value outside
        its set or type, an empty id or entity, a finding row without status or certainty, a temporal group
        without an entity group, a mention key seen before, a study whose sequence differs from its first
        row's), and the release's variants kept, counted (module docstring).

    Raises:
        LunguageInputError: the file cannot be read as CSV or lacks a column.
    """
    variants: Counter = Counter()
    frame = _read_frame(Path(path), variants)
    columns = [*LUNGUAGE_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in frame.columns)]
    parsed, rejected = [], []
    for line, record in enumerate(frame[columns].to_dict("records"), start=2):
        try:
            parsed.append((line, LunguageRow.model_validate(_normalised(record, variants))))
        except ValidationError as exc:
            rejected.append(_rejection(Path(path), line, exc))
    rows, inconsistent = _consistency(Path(path), parsed)
    return LunguageFile(rows, rejected + inconsistent, dict(variants))


def write_lunguage(rows: list[LunguageRow], path: Path, exported: bool = False) -> Path:
    """Write ``rows`` as a Lunguage CSV (header :data:`LUNGUAGE_COLUMNS`, rows in the given order, UTF-8).

    ``exported``: the file is the graph's statements (``cxrkg export lunguage``): :data:`EXPORT_COLUMN` is
    added last, every cell :data:`EXPORT_MARK`, so that ingestion knows it for what it is. Readers of
    Lunguage files by column name (:func:`read_lunguage`, LUNGUAGESCORE) ignore it.

    A file this function wrote reads back (:func:`read_lunguage`) into equal rows and writes back byte for byte.
    """
    path = Path(path)
    frame = pd.DataFrame([r.cells() for r in rows], columns=list(LUNGUAGE_COLUMNS))
    if exported:
        frame[EXPORT_COLUMN] = EXPORT_MARK
    frame.to_csv(path, index=False)
    return path


def lunguage_header(path: str | Path) -> str | None:
    """What a CSV's header says the file is: :data:`LUNGUAGE_FILE` when it names every column of
    :data:`LUNGUAGE_COLUMNS` (or its :data:`COLUMN_ALIASES`), :data:`EXPORTED_FILE` when it names :data:`EXPORT_COLUMN` too, else None.
    Only the first line is read (a file's name says nothing: a Lunguage file may be called anything, and an
    export may be called ``lunguage.csv``).

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        header = next(csv.reader([handle.readline()]), [])
    names = {name.lstrip("\ufeff") for name in header}  # a BOM before the first name
    names = {COLUMN_ALIASES.get(name, name) for name in names}  # dx_uncertainty names dx_certainty
    if not names.issuperset(LUNGUAGE_COLUMNS):
        return None
    return EXPORTED_FILE if EXPORT_COLUMN in names else LUNGUAGE_FILE


# --- made-up files for tests ------------------------------------------------------------------------------

_FINDINGS = (("pleural effusion", "pf", "left lower lobe"), ("pneumothorax", "pf", "right apex"),
             ("atelectasis", "pf", "bibasilar"), ("pulmonary edema", "pf", "bilateral"),
             ("endotracheal tube", "oth", "trachea"))
_SEVERITY = ("small", "moderate", "large", "mild")


def _trajectory(rng: random.Random, studies: int, recurrent: bool) -> list[str]:
    """Per study: P present, N stated absent, '' not mentioned. ``recurrent``: P, (P or ''), N, P, ..."""
    if recurrent:
        head = ["P", rng.choice(["P", ""]), "N", "P"]
        return (head + [rng.choice(["P", "", "N"]) for _ in range(studies - 4)])[:studies]
    return [rng.choice(["P", "P", "N", ""]) for _ in range(studies)]


def _finding_rows(studies: list[str], finding: tuple[str, str, str], group: int,
                  states: list[str], rng: random.Random) -> list[dict[str, Any]]:
    """Rows (without sent_idx / ent_idx) of one finding over a patient's studies, episodes stated."""
    name, cat, location = finding
    rows, episode, in_episode = [], 0, False
    for seq, (study, state) in enumerate(zip(studies, states, strict=True), start=1):
        if state == "N":
            in_episode = False
            rows.append({"study_id": study, "sequence": seq, "ent": name, "cat": cat, "dx_status": "negative",
                         "sent": f"no {name}.", "gt_entity_group": f"EG{group}", "gt_temporal_group": ""})
        elif state == "P":
            started = not in_episode
            episode, in_episode = episode + started, True
            severity = rng.choice(_SEVERITY)
            change = ({} if seq == 1 else {"onset": "new"} if started
                      else {rng.choice(["no change", "improved", "worsened"]): "yes"})
            rows.append({"study_id": study, "sequence": seq, "ent": name, "cat": cat, "dx_status": "positive",
                         "dx_certainty": rng.choice(["definitive", "definitive", "tentative"]),
                         "sent": f"{severity} {location} {name}.", "location": location, "severity": severity,
                         "gt_entity_group": f"EG{group}", "gt_temporal_group": f"TG{group}.{episode}", **change})
    return rows


def made_up_rows(patients: int = 3, seed: int = 0) -> list[LunguageRow]:
    """A made-up longitudinal Lunguage cohort (invented ids and text, no dataset row).

    Each patient has 5 to 7 studies; each study a history row (``patient info.``, no group); 2 to 4 findings
    of a fixed list, each an entity group; the first finding recurs (present, then stated absent, then present
    again: two temporal groups), the others present, absent or not mentioned at random. An episode is the run
    of present mentions not interrupted by a stated absence (an unmentioned study continues it); absent
    mentions carry the entity group and no temporal group.

    Args:
        patients: how many patients (>= 1).
        seed: the random seed (same seed, same rows).

    Returns:
        Rows ordered by patient, study and sentence; ``sent_idx`` and ``ent_idx`` count from 0 per study.
    """
    if patients < 1:
        raise ValueError("patients must be >= 1")
    rng, out = random.Random(seed), []
    for p in range(1, patients + 1):
        subject = f"p9{p:07d}"
        studies = [f"s9{p:03d}{k:04d}" for k in range(1, rng.randint(5, 7) + 1)]
        findings = rng.sample(_FINDINGS, rng.randint(2, 4))
        raw: list[dict[str, Any]] = [{"study_id": s, "sequence": k, "ent": "shortness of breath", "cat": "patient info.",
                "section": "hist", "dx_status": "positive", "sent": "history: shortness of breath."}
               for k, s in enumerate(studies, start=1)]
        for g, finding in enumerate(findings, start=1):
            raw += _finding_rows(studies, finding, g, _trajectory(rng, len(studies), g == 1), rng)
        raw.sort(key=lambda r: (r["sequence"], r.get("section") != "hist"))
        counters: dict[str, int] = {}
        for r in raw:
            n = counters[r["study_id"]] = counters.get(r["study_id"], -1) + 1
            out.append(LunguageRow.model_validate({"section": "find", "dx_certainty": "definitive", **r,
                                                   "subject_id": subject, "sent_idx": n, "ent_idx": n}))
    return out


def write_made_up_cohort(folder: str | Path, patients: int = 3, seed: int = 0) -> tuple[list[LunguageRow], Path]:
    """Write a made-up Lunguage cohort (:func:`made_up_rows`) to ``folder`` as ``made_up_lunguage.csv`` and the
    MIMIC-CXR-JPG metadata CSV that dates its studies (``mimic-cxr-2.0.0-metadata.csv``: Lunguage has only
    ``sequence``; study k of a patient is dated 2150-01-01 plus 10 k days, 08:00), so that ``cxrkg ingest
    FOLDER`` loads it as it would a real Lunguage file beside its metadata.

    Returns:
        The rows, and the Lunguage file's path.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = made_up_rows(patients, seed=seed)
    path = write_lunguage(rows, folder / "made_up_lunguage.csv")
    studies = sorted({(r.subject_id, r.study_id, r.sequence) for r in rows})
    with open(folder / "mimic-cxr-2.0.0-metadata.csv", "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["dicom_id", "subject_id", "study_id", "StudyDate", "StudyTime"])
        for subject, study, sequence in studies:
            when = datetime(2150, 1, 1) + timedelta(days=10 * sequence)
            out.writerow([f"d{study}", subject, study, when.strftime("%Y%m%d"), "080000.000"])
    return rows, path
