"""NIH ChestX-ray14 as Chest ImaGenome-format scene graphs plus a metadata CSV (``cxrkg datasets nih``).

Sources. Three tables inside the torchxrayvision 1.5.7 wheel on PyPI, fetched and checked by
:func:`graph.datasets.wheel.fetch_wheel` (sha256 :data:`graph.datasets.wheel.WHEEL_SHA256`); only the members in
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

Where it is implemented: :mod:`~graph.datasets.nih.tables` (reading and checking the wheel's tables),
:mod:`~graph.datasets.nih.labels` (:data:`LABEL_MAP` and the statements each label makes),
:mod:`~graph.datasets.nih.dates` (synthetic dates), :mod:`~graph.datasets.nih.rows` (which Data_Entry and
Google rows are written or rejected), :mod:`~graph.datasets.nih.boxes` (boxes as ``objects``),
:mod:`~graph.datasets.nih.scene_graphs` (one image's scene graph) and :mod:`~graph.datasets.nih.write` (the
files). This module is their public face: other code imports from here.
"""

from __future__ import annotations

from pathlib import Path

from graph.datasets.nih.boxes import FRAME_224, PNG_SIZE, box_object, box_region
from graph.datasets.nih.dates import (
    DATETIME_FORMAT,
    DAYS_PER_FOLLOW_UP,
    SYNTHETIC_DATES_NOTE,
    SYNTHETIC_EPOCH,
    synthetic_study_datetime,
)
from graph.datasets.nih.labels import (
    GOOGLE_POLARITY,
    LABEL_MAP,
    NO_FINDING,
    SOURCE_GOOGLE,
    SOURCE_TEXT,
    Target,
    check_label_map,
)
from graph.datasets.nih.scene_graphs import (
    GOOGLE_PHRASE,
    MAX_AGE,
    SECTION,
    TEXT_PHRASE,
    age_decile,
    scene_graph_folder,
)
from graph.datasets.nih.tables import (
    BBOX_COLUMNS,
    BBOX_MEMBER,
    DATA_ENTRY_COLUMNS,
    DATA_ENTRY_MEMBER,
    GOOGLE_COLUMNS,
    GOOGLE_MEMBER,
    NIH_MEMBERS,
    DatasetUnavailable,
    NIHTables,
    load_nih_tables,
    locate_wheel,
    read_tables,
)
from graph.datasets.nih.write import ATTRIBUTION, NIHSummary, convert_tables, write_readme
from graph.datasets.wheel import WHEEL_NAME, WHEEL_SHA256

__all__ = [
    "ATTRIBUTION", "BBOX_COLUMNS", "BBOX_MEMBER", "DATA_ENTRY_COLUMNS", "DATA_ENTRY_MEMBER", "DATETIME_FORMAT",
    "DAYS_PER_FOLLOW_UP", "FRAME_224", "GOOGLE_COLUMNS", "GOOGLE_MEMBER", "GOOGLE_PHRASE", "GOOGLE_POLARITY",
    "LABEL_MAP", "MAX_AGE", "NIH_MEMBERS", "NO_FINDING", "PNG_SIZE", "SECTION", "SOURCE_GOOGLE", "SOURCE_TEXT",
    "SYNTHETIC_DATES_NOTE", "SYNTHETIC_EPOCH", "TEXT_PHRASE", "WHEEL_NAME", "WHEEL_SHA256", "DatasetUnavailable",
    "NIHSummary", "NIHTables", "Target", "age_decile", "box_object", "box_region", "check_label_map", "convert_nih",
    "convert_tables", "load_nih_tables", "locate_wheel", "read_tables", "scene_graph_folder",
    "synthetic_study_datetime", "write_readme",
]


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
