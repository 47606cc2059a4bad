"""MIMIC-CXR-JPG ``mimic-cxr-2.0.0-metadata.csv``: study dates for scene graphs that lack them.

Columns used (docs/formats.md §1.8): ``dicom_id, subject_id, study_id, StudyDate`` (int ``YYYYMMDD``),
``StudyTime`` (float ``HHMMSS.ffffff``). The datetime is built as EHRXQA does:
``StudyDate`` + ``"%010.3f" % StudyTime``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa

from graph.records import InputError

METADATA_COLUMNS = ("dicom_id", "subject_id", "study_id", "StudyDate", "StudyTime")


@dataclass(frozen=True)
class StudyDates:
    """Study datetimes and patients read from metadata, keyed by study id (str), and each image's study
    (``dicom_id`` -> study id)."""

    study_datetime: dict[str, datetime]
    study_patient: dict[str, str]
    image_study: dict[str, str] = field(default_factory=dict)


def study_datetime(study_date: int | str, study_time: float | str) -> datetime:
    """``(21500304, 102231.5)`` -> ``datetime(2150, 3, 4, 10, 22, 31, 500000)``.

    Raises:
        ValueError: the date or time does not parse.
    """
    d = str(int(float(study_date)))
    t = "%010.3f" % float(study_time or 0)
    return datetime.strptime(f"{d} {t}", "%Y%m%d %H%M%S.%f")


def read_metadata(path: Path) -> tuple[StudyDates, list[InputError]]:
    """Read the metadata CSV; rows with unreadable dates are returned as errors, the rest still count.

    Raises:
        InputError: the file is not a CSV (empty, not UTF-8, malformed) or lacks one of the columns used.
    """
    file = str(path)
    try:
        # only the columns used: the full MIMIC-CXR table has 12 (at 340,000 rows, 65 MB less)
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, usecols=lambda c: c in METADATA_COLUMNS)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(file, None, None, f"not a readable UTF-8 CSV: {exc}") from exc
    missing = [c for c in METADATA_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(file, None, ", ".join(missing), "missing column(s)")
    dates: dict[str, datetime] = {}
    patients: dict[str, str] = {}
    images: dict[str, str] = {}
    errors: list[InputError] = []
    parsed: dict[tuple[str, str], datetime] = {}  # images of a study share its date and time
    for n, row in enumerate(frame[list(METADATA_COLUMNS)].itertuples(index=False), start=2):
        try:
            key = (row.StudyDate, row.StudyTime)
            when = parsed.get(key) or parsed.setdefault(key, study_datetime(*key))
        except (ValueError, TypeError) as exc:
            errors.append(InputError(file, f"line {n} (dicom {row.dicom_id})", "StudyDate", str(exc)))
            continue
        study = str(row.study_id)
        images[str(row.dicom_id)] = study
        # several images of one study: the earliest image time is the study time
        if study not in dates or when < dates[study]:
            dates[study] = when
        patients[study] = str(row.subject_id)
    del frame
    pa.default_memory_pool().release_unused()  # the text columns' buffers, else kept by the allocator
    return StudyDates(dates, patients, images), errors
