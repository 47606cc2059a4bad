"""MS-CXR-T's temporal image classification file: its columns, its one reader and its one error.

The layout is MS-CXR-T's ``MS_CXR_T_temporal_image_classification_v1.0.0.csv`` (Bannur et al., CVPR 2023;
PhysioNet ``ms-cxr-t`` 1.0.0; the columns as the public readers of it use them, e.g. microsoft/hi-ml's
BioViL-T code): one row per image pair, ``dicom_id`` (the current image), ``previous_dicom_id``, ``study_id``,
``subject_id`` (and ``previous_study_id`` where the file has it), then per finding ``<finding>_progression``
(``improving``, ``stable``, ``worsening``; empty: not labelled) and ``<finding>_label_quality``. The file
``cxrkg export pairs`` writes has the same columns, ``<finding>_label_source`` and ``<finding>_label_basis``
in the quality column's place, and with ``--classes 5`` CheXTemporal's five words (new, worsened, stable,
improved, resolved) as the progression values: both are read here, and so is a model's predictions file in
either layout.

Numbering: a row is named by its line in the file, as an editor shows it (the header is line 1). A row that
cannot be read (a field count other than the header's, an empty id, a progression word outside the label
sets, a pair given twice) is rejected alone, named by line and field; the rest is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from graph.formats.csv_lines import check_unique_columns, check_width, line_record, read_lines
from graph.records import InputError, Rejection
from graph.terms import CHEXTEMPORAL_CLASSES as FIVE
from graph.terms import MSCXRT_CLASSES as THREE

ID_COLUMNS = ("dicom_id", "previous_dicom_id", "study_id", "subject_id")
"""The columns a pairs file must have (``previous_study_id`` is read where present)."""
PROGRESSION = "_progression"
EXTRA_SUFFIXES = ("_label_quality", "_label_source", "_label_basis")
"""The per-finding columns read beside the label: MS-CXR-T's quality, the export's source and basis."""
WORDS = frozenset(THREE) | frozenset(FIVE)
"""The progression words a file may hold: MS-CXR-T's three and CheXTemporal's five."""


class PairFileError(InputError):
    """A pairs file that cannot be used at all: names the file and, where there is one, the line (the header
    is line 1) and the field."""


@dataclass(frozen=True)
class PairLabels:
    """One row: the pair's ids as written, and ``labels`` finding -> progression word of the labelled findings
    only; ``extras`` (finding, suffix) -> the :data:`EXTRA_SUFFIXES` cells that are not empty."""

    line: int
    dicom_id: str
    previous_dicom_id: str
    study_id: str
    previous_study_id: str
    subject_id: str
    labels: dict[str, str]
    extras: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        """The pair's identity across files: both images' ids without a folder or an image-file suffix
        (``p10/p10000032/s50414267/02aa804e.jpg`` and ``02aa804e`` are one image)."""
        return image_key(self.dicom_id), image_key(self.previous_dicom_id)


@dataclass
class PairFile:
    """A read file: its findings (column prefixes, in the file's order), the rows read and the rejections."""

    path: str
    findings: tuple[str, ...]
    rows: list[PairLabels]
    rejections: list[Rejection]


def image_key(image_id: str) -> str:
    """An image id without folders and a ``.jpg`` / ``.png`` / ``.dcm`` suffix."""
    name = image_id.strip().rsplit("/", 1)[-1]
    for suffix in (".jpg", ".png", ".dcm"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def read_pairs(path: str | Path) -> PairFile:
    """Every row of a pairs file (module docstring), the bad ones rejected alone.

    Raises:
        PairFileError: the file cannot be opened or decoded, is empty or not CSV, names a column twice, lacks an
            id column (:data:`ID_COLUMNS`) or has no ``<finding>_progression`` column.
    """
    source = str(path)
    written, lines, records = read_lines(Path(path), source, PairFileError)
    header = [h.strip() for h in written]
    check_unique_columns(header, source, PairFileError)
    missing = [c for c in ID_COLUMNS if c not in header]
    if missing:
        raise PairFileError(source, line_record(1), missing[0], f"column(s) {', '.join(missing)} missing; a pairs "
                            f"file has {', '.join(ID_COLUMNS)} and <finding>_progression columns")
    findings = tuple(c[: -len(PROGRESSION)] for c in header if c.endswith(PROGRESSION) and len(c) > len(PROGRESSION))
    if not findings:
        raise PairFileError(source, line_record(1), None, "no <finding>_progression column")
    out = PairFile(source, findings, [], [])
    seen: dict[tuple[str, str], int] = {}
    for line, record in zip(lines, records, strict=True):
        try:
            row = _row(source, line, header, record, findings)
            if row.key in seen:
                raise InputError(source, line_record(line), "dicom_id",
                                 f"the pair {row.dicom_id} / {row.previous_dicom_id} is given twice (first at line "
                                 f"{seen[row.key]})")
        except InputError as exc:
            out.rejections.append(Rejection.from_error(exc))
            continue
        seen[row.key] = line
        out.rows.append(row)
    return out


def _row(source: str, line: int, header: list[str], record: list[str], findings: tuple[str, ...]) -> PairLabels:
    """One record as a :class:`PairLabels`.

    Raises:
        InputError: naming the line and the field.
    """
    check_width(source, line, header, record, InputError)
    cells = {c: v.strip() for c, v in zip(header, record, strict=True)}
    for c in ID_COLUMNS:
        if not cells[c]:
            raise InputError(source, line_record(line), c, "empty")
    labels: dict[str, str] = {}
    extras: dict[tuple[str, str], str] = {}
    for f in findings:
        word = cells[f + PROGRESSION]
        if word and word not in WORDS:
            raise InputError(source, line_record(line), f + PROGRESSION,
                             f"{word!r} is not a progression word ({', '.join(THREE)}; or {', '.join(FIVE)})")
        if word:
            labels[f] = word
        for suffix in EXTRA_SUFFIXES:
            if cells.get(f + suffix):
                extras[(f, suffix)] = cells[f + suffix]
    return PairLabels(line, cells["dicom_id"], cells["previous_dicom_id"], cells["study_id"],
                      cells.get("previous_study_id", ""), cells["subject_id"], labels, extras)
