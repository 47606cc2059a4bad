"""MIMIC-CXR-JPG ``mimic-cxr-2.0.0-metadata.csv``: study dates for scene graphs that lack them, and each
image's size.

Columns used (docs/formats.md §1.8): ``dicom_id, subject_id, study_id, StudyDate`` (int ``YYYYMMDD``),
``StudyTime`` (float ``HHMMSS.ffffff``). The datetime is built as EHRXQA does:
``StudyDate`` + ``"%010.3f" % StudyTime``. Optional: ``Rows`` and ``Columns`` (the DICOM image's height and
width in pixels, as the released table gives them), which the anatomy measurements' inclusion needs
(graph.measurements); a file without them loads its dates all the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa

from graph.records import InputError

METADATA_COLUMNS = ("dicom_id", "subject_id", "study_id", "StudyDate", "StudyTime")
SIZE_COLUMNS = ("Rows", "Columns")
# "YYYYMMDD HHMMSS.fff", the stamp study_datetime builds: the widths strptime's first choices take
_STAMP = re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2}) ([0-9]{2})([0-9]{2})([0-9]{2})\.([0-9]{3})")


@dataclass(frozen=True)
class StudyDates:
    """Study datetimes and patients read from metadata, keyed by study id (str), each image's study
    (``dicom_id`` -> study id) and each image's size (``dicom_id`` -> (Rows, Columns), pixels; images whose
    row gives no positive whole numbers are left out)."""

    study_datetime: dict[str, datetime]
    study_patient: dict[str, str]
    image_study: dict[str, str] = field(default_factory=dict)
    image_size: dict[str, tuple[int, int]] = field(default_factory=dict)


def study_datetime(study_date: int | str, study_time: float | str) -> datetime:
    """``(21500304, 102231.5)`` -> ``datetime(2150, 3, 4, 10, 22, 31, 500000)``.

    Raises:
        ValueError: the date or time does not parse.
        OverflowError: the date or time is an infinite number (``1e400``).
    """
    stamp = f"{int(float(study_date))} {'%010.3f' % float(study_time or 0)}"
    if fields := _STAMP.fullmatch(stamp):  # read as strptime reads it, in a third of the time
        try:
            year, month, day, hour, minute, second, milliseconds = map(int, fields.groups())
            return datetime(year, month, day, hour, minute, second, milliseconds * 1000)
        except ValueError:
            pass  # strptime then names the fault
    return datetime.strptime(stamp, "%Y%m%d %H%M%S.%f")


def _parsed_or_error(study_date: str, study_time: str) -> datetime | str:
    """:func:`study_datetime`, or the message of the error it raises."""
    try:
        return study_datetime(study_date, study_time)
    except (ValueError, TypeError, OverflowError) as exc:
        return str(exc)


def read_metadata(path: Path) -> tuple[StudyDates, list[InputError]]:
    """Read the metadata CSV; rows with unreadable dates are returned as errors, the rest still count.

    Raises:
        InputError: the file is not a CSV (empty, not UTF-8, malformed) or lacks one of the columns used.
    """
    file = str(path)
    try:
        # only the columns used: the full MIMIC-CXR table has 12 (at 340,000 rows, 65 MB less)
        frame = pd.read_csv(path, dtype=str, keep_default_na=False,
                            usecols=lambda c: c in METADATA_COLUMNS or c in SIZE_COLUMNS)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(file, None, None, f"not a readable UTF-8 CSV: {exc}") from exc
    missing = [c for c in METADATA_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(file, None, ", ".join(missing), "missing column(s)")
    # whole columns as lists, each distinct date and time parsed once (images of a study share them): reading
    # the Arrow-backed frame row by row was half of this function's time
    dicoms, subjects, studies, days, times = (frame[c].tolist() for c in METADATA_COLUMNS)
    sizes = _sizes(dicoms, frame) if all(c in frame.columns for c in SIZE_COLUMNS) else {}
    del frame
    pa.default_memory_pool().release_unused()  # the text columns' buffers, else kept by the allocator
    parsed = {key: _parsed_or_error(*key) for key in dict.fromkeys(zip(days, times, strict=True))}
    whens: list = list(map(parsed.__getitem__, zip(days, times, strict=True)))
    errors: list[InputError] = []
    if any(isinstance(when, str) for when in parsed.values()):  # rows with unreadable dates are left out
        errors = [InputError(file, f"line {n} (dicom {dicom})", "StudyDate", when)
                  for n, (dicom, when) in enumerate(zip(dicoms, whens, strict=True), start=2) if isinstance(when, str)]
        good = [not isinstance(when, str) for when in whens]
        dicoms, subjects, studies, whens = ([v for v, ok in zip(column, good, strict=True) if ok]
                                            for column in (dicoms, subjects, studies, whens))
    dates = dict(zip(studies, whens, strict=True))  # each study at its first row, with its last row's time
    if len(dates) < len(studies):  # several images of a study: the earliest image time is the study time
        for study, when in zip(studies, whens, strict=True):
            if when < dates[study]:
                dates[study] = when
    return StudyDates(dates, dict(zip(studies, subjects, strict=True)), dict(zip(dicoms, studies, strict=True)),
                      sizes), errors


def _sizes(dicoms: list[str], frame: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """dicom_id -> (Rows, Columns) where both are positive whole numbers (an empty or odd cell gives none: the
    size is optional, and a measurement without it names its reason)."""
    out = {}
    for dicom, rows, columns in zip(dicoms, frame["Rows"].tolist(), frame["Columns"].tolist(), strict=True):
        if rows.isdigit() and columns.isdigit() and int(rows) > 0 and int(columns) > 0:
            out[dicom] = (int(rows), int(columns))
    return out
