"""The longitudinal truth of the NIH ChestX-ray14 tables, computed with plain pandas, apart from the graph.

This is the yardstick for what the graph built from :mod:`graph.datasets.nih.convert` answers, so it shares with it
only what it must: the wheel-reading helpers (:func:`~graph.datasets.nih.convert.locate_wheel`,
:func:`~graph.datasets.nih.convert.read_tables`, :class:`~graph.datasets.nih.convert.NIHTables`), the label mapping
(:data:`~graph.datasets.nih.convert.LABEL_MAP`) and the synthetic date function (years and date ranges must be
those of the scene graphs). Everything else (states, events, counts) is computed here from the raw tables.

Rules (study level: a finding anywhere in the study; one study = one NIH image; findings are the vocabulary
findings of LABEL_MAP, so Mass and Nodule, and Google's "Nodule or mass", are one finding):

- statements: an NIH label -> present; an image whose only label is ``No Finding`` -> every text-mined
  finding absent (NIH's explicit statement); a Google YES -> present, NO -> absent. Labels outside the
  mapping and Google values other than YES/NO state nothing.
- state per (patient, follow-up, finding): present if any source says present, else absent if any source
  states absent, else ``not_mentioned``.
- events, against the patient's immediately previous study (by follow-up number; the first study has none):
  ``onset`` = present now and not present before (``prior_state`` absent or not_mentioned);
  ``resolution`` = present before, stated absent now; ``no_longer_mentioned`` = present before, not
  mentioned now; ``persistence`` = present in both.
- rows: the same as the converter keeps: Patient ID and Follow-up # must be non-negative integers; of two rows
  with one Image Index, or of one patient with one follow-up number, the first is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from graph.datasets.nih.convert import (
    LABEL_MAP,
    SOURCE_GOOGLE,
    SOURCE_TEXT,
    NIHTables,
    locate_wheel,
    read_tables,
    synthetic_study_datetime,
)
from graph.terms import State

PRESENT, ABSENT, NOT_MENTIONED = State.PRESENT, State.ABSENT, State.NOT_MENTIONED
ONSET, RESOLUTION, NO_LONGER_MENTIONED, PERSISTENCE = "onset", "resolution", "no_longer_mentioned", "persistence"
NO_FINDING = "No Finding"

#: The findings the reference tracks: every vocabulary finding LABEL_MAP maps to, in first-seen order.
FINDINGS: tuple[str, ...] = tuple(dict.fromkeys(t.finding for table in LABEL_MAP.values() for t in table.values()))

COUNT_COLUMNS = ("finding", "year", "present", "absent", "onset", "onset_after_absent", "onset_after_unmentioned",
                 "resolution", "no_longer_mentioned", "persistence")


def load_tables(wheel: Path | None = None, limit_patients: int | None = None) -> NIHTables:
    """The three NIH tables from ``wheel`` (default: the verified torchxrayvision 1.5.7 wheel, downloaded
    into the IU cache when missing), optionally cut to the ``limit_patients`` lowest patient ids (Google and
    box rows cut to those patients' images).

    Raises:
        graph.datasets.nih.convert.DatasetUnavailable: the wheel or a table cannot be obtained or read.
    """
    tables = read_tables(locate_wheel(wheel))
    if limit_patients is None:
        return tables
    entry = tables.data_entry
    pid = pd.to_numeric(entry["Patient ID"], errors="coerce")
    keep = np.sort(pid.dropna().unique())[:limit_patients]
    entry = entry[pid.isin(keep)]
    images = set(entry["Image Index"])
    return NIHTables(entry, tables.bbox[tables.bbox["Image Index"].isin(images)],
                     tables.google[tables.google["Image Index"].isin(images)])


def _studies(entry: pd.DataFrame) -> pd.DataFrame:
    """image, patient_id (str), follow_up (int): one row per kept study."""
    frame = pd.DataFrame({
        "image": entry["Image Index"].astype(str),
        "pid": pd.to_numeric(entry["Patient ID"], errors="coerce"),
        "follow_up": pd.to_numeric(entry["Follow-up #"], errors="coerce"),
        "labels": entry["Finding Labels"].astype(str),
    })
    frame = frame.dropna(subset=["pid", "follow_up"])
    frame = frame[(frame["pid"] >= 0) & (frame["follow_up"] >= 0)]
    frame = frame.drop_duplicates("image", keep="first").drop_duplicates(["pid", "follow_up"], keep="first")
    frame = frame.assign(patient_id=frame["pid"].astype("int64").astype(str),
                         follow_up=frame["follow_up"].astype("int64"))
    return frame[["image", "patient_id", "follow_up", "labels"]].reset_index(drop=True)


def _text_statements(studies: pd.DataFrame) -> pd.DataFrame:
    labels = studies[["image", "labels"]].assign(label=studies["labels"].str.split("|")).explode("label")
    labels["label"] = labels["label"].str.strip()
    sole_no_finding = (labels["label"] == NO_FINDING).groupby(labels["image"]).transform("all")
    text_map = LABEL_MAP[SOURCE_TEXT]
    present = labels[labels["label"].isin(list(text_map))]
    present = pd.DataFrame({"image": present["image"], "finding": present["label"].map(lambda x: text_map[x].finding),
                            "state": PRESENT})
    no_finding_images = labels.loc[sole_no_finding, "image"].drop_duplicates()
    text_findings = pd.DataFrame({"finding": list(dict.fromkeys(t.finding for t in text_map.values()))})
    absent = no_finding_images.to_frame().merge(text_findings, how="cross").assign(state=ABSENT)
    return pd.concat([present, absent], ignore_index=True)


def _google_statements(google: pd.DataFrame, images: pd.Series) -> pd.DataFrame:
    google_map = LABEL_MAP[SOURCE_GOOGLE]
    rows = google[google["Image Index"].isin(set(images))]
    long = rows.melt(id_vars=["Image Index"], value_vars=list(google_map), var_name="label", value_name="value")
    long["state"] = long["value"].astype(str).str.strip().str.upper().map({"YES": PRESENT, "NO": ABSENT})
    long = long.dropna(subset=["state"])
    return pd.DataFrame({"image": long["Image Index"], "finding": long["label"].map(lambda x: google_map[x].finding),
                         "state": long["state"]})


def reference_states(tables: NIHTables) -> pd.DataFrame:
    """One row per (kept study, finding of :data:`FINDINGS`).

    Columns: patient_id (str), follow_up (int, NIH's 0-based number), image_id (Image Index without
    ``.png``), study_datetime (synthetic), year (its year), finding, state (present | absent |
    not_mentioned), prior_state (the state in the patient's previous study; None in the first), event
    (onset | resolution | no_longer_mentioned | persistence | None). Sorted by patient, follow-up, finding.
    """
    studies = _studies(tables.data_entry)
    said = pd.concat([_text_statements(studies), _google_statements(tables.google, studies["image"])],
                     ignore_index=True)
    # present wins over absent: any source saying present makes the study's finding present
    said["rank"] = (said["state"] == PRESENT).astype(int)
    said = said.groupby(["image", "finding"], as_index=False)["rank"].max()
    said["state"] = np.where(said["rank"] == 1, PRESENT, ABSENT)

    grid = studies[["image", "patient_id", "follow_up"]].merge(pd.DataFrame({"finding": list(FINDINGS)}), how="cross")
    grid = grid.merge(said[["image", "finding", "state"]], on=["image", "finding"], how="left")
    grid["state"] = grid["state"].fillna(NOT_MENTIONED)
    grid = grid.sort_values(["patient_id", "finding", "follow_up"], kind="stable")
    grid["prior_state"] = grid.groupby(["patient_id", "finding"])["state"].shift(1)
    grid["event"] = _events(grid["state"], grid["prior_state"])

    when = {fu: synthetic_study_datetime(int(fu)) for fu in grid["follow_up"].unique()}
    grid["study_datetime"] = grid["follow_up"].map(when)
    grid["year"] = grid["follow_up"].map({fu: d.year for fu, d in when.items()}).astype("int64")
    grid["image_id"] = grid["image"].str.removesuffix(".png")
    grid = grid.sort_values(["patient_id", "follow_up", "finding"], kind="stable").reset_index(drop=True)
    grid["prior_state"] = grid["prior_state"].astype(object).where(grid["prior_state"].notna(), None)
    return grid[["patient_id", "follow_up", "image_id", "study_datetime", "year", "finding", "state",
                 "prior_state", "event"]]


def _events(state: pd.Series, prior: pd.Series) -> pd.Series:
    had = prior.notna()
    before, now = prior == PRESENT, state == PRESENT
    conditions = [had & now & ~before, had & before & now, had & before & (state == ABSENT),
                  had & before & (state == NOT_MENTIONED)]
    choices = [ONSET, PERSISTENCE, RESOLUTION, NO_LONGER_MENTIONED]
    out = pd.Series(np.select(conditions, choices, default=""), index=state.index, dtype=object)
    return out.where(out != "", None)


def reference_counts(tables: NIHTables, states: pd.DataFrame | None = None) -> pd.DataFrame:
    """Counts per (finding, synthetic year) of studies and events: columns :data:`COUNT_COLUMNS`.

    ``present`` / ``absent`` count studies in that state; events are counted in the year of the later study;
    ``onset_after_absent`` + ``onset_after_unmentioned`` = ``onset``. Every (finding, year) with a study
    appears, zeros included. ``states``: :func:`reference_states` of ``tables`` when the caller has it.
    """
    s = reference_states(tables) if states is None else states
    flags = pd.DataFrame({
        "finding": s["finding"], "year": s["year"],
        "present": s["state"] == PRESENT, "absent": s["state"] == ABSENT,
        "onset": s["event"] == ONSET,
        "onset_after_absent": (s["event"] == ONSET) & (s["prior_state"] == ABSENT),
        "onset_after_unmentioned": (s["event"] == ONSET) & (s["prior_state"] == NOT_MENTIONED),
        "resolution": s["event"] == RESOLUTION, "no_longer_mentioned": s["event"] == NO_LONGER_MENTIONED,
        "persistence": s["event"] == PERSISTENCE,
    })
    counts = flags.groupby(["finding", "year"], as_index=False).sum()
    return counts.astype({c: "int64" for c in COUNT_COLUMNS[2:]})[list(COUNT_COLUMNS)]


def _day(value: str | date | datetime) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def reference_new_patients(tables: NIHTables, finding: str | Iterable[str], start_date: str | date | datetime,
                           end_date: str | date | datetime,
                           prior_states: Iterable[str] = (ABSENT, NOT_MENTIONED),
                           states: pd.DataFrame | None = None) -> set[str]:
    """Patient ids (str) with an onset of ``finding`` whose synthetic study date lies in [start, end], whole
    days, both inclusive (ISO strings, dates or datetimes).

    ``finding`` is a vocabulary finding name of :data:`FINDINGS` (or several: any of them). No hierarchy is
    applied: pass the children yourself when comparing with a hierarchy-aware query. ``prior_states``
    narrows the onsets, e.g. ``("absent",)`` for onsets after an explicit absent statement only.
    ``states`` is :func:`reference_states` of ``tables`` when the caller already has it (it takes seconds
    on the whole cohort; many questions over the same tables should compute it once).

    Raises:
        ValueError: a finding the reference does not track, or a prior state other than absent / not_mentioned.
    """
    names = {finding} if isinstance(finding, str) else set(finding)
    unknown = names - set(FINDINGS)
    if unknown:
        raise ValueError(f"finding(s) {sorted(unknown)} not tracked; choose from {list(FINDINGS)}")
    priors = set(prior_states)
    if not priors <= {ABSENT, NOT_MENTIONED}:
        raise ValueError(f"prior_states {sorted(priors)}: choose from absent, not_mentioned")
    s = reference_states(tables) if states is None else states
    days = s["follow_up"].map({fu: synthetic_study_datetime(int(fu)).date() for fu in s["follow_up"].unique()})
    hit = (s["finding"].isin(names) & (s["event"] == ONSET) & s["prior_state"].isin(priors)
           & (days >= _day(start_date)) & (days <= _day(end_date)))
    return set(s.loc[hit, "patient_id"])
