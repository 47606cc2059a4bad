"""NIH ChestX-ray14 as Chest ImaGenome-format scene graphs plus a metadata CSV (``cxrkg datasets nih``).

Sources. Three tables inside the torchxrayvision 1.5.7 wheel on PyPI, fetched and checked by
:func:`graph.extract.iu.fetch_wheel` (sha256 :data:`graph.extract.iu.WHEEL_SHA256`); only the members in
:data:`NIH_MEMBERS` are ever read (the wheel's other tables carry research-use terms without
redistribution rights):

- ``Data_Entry_2017_v2020.csv.gz``: 112,120 images of 30,805 patients; ``Finding Labels`` are the 14
  labels text-mined from the reports by NIH ('|'-joined) or ``No Finding`` (Wang et al., CVPR 2017).
- ``BBox_List_2017.csv.gz``: 984 radiologist boxes (x, y, w, h in pixels of the 1024x1024 PNG).
- ``google2019_nih-chest-xray-labels.csv.gz``: 4,376 images with radiologist-adjudicated YES/NO for
  Fracture, Pneumothorax, Airspace opacity, Nodule or mass (Majkowska et al., Radiology 2020).

Conversion contract (the graph code and its tests rely on exactly this):

- One NIH image = one study = one file ``scene_graphs/<patient_id mod 100, 2 digits>/<image_id>_SceneGraph.json``.
  ``image_id`` = ``study_id`` = Image Index without ``.png`` (``00000013_008``); ``patient_id`` =
  ``str(int(Patient ID))`` (``"13"``); ``viewpoint`` = View Position; ``gender`` = Patient Gender;
  ``age_decile`` = ``"50-60"`` from Patient Age (null for ages >= 100, which are data errors in NIH);
  ``reason_for_exam`` null; ``StudyOrder`` = Follow-up # + 1; ``relationships`` [] (NIH states no comparisons).
- Dates are synthetic: NIH gives only the follow-up order. ``StudyDateTime`` =
  :func:`synthetic_study_datetime` = 2000-01-01 00:00:00 + 91 days x Follow-up #, so the order is NIH's and
  nothing else is (:data:`SYNTHETIC_DATES_NOTE`). Each file also says so in the cxrkg extension key
  ``"StudyDateTime_is_synthetic": true``. Two rows of one patient with the same follow-up number (or two rows
  with one Image Index): the first is kept, the others are returned as rejections.
- ``metadata.csv``: ``dicom_id,subject_id,study_id,StudyDate,StudyTime,ViewPosition``, one row per written
  image (StudyDate int YYYYMMDD of the synthetic date, StudyTime 0.0), so the loader can batch by patient
  (:mod:`graph.formats.metadata`).
- Text-mined labels, source :data:`SOURCE_TEXT`: each NIH label is mapped by :data:`LABEL_MAP` to a
  vocabulary finding and anatomy and becomes one phrase ``"NIH ChestX-ray14 text-mined label: <label>"``
  carrying ``<category>|yes|<finding>`` (category from the vocabulary) in the attributes entry of its
  anatomy. ``No Finding`` is NIH's explicit label and becomes one phrase stating every mapped finding absent
  (``<category>|no|<finding>``) at its anatomy. An image with some labels says nothing about the others
  (no entry: "not mentioned").
- Adjudicated labels, source :data:`SOURCE_GOOGLE`: for the images of the Google table, one phrase per
  column, ``YES`` -> ``yes``, ``NO`` -> ``no``, in a second attributes entry per anatomy. Fracture maps to the
  vocabulary's generic ``fracture`` at ``chest`` (the finding's own region: a fracture is not in the lungs);
  the others at ``lungs``.
- Attributes entries: one per (anatomy, source), the dataset's parallel per-phrase lists (attributes,
  attributes_ids, phrases, phrase_IDs ``"<study_id>|<k>"`` with k counting the image's phrases over both
  sources, sections ``"labels"``, comparison/temporal/severity/texture cues all ``[]``), ``object_id``
  ``"<image_id>_<anatomy>"``, and the cxrkg extension key ``"source"`` that
  :class:`graph.formats.scene_graph.RegionAttributes` reads.
- Boxes: each BBox_List row is an entry of ``objects``: ``bbox_name`` = ``cardiac silhouette`` for
  Cardiomegaly, else ``right lung`` when the box centre x < 512 (the patient's right is on the image's left
  in PA/AP views) else ``left lung``; ``object_id`` ``"<image_id>_<bbox_name>"`` (``_2``, ``_3``... for
  further boxes on the same region); ``original_*`` in the 1024-pixel PNG frame, ``x1..height`` scaled by
  224/1024, both rounded half up, widths and heights = x2 - x1 and y2 - y1 of the rounded corners;
  ``synsets`` []; ``name`` and the extension key ``finding_label`` = the NIH label as the box table writes it.
- Rejections (:class:`graph.records.Rejection`, file = the wheel member): duplicate follow-ups or image
  ids, unreadable patient id / follow-up / box coordinates, labels outside :data:`LABEL_MAP`, ``No Finding``
  next to other labels, Google values other than YES/NO, Google or box rows whose image is not in Data_Entry.

Errors: :class:`DatasetUnavailable` for a wheel that cannot be downloaded, is not a zip, lacks a member,
or holds a member that is not a readable gzip CSV with the expected columns.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from graph.extract.iu import WHEEL_NAME, WHEEL_SHA256, IUUnavailable, default_cache, fetch_wheel
from graph.records import Rejection
from graph.vocabulary import Vocabulary, VocabularyError, vocabulary

SOURCE_TEXT = "nih_chestxray14"
SOURCE_GOOGLE = "nih_google2019"

DATA_ENTRY_MEMBER = "torchxrayvision/data/Data_Entry_2017_v2020.csv.gz"
BBOX_MEMBER = "torchxrayvision/data/BBox_List_2017.csv.gz"
GOOGLE_MEMBER = "torchxrayvision/data/google2019_nih-chest-xray-labels.csv.gz"
#: The only wheel members cxrkg reads for NIH (the others have no redistribution rights).
NIH_MEMBERS = (DATA_ENTRY_MEMBER, BBOX_MEMBER, GOOGLE_MEMBER)

DATA_ENTRY_COLUMNS = ("Image Index", "Finding Labels", "Follow-up #", "Patient ID", "Patient Age",
                      "Patient Gender", "View Position")
#: BBox_List's header is ``Image Index,Finding Label,Bbox [x,y,w,h],,,``: its first six columns are renamed to these.
BBOX_COLUMNS = ("Image Index", "Finding Label", "x", "y", "w", "h")
GOOGLE_COLUMNS = ("Image Index", "Fracture", "Pneumothorax", "Airspace opacity", "Nodule or mass")

NO_FINDING = "No Finding"
GOOGLE_POLARITY = {"YES": "yes", "NO": "no"}

SYNTHETIC_EPOCH = datetime(2000, 1, 1)
DAYS_PER_FOLLOW_UP = 91
DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
#: What every place that shows NIH study dates must be able to say.
SYNTHETIC_DATES_NOTE = "dates are synthetic (2000-01-01 + 91 days per follow-up); only their order is NIH's"

PNG_SIZE = 1024  # BBox_List coordinates are pixels of the 1024x1024 PNGs NIH released
FRAME_224 = 224  # Chest ImaGenome's x1..y2 frame (docs/formats.md §1.3)
MAX_AGE = 100  # NIH's table holds a few impossible ages (>= 100 years) in its older versions

TEXT_PHRASE = "NIH ChestX-ray14 text-mined label: {label}"
GOOGLE_PHRASE = "Google radiologist-adjudicated label (Majkowska et al. 2020): {label} {value}"
SECTION = "labels"

ATTRIBUTION = (
    "NIH ChestX-ray14, provided by the NIH Clinical Center (https://nihcc.app.box.com/v/ChestXray-NIHCC): "
    "Wang X, Peng Y, Lu L, Lu Z, Bagheri M, Summers RM. ChestX-ray8: Hospital-scale Chest X-ray Database and "
    "Benchmarks on Weakly-Supervised Classification and Localization of Common Thorax Diseases. IEEE CVPR 2017, "
    "pp. 3462-3471; no restrictions on use, with that citation, a link to the NIH site and acknowledgement of "
    "the NIH Clinical Center requested. Adjudicated labels: Majkowska A, Mittal S, Steiner DF, et al. Chest "
    "Radiograph Interpretation with Deep Learning Models: Assessment with Radiologist-adjudicated Reference "
    "Standards and Population-adjusted Evaluation. Radiology 2020;294(2):421-431 (doi:10.1148/radiol.2019191293), "
    "labels released by Google under CC BY 4.0 (licence not verified by cxrkg: check Google's release before "
    "redistributing). Tables read from the torchxrayvision 1.5.7 wheel."
)


class Target(NamedTuple):
    """Where one NIH label lands: a vocabulary finding at a vocabulary region."""

    finding: str
    anatomy: str


_MASS = "mass/nodule (not otherwise specified)"

#: The one mapping of NIH labels to the vocabulary, per source (finding names and anatomies exist in
#: graph/vocab/chest_xray.yaml; checked by :func:`check_label_map`). Mass and Nodule are one finding.
LABEL_MAP: dict[str, dict[str, Target]] = {
    SOURCE_TEXT: {
        "Atelectasis": Target("atelectasis", "lungs"),
        "Cardiomegaly": Target("enlarged cardiac silhouette", "cardiac silhouette"),
        "Consolidation": Target("consolidation", "lungs"),
        "Edema": Target("pulmonary edema/hazy opacity", "lungs"),
        "Effusion": Target("pleural effusion", "lungs"),
        "Emphysema": Target("copd/emphysema", "lungs"),
        "Fibrosis": Target("interstitial lung disease", "lungs"),
        "Hernia": Target("hernia", "mediastinum"),
        "Infiltration": Target("infiltration", "lungs"),
        "Mass": Target(_MASS, "lungs"),
        "Nodule": Target(_MASS, "lungs"),
        "Pleural_Thickening": Target("pleural/parenchymal scarring", "lungs"),
        "Pneumonia": Target("pneumonia", "lungs"),
        "Pneumothorax": Target("pneumothorax", "lungs"),
    },
    SOURCE_GOOGLE: {
        "Fracture": Target("fracture", "chest"),
        "Pneumothorax": Target("pneumothorax", "lungs"),
        "Airspace opacity": Target("airspace opacity", "lungs"),
        "Nodule or mass": Target(_MASS, "lungs"),
    },
}


class DatasetUnavailable(RuntimeError):
    """The NIH tables cannot be read here: no wheel (no registry), not a zip, a member missing or corrupt."""


@dataclass(frozen=True)
class NIHTables:
    """The three NIH tables as read from the wheel, every cell a string (``""`` when empty).

    ``data_entry`` has at least :data:`DATA_ENTRY_COLUMNS`, ``bbox`` exactly :data:`BBOX_COLUMNS`,
    ``google`` at least :data:`GOOGLE_COLUMNS`.
    """

    data_entry: pd.DataFrame
    bbox: pd.DataFrame
    google: pd.DataFrame


@dataclass
class NIHSummary:
    """What :func:`convert_nih` wrote: counts of written images (= studies = files), patients, patients
    with >= 2 written studies, boxes, images with adjudicated labels, and the rejected rows."""

    out: Path
    images: int = 0
    patients: int = 0
    longitudinal_patients: int = 0
    boxes: int = 0
    adjudicated_images: int = 0
    rejections: list[Rejection] = field(default_factory=list)


# --- dates and ages -----------------------------------------------------------------------------------

def synthetic_study_datetime(follow_up: int) -> datetime:
    """The synthetic study datetime of NIH follow-up number ``follow_up`` (0-based, as in Data_Entry).

    2000-01-01 00:00:00 + 91 days per follow-up: roughly four follow-ups per calendar year, order kept.
    Only the order is NIH's (:data:`SYNTHETIC_DATES_NOTE`).

    Raises:
        ValueError: ``follow_up`` is negative.
    """
    if follow_up < 0:
        raise ValueError(f"follow-up number {follow_up} is negative")
    return SYNTHETIC_EPOCH + timedelta(days=DAYS_PER_FOLLOW_UP * int(follow_up))


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


def _half_up(value: float) -> int:
    # round() rounds halves to even; pixel corners round half up, as image tools do
    return int(math.floor(value + 0.5))


# --- reading the wheel --------------------------------------------------------------------------------

def locate_wheel(wheel: Path | None = None, cache: Path | None = None) -> Path:
    """The wheel to read: ``wheel`` as given (not checksummed, so tests can pass small fake wheels), else
    the verified torchxrayvision 1.5.7 wheel in ``cache`` (default :func:`graph.extract.iu.default_cache`),
    downloaded with pip when missing.

    Raises:
        DatasetUnavailable: ``wheel`` does not exist, or the download / checksum fails.
    """
    if wheel is not None:
        if not Path(wheel).is_file():
            raise DatasetUnavailable(f"{wheel}: no such file; pass the torchxrayvision 1.5.7 wheel or leave it out "
                                     "to download it")
        return Path(wheel)
    cache = cache or default_cache()
    try:
        return fetch_wheel(cache)
    except IUUnavailable as exc:
        raise DatasetUnavailable(f"{exc} (fix: let pip reach the package registry, or put the verified {WHEEL_NAME} "
                                 f"into {cache}, deleting any other file of that name first)") from exc


def _read_member(zf: zipfile.ZipFile, wheel: Path, member: str) -> pd.DataFrame:
    fix = f"delete {wheel} so that it is downloaded again, or pass the torchxrayvision 1.5.7 wheel"
    try:
        raw = zf.read(member)
    except KeyError:
        raise DatasetUnavailable(f"{wheel}: has no member {member}; {fix}") from None
    except (zipfile.BadZipFile, zlib.error, OSError) as exc:
        raise DatasetUnavailable(f"{wheel}: member {member} cannot be read ({exc}); {fix}") from exc
    try:
        text = gzip.decompress(raw)
        return pd.read_csv(io.BytesIO(text), dtype=str, keep_default_na=False)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as exc:
        raise DatasetUnavailable(f"{wheel}: member {member} is not a readable gzip CSV ({exc}); {fix}") from exc


def _require(frame: pd.DataFrame, columns: tuple[str, ...], wheel: Path, member: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DatasetUnavailable(f"{wheel}: member {member} lacks column(s) {', '.join(missing)}; it is not the "
                                 "NIH table of torchxrayvision 1.5.7")


def read_tables(wheel: Path) -> NIHTables:
    """Read the three NIH tables (and nothing else) out of ``wheel`` (about 1 MB compressed).

    Raises:
        DatasetUnavailable: the wheel is missing or not a zip, a member is missing, not gzip, not CSV, or
            lacks the columns used.
    """
    try:
        zf = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise DatasetUnavailable(f"{wheel}: not a readable wheel ({exc}); delete it so that it is downloaded "
                                 "again, or pass the torchxrayvision 1.5.7 wheel") from exc
    with zf:
        entry = _read_member(zf, wheel, DATA_ENTRY_MEMBER)
        bbox = _read_member(zf, wheel, BBOX_MEMBER)
        google = _read_member(zf, wheel, GOOGLE_MEMBER)
    _require(entry, DATA_ENTRY_COLUMNS, wheel, DATA_ENTRY_MEMBER)
    if len(bbox.columns) < len(BBOX_COLUMNS) or list(bbox.columns[:2]) != list(BBOX_COLUMNS[:2]):
        raise DatasetUnavailable(f"{wheel}: member {BBOX_MEMBER} does not start with the columns "
                                 f"{', '.join(BBOX_COLUMNS[:2])}, x, y, w, h")
    bbox = bbox.iloc[:, :len(BBOX_COLUMNS)].set_axis(list(BBOX_COLUMNS), axis=1)
    _require(google, GOOGLE_COLUMNS, wheel, GOOGLE_MEMBER)
    return NIHTables(entry, bbox, google)


def load_nih_tables(wheel: Path | None = None, cache: Path | None = None) -> NIHTables:
    """:func:`read_tables` of :func:`locate_wheel`. Raises DatasetUnavailable."""
    return read_tables(locate_wheel(wheel, cache))


# --- vocabulary ---------------------------------------------------------------------------------------

def check_label_map(vocab: Vocabulary) -> None:
    """Every finding and anatomy of :data:`LABEL_MAP` exists in ``vocab``.

    Raises:
        VocabularyError: one does not (the vocabulary file changed under this module).
    """
    for source, table in LABEL_MAP.items():
        for label, target in table.items():
            if target.finding not in vocab.findings:
                raise VocabularyError(f"{source} label {label!r}: finding {target.finding!r} is not in the vocabulary")
            if target.anatomy not in vocab.regions:
                raise VocabularyError(f"{source} label {label!r}: anatomy {target.anatomy!r} is not a region")


class _Label(NamedTuple):
    anatomy: str
    attribute: str  # "category|yes|finding"
    attribute_id: str  # CUIs joined by ";;", "" when the vocabulary has none


def _label(vocab: Vocabulary, target: Target, polarity: str) -> _Label:
    finding = vocab.findings[target.finding]
    return _Label(target.anatomy, f"{finding.category}|{polarity}|{finding.name}", ";;".join(finding.cuis))


def _no_finding_template(vocab: Vocabulary) -> dict[str, list[_Label]]:
    """Per anatomy, the absent statements NIH's ``No Finding`` stands for (each finding once)."""
    out: dict[str, list[_Label]] = {}
    for target in dict.fromkeys(LABEL_MAP[SOURCE_TEXT].values()):
        out.setdefault(target.anatomy, []).append(_label(vocab, target, "no"))
    return out


# --- table preparation ----------------------------------------------------------------------------------

def _as_int(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(frame[column].str.strip(), errors="coerce")


def _reject_rows(rows: pd.DataFrame, member: str, field_name: str, reason: str) -> list[Rejection]:
    return [Rejection(member, image, field_name, reason) for image in rows["Image Index"]]


def _studies(entry: pd.DataFrame, limit_patients: int | None) -> tuple[pd.DataFrame, pd.DataFrame, list[Rejection]]:
    """(the valid rows of Data_Entry, the rows to write, rejections); adds ``pid`` and ``fu`` int columns."""
    frame = entry.assign(pid=_as_int(entry, "Patient ID"), fu=_as_int(entry, "Follow-up #"))
    rejected: list[Rejection] = []
    for column, name in (("pid", "Patient ID"), ("fu", "Follow-up #")):
        bad = frame[column].isna() | (frame[column] < 0)
        rejected += _reject_rows(frame[bad], DATA_ENTRY_MEMBER, name, f"{name} is not a non-negative integer")
        frame = frame[~bad]
    frame = frame.astype({"pid": "int64", "fu": "int64"})
    if limit_patients is not None:
        keep = sorted(frame["pid"].unique())[:limit_patients]
        selected = frame[frame["pid"].isin(keep)]
    else:
        selected = frame
    dup_image = selected.duplicated("Image Index", keep="first")
    rejected += _reject_rows(selected[dup_image], DATA_ENTRY_MEMBER, "Image Index",
                             "image listed twice; the first row is kept")
    selected = selected[~dup_image]
    dup_fu = selected.duplicated(["pid", "fu"], keep="first")
    rejected += _reject_rows(selected[dup_fu], DATA_ENTRY_MEMBER, "Follow-up #",
                             "the patient has another image with this follow-up number; the first row is kept")
    return frame, selected[~dup_fu], rejected


def _google_rows(google: pd.DataFrame, known: set[str], written: set[str]) -> tuple[dict[str, dict], list[Rejection]]:
    """Google labels of the written images (image -> {column: YES/NO}); rows of unknown images rejected."""
    unknown = ~google["Image Index"].isin(known)
    rejected = _reject_rows(google[unknown], GOOGLE_MEMBER, "Image Index", "image is not in Data_Entry_2017_v2020")
    rows = google[google["Image Index"].isin(written)]
    columns = list(LABEL_MAP[SOURCE_GOOGLE])
    return {r[0]: dict(zip(columns, r[1:])) for r in rows[["Image Index", *columns]].itertuples(index=False)}, rejected


def box_region(finding_label: str, x: float, w: float) -> str:
    """The anatomy a BBox_List box lies in: ``cardiac silhouette`` for Cardiomegaly, else ``right lung`` when
    the box centre is on the image's left half (x < 512 of 1024: the patient's right in PA/AP views), else
    ``left lung``."""
    if finding_label == "Cardiomegaly":
        return "cardiac silhouette"
    return "right lung" if x + w / 2 < PNG_SIZE / 2 else "left lung"


def box_object(image_id: str, finding_label: str, x: float, y: float, w: float, h: float, n: int = 1) -> dict:
    """One ``objects`` entry for a box given in PNG pixels; ``n`` > 1 suffixes the object id (``_2``...)."""
    region = box_region(finding_label, x, w)
    ox1, oy1, ox2, oy2 = (_half_up(v) for v in (x, y, x + w, y + h))
    scale = FRAME_224 / PNG_SIZE
    x1, y1, x2, y2 = (_half_up(v * scale) for v in (x, y, x + w, y + h))
    return {
        "object_id": f"{image_id}_{region}" + (f"_{n}" if n > 1 else ""),
        "x1": x1, "y1": y1, "x2": x2, "y2": y2, "width": x2 - x1, "height": y2 - y1,
        "bbox_name": region, "synsets": [], "name": finding_label,
        "original_x1": ox1, "original_y1": oy1, "original_x2": ox2, "original_y2": oy2,
        "original_width": ox2 - ox1, "original_height": oy2 - oy1,
        "finding_label": finding_label,
    }


def _boxes(bbox: pd.DataFrame, known: set[str], written: set[str]) -> tuple[dict[str, list[dict]], list[Rejection]]:
    coords = bbox[["x", "y", "w", "h"]].apply(lambda c: pd.to_numeric(c.str.strip(), errors="coerce"))
    bad = coords.isna().any(axis=1) | (coords["w"] < 0) | (coords["h"] < 0)
    unknown = ~bbox["Image Index"].isin(known)
    # rows of images outside a --patients selection are not this run's business, unless no image has them
    in_scope = unknown | bbox["Image Index"].isin(written)
    rejected = _reject_rows(bbox[bad & in_scope], BBOX_MEMBER, "Bbox [x,y,w,h]", "box coordinates are not numbers >= 0")
    rejected += _reject_rows(bbox[unknown & ~bad], BBOX_MEMBER, "Image Index", "image is not in Data_Entry_2017_v2020")
    out: dict[str, list[dict]] = {}
    seen: dict[tuple[str, str], int] = {}
    rows = pd.concat([bbox[["Image Index", "Finding Label"]], coords], axis=1)
    for image, label, x, y, w, h in rows[~bad & bbox["Image Index"].isin(written)].itertuples(index=False):
        image_id = image.removesuffix(".png")
        key = (image_id, box_region(label, x, w))
        seen[key] = seen.get(key, 0) + 1
        out.setdefault(image, []).append(box_object(image_id, label, x, y, w, h, seen[key]))
    return out, rejected


# --- scene graphs -----------------------------------------------------------------------------------------

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

    def add(self, source: str, phrase: str, labels: list[_Label]) -> None:
        """One phrase; its labels may lie at several anatomies (No Finding), each gets the same phrase id."""
        by_anatomy: dict[str, list[_Label]] = {}
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


@dataclass
class _Context:
    no_finding: list[_Label]
    text: dict[str, _Label]
    google: dict[tuple[str, str], _Label]
    region_cuis: dict[str, list[str]]


def _context(vocab: Vocabulary) -> _Context:
    check_label_map(vocab)
    no_finding = [lab for labs in _no_finding_template(vocab).values() for lab in labs]
    text = {label: _label(vocab, t, "yes") for label, t in LABEL_MAP[SOURCE_TEXT].items()}
    google = {(label, value): _label(vocab, t, polarity) for label, t in LABEL_MAP[SOURCE_GOOGLE].items()
              for value, polarity in GOOGLE_POLARITY.items()}
    return _Context(no_finding, text, google, {n: list(r.cuis) for n, r in vocab.regions.items()})


def _text_labels(ctx: _Context, entries: _Entries, image: str, labels: str, rejected: list[Rejection]) -> None:
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


def _google_labels(ctx: _Context, entries: _Entries, image: str, values: dict[str, str],
                   rejected: list[Rejection]) -> None:
    for column, value in values.items():
        value = value.strip().upper()
        if value not in GOOGLE_POLARITY:
            rejected.append(Rejection(GOOGLE_MEMBER, image, column, f"value {value!r} is not YES or NO"))
            continue
        entries.add(SOURCE_GOOGLE, GOOGLE_PHRASE.format(label=column, value=value), [ctx.google[(column, value)]])


@lru_cache(maxsize=512)
def _date_fields(follow_up: int) -> tuple[str, int]:
    when = synthetic_study_datetime(follow_up)
    return when.strftime(DATETIME_FORMAT), int(when.strftime("%Y%m%d"))


def scene_graph_folder(out: Path, patient_id: int) -> Path:
    """``out/scene_graphs/<patient_id mod 100, 2 digits>``: keeps folders near 1,100 files each."""
    return out / "scene_graphs" / f"{patient_id % 100:02d}"


def _scene_graph(ctx: _Context, row: tuple, google: dict[str, str] | None, objects: list[dict],
                 rejected: list[Rejection]) -> dict:
    """The scene graph of one Data_Entry row (image, labels, pid, fu, age, gender, view)."""
    image, labels, pid, fu, age, gender, view = row
    image_id = image.removesuffix(".png")
    entries = _Entries(image_id, ctx.region_cuis)
    _text_labels(ctx, entries, image, labels, rejected)
    if google is not None:
        _google_labels(ctx, entries, image, google, rejected)
    return {
        "image_id": image_id, "viewpoint": view or None, "patient_id": str(pid), "study_id": image_id,
        "gender": gender or None, "age_decile": age_decile(age), "reason_for_exam": None,
        "StudyOrder": int(fu) + 1, "StudyDateTime": _date_fields(int(fu))[0], "StudyDateTime_is_synthetic": True,
        "objects": objects, "attributes": list(entries.entries.values()), "relationships": [],
    }


def convert_tables(tables: NIHTables, out: Path, limit_patients: int | None = None,
                   vocab: Vocabulary | None = None) -> NIHSummary:
    """Write the scene graphs, ``metadata.csv`` and ``README.md`` of ``tables`` under ``out`` (see the module
    docstring for the contract). Existing files of the same names are overwritten; others are left alone.

    Raises:
        ValueError: ``limit_patients`` < 1.
        VocabularyError: :data:`LABEL_MAP` names something the vocabulary lacks.
    """
    if limit_patients is not None and limit_patients < 1:
        raise ValueError(f"limit_patients must be >= 1, got {limit_patients}")
    ctx = _context(vocab or vocabulary())
    valid, studies, rejected = _studies(tables.data_entry, limit_patients)
    known, written = set(valid["Image Index"]), set(studies["Image Index"])
    google, google_rejected = _google_rows(tables.google, known, written)
    boxes, box_rejected = _boxes(tables.bbox, known, written)
    rejected += google_rejected + box_rejected

    out = Path(out)
    for pid in studies["pid"].unique():
        scene_graph_folder(out, int(pid)).mkdir(parents=True, exist_ok=True)
    summary = NIHSummary(out=out)
    metadata: list[tuple] = []
    columns = ["Image Index", "Finding Labels", "pid", "fu", "Patient Age", "Patient Gender", "View Position"]
    for row in studies[columns].itertuples(index=False, name=None):
        graph = _scene_graph(ctx, row, google.get(row[0]), boxes.get(row[0], []), rejected)
        summary.adjudicated_images += row[0] in google
        summary.boxes += len(graph["objects"])
        path = scene_graph_folder(out, int(row[2])) / f"{graph['image_id']}_SceneGraph.json"
        path.write_text(json.dumps(graph, separators=(",", ":")))
        metadata.append((graph["image_id"], graph["patient_id"], graph["study_id"], _date_fields(int(row[3]))[1],
                         0.0, row[6]))
    _write_metadata(out, metadata)
    write_readme(out)
    per_patient = studies.groupby("pid").size()
    summary.images, summary.patients = len(studies), len(per_patient)
    summary.longitudinal_patients = int((per_patient >= 2).sum())
    summary.rejections = rejected
    return summary


def _write_metadata(out: Path, rows: list[tuple]) -> None:
    frame = pd.DataFrame(rows, columns=["dicom_id", "subject_id", "study_id", "StudyDate", "StudyTime", "ViewPosition"])
    frame.to_csv(out / "metadata.csv", index=False)


def write_readme(out: Path) -> Path:
    """``out/README.md``: source, licence and attribution, what was converted how, and the date caveat."""
    text = f"""# NIH ChestX-ray14 as Chest ImaGenome-format scene graphs (written by `cxrkg datasets nih`)

**Dates are synthetic.** NIH gives no study dates, only each patient's follow-up order:
`StudyDateTime` = 2000-01-01 00:00:00 + {DAYS_PER_FOLLOW_UP} days x `Follow-up #`. Only the order is NIH's; intervals,
years and date ranges computed from these dates say nothing about real time.

## Source

`{DATA_ENTRY_MEMBER}`, `{BBOX_MEMBER}` and `{GOOGLE_MEMBER}` from the torchxrayvision 1.5.7 wheel on PyPI
(sha256 `{WHEEL_SHA256}`). No other member of the wheel was read.

## Licence and attribution

{ATTRIBUTION}

## Contents

- `scene_graphs/<patient id mod 100>/<image id>_SceneGraph.json`: one per image (= one study). Text-mined NIH labels
  are attributes with `"source": "{SOURCE_TEXT}"`, "No Finding" states every mapped finding absent; Google's
  adjudicated YES/NO labels are attributes with `"source": "{SOURCE_GOOGLE}"`; NIH's radiologist boxes are `objects`.
- `metadata.csv`: `dicom_id,subject_id,study_id,StudyDate,StudyTime,ViewPosition` (synthetic dates).

The mapping of NIH labels to the cxrkg vocabulary is `LABEL_MAP` in `graph/datasets/nih.py`.
"""
    path = Path(out) / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def convert_nih(out: Path, wheel: Path | None = None, limit_patients: int | None = None) -> NIHSummary:
    """Convert the NIH tables of the torchxrayvision wheel into scene graphs under ``out``.

    ``wheel`` None: the verified wheel of :func:`locate_wheel` (downloaded with pip into the IU cache).
    ``limit_patients``: only the N lowest patient ids. The full cohort writes 112,120 files (1.6 KB each on
    average, 180 MB; 450 MB on disk in 4 KB blocks) in about 14 s on 2 cores.

    Raises:
        DatasetUnavailable: the wheel or one of its NIH tables cannot be obtained or read.
        ValueError: ``limit_patients`` < 1.
    """
    return convert_tables(load_nih_tables(wheel), Path(out), limit_patients)
