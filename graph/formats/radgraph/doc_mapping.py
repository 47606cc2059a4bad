"""Where a RadGraph report belongs: its patient, study and (optionally) date.

From a MIMIC-CXR doc_key (``p10/p10000032/s50414267.txt``, any ``files/`` prefix ignored) or from a mapping
CSV the user gives (``cxrkg ingest --doc-mapping``) for reports keyed otherwise.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from graph.formats.scene_graph import parse_datetime
from graph.records import InputError

_MIMIC_KEY = re.compile(r"(?:^|/)p\d{2}/p(?P<patient>\d+)/s(?P<study>\d+)\.txt$")


@dataclass(frozen=True)
class DocStudy:
    """Where a report belongs: patient, study and (optionally) the study's date."""

    patient_id: str
    study_id: str
    study_datetime: datetime | None = None


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
