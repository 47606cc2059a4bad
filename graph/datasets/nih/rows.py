"""Which rows of the NIH Data_Entry and Google tables are converted, and which are rejected (and why).

Rules (the contract is in :mod:`graph.datasets.nih.convert`): unreadable or negative patient ids and follow-up
numbers are rejected; ``limit_patients`` keeps the N lowest patient ids; of two rows with one Image Index,
or two rows of one patient with one follow-up number, the first is kept; Google rows of images that are
not in Data_Entry are rejected.
"""

from __future__ import annotations

import pandas as pd

from graph.datasets.nih.labels import LABEL_MAP, SOURCE_GOOGLE
from graph.datasets.nih.tables import DATA_ENTRY_MEMBER, GOOGLE_MEMBER
from graph.records import Rejection


def _as_int(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(frame[column].str.strip(), errors="coerce")


def reject_rows(rows: pd.DataFrame, member: str, field_name: str, reason: str) -> list[Rejection]:
    """One :class:`~graph.records.Rejection` per row of ``rows`` (record = its Image Index)."""
    return [Rejection(member, image, field_name, reason) for image in rows["Image Index"]]


def select_studies(entry: pd.DataFrame,
                   limit_patients: int | None) -> tuple[pd.DataFrame, pd.DataFrame, list[Rejection]]:
    """(the valid rows of Data_Entry, the rows to write, rejections); adds ``pid`` and ``fu`` int columns."""
    frame = entry.assign(pid=_as_int(entry, "Patient ID"), fu=_as_int(entry, "Follow-up #"))
    rejected: list[Rejection] = []
    for column, name in (("pid", "Patient ID"), ("fu", "Follow-up #")):
        bad = frame[column].isna() | (frame[column] < 0)
        rejected += reject_rows(frame[bad], DATA_ENTRY_MEMBER, name, f"{name} is not a non-negative integer")
        frame = frame[~bad]
    frame = frame.astype({"pid": "int64", "fu": "int64"})
    if limit_patients is not None:
        keep = sorted(frame["pid"].unique())[:limit_patients]
        selected = frame[frame["pid"].isin(keep)]
    else:
        selected = frame
    dup_image = selected.duplicated("Image Index", keep="first")
    rejected += reject_rows(selected[dup_image], DATA_ENTRY_MEMBER, "Image Index",
                            "image listed twice; the first row is kept")
    selected = selected[~dup_image]
    dup_fu = selected.duplicated(["pid", "fu"], keep="first")
    rejected += reject_rows(selected[dup_fu], DATA_ENTRY_MEMBER, "Follow-up #",
                            "the patient has another image with this follow-up number; the first row is kept")
    return frame, selected[~dup_fu], rejected


def google_rows(google: pd.DataFrame, known: set[str], written: set[str]) -> tuple[dict[str, dict], list[Rejection]]:
    """Google labels of the written images (image -> {column: YES/NO}); rows of unknown images rejected."""
    unknown = ~google["Image Index"].isin(known)
    rejected = reject_rows(google[unknown], GOOGLE_MEMBER, "Image Index", "image is not in Data_Entry_2017_v2020")
    rows = google[google["Image Index"].isin(written)]
    columns = list(LABEL_MAP[SOURCE_GOOGLE])
    return {r[0]: dict(zip(columns, r[1:], strict=True)) for r in rows[["Image Index", *columns]].itertuples(index=False)}, rejected
