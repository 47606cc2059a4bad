"""Writes a converted NIH cohort: one scene-graph file per image, ``metadata.csv`` and ``README.md``.

The folder layout and file contents are the contract in :mod:`graph.datasets.nih.convert`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graph.datasets.nih.boxes import boxes_by_image
from graph.datasets.nih.dates import DAYS_PER_FOLLOW_UP, study_date_fields
from graph.datasets.nih.labels import SOURCE_GOOGLE, SOURCE_TEXT, conversion_vocabulary
from graph.datasets.nih.rows import google_rows, select_studies
from graph.datasets.nih.scene_graphs import scene_graph, scene_graph_folder
from graph.datasets.nih.tables import BBOX_MEMBER, DATA_ENTRY_MEMBER, GOOGLE_MEMBER, NIHTables
from graph.datasets.wheel import WHEEL_SHA256
from graph.records import Rejection
from graph.vocabulary import Vocabulary, vocabulary

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


@dataclass
class NIHSummary:
    """What :func:`convert_tables` (and so :func:`graph.datasets.nih.convert.convert_nih`) wrote: counts of written
    images (= studies = files), patients, patients with >= 2 written studies, boxes, images with adjudicated
    labels, and the rejected rows."""

    out: Path
    images: int = 0
    patients: int = 0
    longitudinal_patients: int = 0
    boxes: int = 0
    adjudicated_images: int = 0
    rejections: list[Rejection] = field(default_factory=list)


def convert_tables(tables: NIHTables, out: Path, limit_patients: int | None = None,
                   vocab: Vocabulary | None = None) -> NIHSummary:
    """Write the scene graphs, ``metadata.csv`` and ``README.md`` of ``tables`` under ``out`` (the contract is
    in :mod:`graph.datasets.nih.convert`). Existing files of the same names are overwritten; others are left alone.

    Raises:
        ValueError: ``limit_patients`` < 1.
        VocabularyError: :data:`~graph.datasets.nih.labels.LABEL_MAP` names something the vocabulary lacks.
    """
    if limit_patients is not None and limit_patients < 1:
        raise ValueError(f"limit_patients must be >= 1, got {limit_patients}")
    ctx = conversion_vocabulary(vocab or vocabulary())
    valid, studies, rejected = select_studies(tables.data_entry, limit_patients)
    known, written = set(valid["Image Index"]), set(studies["Image Index"])
    google, google_rejected = google_rows(tables.google, known, written)
    boxes, box_rejected = boxes_by_image(tables.bbox, known, written)
    rejected += google_rejected + box_rejected

    out = Path(out)
    for pid in studies["pid"].unique():
        scene_graph_folder(out, int(pid)).mkdir(parents=True, exist_ok=True)
    summary = NIHSummary(out=out)
    metadata: list[tuple] = []
    columns = ["Image Index", "Finding Labels", "pid", "fu", "Patient Age", "Patient Gender", "View Position"]
    for row in studies[columns].itertuples(index=False, name=None):
        graph = scene_graph(ctx, row, google.get(row[0]), boxes.get(row[0], []), rejected)
        summary.adjudicated_images += row[0] in google
        summary.boxes += len(graph["objects"])
        path = scene_graph_folder(out, int(row[2])) / f"{graph['image_id']}_SceneGraph.json"
        path.write_text(json.dumps(graph, separators=(",", ":")))
        metadata.append((graph["image_id"], graph["patient_id"], graph["study_id"],
                         study_date_fields(int(row[3]))[1], 0.0, row[6]))
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

The mapping of NIH labels to the cxrkg vocabulary is `LABEL_MAP` in `graph/datasets/nih/convert.py`.
"""
    path = Path(out) / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path

