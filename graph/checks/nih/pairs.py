"""An independent check of ``cxrkg export pairs`` on the NIH ChestX-ray14 cohort.

Written apart from the graph code: plain pandas over the NIH tables of the torchxrayvision wheel, through the
reference states of :func:`graph.checks.nih.reference.reference_states` (per kept study and vocabulary
finding: present if any source states it, else absent if one states it absent, else not mentioned; the
event against the patient's previous study by follow-up number). It never reads Neo4j or the code that
writes the pairs (:mod:`graph.temporal`); a file from ``cxrkg export pairs`` is checked against it.

What each row must be (docs/temporal_benchmarks.md; one NIH image is one study):

- one row per consecutive pair of a patient's kept studies by follow-up number: ``dicom_id`` = ``study_id`` =
  the later image (Image Index without ``.png``), ``previous_dicom_id`` = ``previous_study_id`` the earlier,
  ``subject_id`` the patient (``str(int(Patient ID))``); no pair is in doubt (one date per follow-up number);
- per finding, the label of the event between the two: onset ``new`` (three classes: ``worsening``),
  persistence ``stable``, resolution ``resolved`` (``improving``); no longer mentioned, or no event, no label.
  NIH states findings, never changes, so every label is derived: source ``presence``, basis ``derived``; with
  ``stated_only`` no cell has a label.

Cells are keyed by (dicom_id, previous_dicom_id, finding): a pair the file lacks is ``missing``, one it has
beyond these ``extra``; a different label, source, basis or id column is named by that column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graph.checks.nih.reference import NO_LONGER_MENTIONED, ONSET, PERSISTENCE, RESOLUTION, NIHTables, reference_states

#: MS-CXR-T's five findings: the export's column prefix -> the vocabulary finding NIH's labels map to
FINDINGS = {"consolidation": "consolidation", "edema": "pulmonary edema/hazy opacity",
            "pleural_effusion": "pleural effusion", "pneumonia": "pneumonia", "pneumothorax": "pneumothorax"}
FIVE = {ONSET: "new", PERSISTENCE: "stable", RESOLUTION: "resolved", NO_LONGER_MENTIONED: ""}
THREE = {ONSET: "worsening", PERSISTENCE: "stable", RESOLUTION: "improving", NO_LONGER_MENTIONED: ""}
MISMATCH_COLUMNS = ("dicom_id", "previous_dicom_id", "finding", "expected", "got", "problem")


@dataclass
class PairsCheck:
    """What was compared: pairs and labelled cells expected, and the mismatches (:data:`MISMATCH_COLUMNS`)."""

    pairs: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    mismatches: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(MISMATCH_COLUMNS)))


def expected_pairs(tables: NIHTables, classes: int = 3, stated_only: bool = False,
                   findings: dict[str, str] | None = None, states: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every (pair, finding) cell the NIH tables give: columns dicom_id, previous_dicom_id, study_id,
    previous_study_id, subject_id, finding (the column prefix), progression, label_source, label_basis (the
    last three ``""`` where no label). ``findings`` prefix -> vocabulary finding (default :data:`FINDINGS`)."""
    chosen = FINDINGS if findings is None else findings
    s = reference_states(tables) if states is None else states
    s = s[s["finding"].isin(set(chosen.values()))].sort_values(["patient_id", "finding", "follow_up"], kind="stable")
    s = s.assign(previous=s.groupby(["patient_id", "finding"])["image_id"].shift(1))
    s = s[s["previous"].notna()]
    words = THREE if classes == 3 else FIVE
    label = s["event"].map(words).fillna("") if not stated_only else pd.Series("", index=s.index)
    prefix = {v: k for k, v in chosen.items()}
    return pd.DataFrame({
        "dicom_id": s["image_id"], "previous_dicom_id": s["previous"], "study_id": s["image_id"],
        "previous_study_id": s["previous"], "subject_id": s["patient_id"], "finding": s["finding"].map(prefix),
        "progression": label, "label_source": label.where(label == "", "presence"),
        "label_basis": label.where(label == "", "derived"),
    }).reset_index(drop=True)


def read_export(path: Path, findings: list[str]) -> pd.DataFrame:
    """A pairs file in the long layout of :func:`expected_pairs` (every cell a string as written)."""
    wide = pd.read_csv(path, dtype=str, keep_default_na=False)
    ids = ["dicom_id", "previous_dicom_id", "study_id", "previous_study_id", "subject_id"]
    parts = []
    for f in findings:
        part = wide[ids + [f"{f}_progression", f"{f}_label_source", f"{f}_label_basis"]].copy()
        part.columns = ids + ["progression", "label_source", "label_basis"]
        parts.append(part.assign(finding=f))
    return pd.concat(parts, ignore_index=True)


def check_pairs(path: Path, tables: NIHTables, classes: int = 3, stated_only: bool = False,
                states: pd.DataFrame | None = None) -> PairsCheck:
    """The file of ``cxrkg export pairs`` (default findings) against :func:`expected_pairs`.

    Raises:
        OSError, pandas.errors.ParserError, KeyError: the file cannot be read or lacks a column.
    """
    want = expected_pairs(tables, classes, stated_only, states=states)
    got = read_export(path, list(FINDINGS))
    key = ["dicom_id", "previous_dicom_id", "finding"]
    both = want.merge(got, on=key, how="outer", suffixes=("", "_got"), indicator=True)
    out = []
    for side, problem in (("left_only", "missing"), ("right_only", "extra")):
        lost = both[both["_merge"] == side]
        out.append(pd.DataFrame({"dicom_id": lost["dicom_id"], "previous_dicom_id": lost["previous_dicom_id"],
                                 "finding": lost["finding"], "expected": "", "got": "", "problem": problem}))
    common = both[both["_merge"] == "both"]
    for column in ("progression", "label_source", "label_basis", "study_id", "previous_study_id", "subject_id"):
        bad = common[common[column] != common[f"{column}_got"]]
        out.append(pd.DataFrame({"dicom_id": bad["dicom_id"], "previous_dicom_id": bad["previous_dicom_id"],
                                 "finding": bad["finding"], "expected": bad[column], "got": bad[f"{column}_got"],
                                 "problem": column}))
    mismatches = pd.concat(out, ignore_index=True)[list(MISMATCH_COLUMNS)]
    pairs = want[["dicom_id", "previous_dicom_id"]].drop_duplicates()
    labels = want.loc[want["progression"] != "", "progression"].value_counts().to_dict()
    return PairsCheck(len(pairs), {str(k): int(v) for k, v in labels.items()}, mismatches)
