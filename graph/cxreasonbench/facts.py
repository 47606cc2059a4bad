"""An image's stored measurements and anatomy boxes, as the CXReasonBench-style items read them.

From the graph: the Measurement nodes the loaders write for every image with an anatomy box
(``(:Image)-[:HAS_MEASUREMENT]->(:Measurement)``, graph.measurements) and the image's Chest ImaGenome boxes in
original pixels, one read per :data:`BATCH_PATIENTS` patients
(:data:`graph.store.cxreasonbench_statements.IMAGE_MEASUREMENTS`). From records (no graph):
:func:`from_records` measures an image with :func:`graph.measurements.measure_image`, as the loaders do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from graph.measurements import ImageSize, measure_image
from graph.measurements.rows import measurement_id
from graph.records import ImageRecord
from graph.store import cxreasonbench_statements as cs
from graph.store.read_statements import PATIENT_IDS
from graph.store.reads import Reader

BATCH_PATIENTS = 1000
"""Patients per read."""


@dataclass(frozen=True)
class StoredMeasurement:
    """One Measurement node: key ``"<image_id>|<name>"``, name and task (graph.measurements ``Measurement``),
    the rounded value, the view's threshold, the decision (None without a value or outside PA / AP), the
    deviated trachea's side, the regions read and the reason there is no value."""

    measurement_id: str
    name: str
    task: str
    value: float | None
    threshold: float | None
    decision: str | None
    direction: str | None
    regions: tuple[str, ...]
    reason: str | None


@dataclass(frozen=True)
class OriginalBox:
    """A Chest ImaGenome box in the image's original pixels: id, region, corners."""

    bbox_id: str
    region: str
    x1: int
    y1: int
    x2: int
    y2: int

    @property
    def corners(self) -> str:
        """``"(x1, y1, x2, y2)"``, as a body-part option shows it."""
        return f"({self.x1}, {self.y1}, {self.x2}, {self.y2})"


@dataclass
class ImageMeasurements:
    """One image's measurements by name and its boxes with original corners by region (a region with two
    boxes keeps neither: the measurements do not read it either)."""

    image_id: str
    study_id: str
    patient_id: str
    view: str | None
    measurements: dict[str, StoredMeasurement] = field(default_factory=dict)
    boxes: dict[str, OriginalBox] = field(default_factory=dict)


def _boxes(boxes: list[OriginalBox]) -> dict[str, OriginalBox]:
    count: dict[str, int] = {}
    for b in boxes:
        count[b.region] = count.get(b.region, 0) + 1
    return {b.region: b for b in sorted(boxes, key=lambda b: b.region) if count[b.region] == 1}


def from_records(image: ImageRecord, patient_id: str, size: ImageSize | None = None) -> ImageMeasurements:
    """An image's measurements computed as the loaders store them (``measure_image(image, size)``)."""
    stored = {m.name: StoredMeasurement(measurement_id(image.image_id, m.name), m.name, m.task, m.value, m.threshold,
                                        m.decision, m.direction, m.regions, m.reason)
              for m in measure_image(image, size)}
    boxes = [OriginalBox(b.bbox_id, b.bbox_name, *(int(c) for c in corners if c is not None)) for b in image.objects
             if None not in (corners := (b.original_x1, b.original_y1, b.original_x2, b.original_y2))]
    return ImageMeasurements(image.image_id, image.study_id, patient_id, image.view, stored, _boxes(boxes))


def _image(row: dict[str, Any]) -> ImageMeasurements:
    stored = {}
    for mid, name, task, value, threshold, decision, direction, regions, reason in row["measurements"]:
        stored[name] = StoredMeasurement(mid, name, task, value, threshold, decision, direction,
                                         tuple(regions or ()), reason)
    boxes = [OriginalBox(str(i), r, *map(int, corners)) for i, r, *corners in row["boxes"] if None not in corners]
    return ImageMeasurements(str(row["image_id"]), str(row["study_id"]), str(row["patient_id"]), row["view"],
                             {k: stored[k] for k in sorted(stored)}, _boxes(boxes))


def iter_image_measurements(reader: Reader, patient_ids: list[str] | None = None) -> Iterator[ImageMeasurements]:
    """The measured images of the given patients (default: every patient), ordered by (patient id, study id,
    image id)."""
    ids = sorted(set(map(str, patient_ids))) if patient_ids is not None else \
        [str(r["patient_id"]) for r in reader.read(PATIENT_IDS)]
    for k in range(0, len(ids), BATCH_PATIENTS):
        rows = reader.read(cs.IMAGE_MEASUREMENTS, patient_ids=ids[k:k + BATCH_PATIENTS])
        yield from sorted((_image(r) for r in rows), key=lambda i: (i.patient_id, i.study_id, i.image_id))
