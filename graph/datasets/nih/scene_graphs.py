"""One NIH image's Chest ImaGenome-format scene graph: study fields, label phrases and attributes entries.

The layout (phrases, attributes entries per anatomy and source, phrase ids, synthetic dates) is the contract
in :mod:`graph.datasets.nih.convert`; this module builds the dict, :mod:`graph.datasets.nih.write` writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graph.datasets.nih.dates import study_date_fields
from graph.datasets.nih.labels import (
    GOOGLE_POLARITY,
    NO_FINDING,
    SOURCE_GOOGLE,
    SOURCE_TEXT,
    ConversionVocabulary,
    LabelStatement,
)
from graph.datasets.nih.tables import DATA_ENTRY_MEMBER, GOOGLE_MEMBER
from graph.records import Rejection

MAX_AGE = 100  # NIH's table holds a few impossible ages (>= 100 years) in its older versions

TEXT_PHRASE = "NIH ChestX-ray14 text-mined label: {label}"
GOOGLE_PHRASE = "Google radiologist-adjudicated label (Majkowska et al. 2020): {label} {value}"
SECTION = "labels"


def age_decile(age: Any) -> str | None:
    """``57`` -> ``"50-60"``; None for ages >= 100 (NIH data errors), negative or unreadable ages."""
    try:
        years = int(float(age))
    except (TypeError, ValueError):
        return None
    if years < 0 or years >= MAX_AGE:
        return None
    low = years // 10 * 10
    return f"{low}-{low + 10}"


class _Entries:
    """The attributes entries of one image, one per (anatomy, source), filled phrase by phrase."""

    def __init__(self, image_id: str, region_cuis: dict[str, list[str]]):
        self.image_id, self.region_cuis = image_id, region_cuis
        self.entries: dict[tuple[str, str], dict] = {}
        self.k = 0  # phrase number within the image, over both sources

    def _entry(self, anatomy: str, source: str) -> dict:
        key = (anatomy, source)
        if key not in self.entries:
            self.entries[key] = {
                anatomy: True, "bbox_name": anatomy, "synsets": self.region_cuis[anatomy], "name": anatomy,
                "attributes": [], "attributes_ids": [], "phrases": [], "phrase_IDs": [], "sections": [],
                "comparison_cues": [], "temporal_cues": [], "severity_cues": [], "texture_cues": [],
                "object_id": f"{self.image_id}_{anatomy}", "source": source,
            }
        return self.entries[key]

    def add(self, source: str, phrase: str, labels: list[LabelStatement]) -> None:
        """One phrase; its labels may lie at several anatomies (No Finding), each gets the same phrase id."""
        by_anatomy: dict[str, list[LabelStatement]] = {}
        for lab in labels:
            by_anatomy.setdefault(lab.anatomy, []).append(lab)
        for anatomy, labs in by_anatomy.items():
            e = self._entry(anatomy, source)
            e["attributes"].append([lab.attribute for lab in labs])
            e["attributes_ids"].append([lab.attribute_id for lab in labs])
            e["phrases"].append(phrase)
            e["phrase_IDs"].append(f"{self.image_id}|{self.k}")
            e["sections"].append(SECTION)
            for cues in ("comparison_cues", "temporal_cues", "severity_cues", "texture_cues"):
                e[cues].append([])
        self.k += 1


def _text_labels(ctx: ConversionVocabulary, entries: _Entries, image: str, labels: str,
                 rejected: list[Rejection]) -> None:
    names = list(dict.fromkeys(s.strip() for s in labels.split("|") if s.strip()))
    if names == [NO_FINDING]:
        entries.add(SOURCE_TEXT, TEXT_PHRASE.format(label=NO_FINDING), ctx.no_finding)
        return
    for name in names:
        if name == NO_FINDING:
            rejected.append(Rejection(DATA_ENTRY_MEMBER, image, "Finding Labels",
                                      "'No Finding' next to other labels; it is ignored"))
        elif name not in ctx.text:
            rejected.append(Rejection(DATA_ENTRY_MEMBER, image, "Finding Labels", f"unknown NIH label {name!r}"))
        else:
            entries.add(SOURCE_TEXT, TEXT_PHRASE.format(label=name), [ctx.text[name]])


def _google_labels(ctx: ConversionVocabulary, entries: _Entries, image: str, values: dict[str, str],
                   rejected: list[Rejection]) -> None:
    for column, value in values.items():
        value = value.strip().upper()
        if value not in GOOGLE_POLARITY:
            rejected.append(Rejection(GOOGLE_MEMBER, image, column, f"value {value!r} is not YES or NO"))
            continue
        entries.add(SOURCE_GOOGLE, GOOGLE_PHRASE.format(label=column, value=value), [ctx.google[(column, value)]])


def scene_graph_folder(out: Path, patient_id: int) -> Path:
    """``out/scene_graphs/<patient_id mod 100, 2 digits>``: keeps folders near 1,100 files each."""
    return out / "scene_graphs" / f"{patient_id % 100:02d}"


def scene_graph(ctx: ConversionVocabulary, row: tuple, google: dict[str, str] | None, objects: list[dict],
                rejected: list[Rejection]) -> dict:
    """The scene graph of one Data_Entry row (image, labels, pid, fu, age, gender, view), with the image's
    Google labels (None: not in that table) and box ``objects``; label problems are appended to ``rejected``."""
    image, labels, pid, fu, age, gender, view = row
    image_id = image.removesuffix(".png")
    entries = _Entries(image_id, ctx.region_cuis)
    _text_labels(ctx, entries, image, labels, rejected)
    if google is not None:
        _google_labels(ctx, entries, image, google, rejected)
    return {
        "image_id": image_id, "viewpoint": view or None, "patient_id": str(pid), "study_id": image_id,
        "gender": gender or None, "age_decile": age_decile(age), "reason_for_exam": None,
        "StudyOrder": int(fu) + 1, "StudyDateTime": study_date_fields(int(fu))[0],
        "StudyDateTime_is_synthetic": True,
        "objects": objects, "attributes": list(entries.entries.values()), "relationships": [],
    }

