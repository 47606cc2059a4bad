"""The Measurement rows both loaders write for a batch's images (graph/schema.yaml, label ``Measurement``).

Every image with at least one anatomy box gets its 12 measurements (:func:`graph.measurements.measure_image`),
measured from its original-pixel boxes and the metadata CSV's Rows and Columns; an image without anatomy boxes
gets none. A box that marks a finding (``finding_label``: NIH ChestX-ray14's 984 boxes, stored on the cardiac
silhouette or a lung) outlines where the finding lies, not the region's extent, so it is never measured.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping

from graph.longitudinal.derived_rows import check_keys
from graph.measurements.boxes import ImageSize
from graph.measurements.measure import Measurement, measure_image
from graph.records import ImageRecord, ParsedFile


def measurement_id(image_id: str, name: str) -> str:
    """The natural key of a Measurement: one measurement of one image (``"<image_id>|<name>"``)."""
    return f"{image_id}|{name}"


def image_size(image: ImageRecord) -> ImageSize | None:
    """The image's Rows and Columns (from the metadata CSV), or None when either is unknown."""
    return ImageSize(image.rows, image.columns) if image.rows and image.columns else None


def anatomy_boxes(image: ImageRecord) -> ImageRecord | None:
    """The image with its anatomy boxes only (those that mark no finding), or None when it has none."""
    if not image.objects:
        return None
    if all(b.finding_label is None for b in image.objects):
        return image
    kept = tuple(b for b in image.objects if b.finding_label is None)
    return replace(image, objects=kept) if kept else None


def measurement_row(m: Measurement, study_id: str, patient_id: str, view: str | None) -> dict[str, Any]:
    """One Measurement node's row: its key, the image's study, patient and view, and the measurement's
    fields, None where absent (Cypher's ``SET m = {...}`` leaves a null unset, and an import file writes an
    empty field). Every row has every key: the bulk load's writer takes full rows in one pass, where a row
    without some keys sends the whole batch to its slower path (the files stage measures every image)."""
    return {"measurement_id": measurement_id(m.image_id, m.name), "image_id": m.image_id, "study_id": study_id,
            "patient_id": patient_id, "view": view, "name": m.name, "task": m.task, "value": m.value,
            "threshold": m.threshold, "decision": m.decision, "direction": m.direction, "regions": list(m.regions),
            "method": m.method, "reason": m.reason, "note": m.note}


def measurement_rows(files: Iterable[ParsedFile], study_patient: Mapping[str, str]) -> list[dict[str, Any]]:
    """The Measurement rows of the images of ``files`` that have boxes.

    Args:
        files: parsed files (their images' ``objects``, ``view``, ``rows`` and ``columns``).
        study_patient: study id -> patient id, for every study of the files' images.

    Raises:
        graph.schema.SchemaError: a row the graph schema does not allow (a programming error: the
            measurements' words and graph/schema.yaml's ``values`` are kept in step by a test).
    """
    rows = [measurement_row(m, image.study_id, study_patient[image.study_id], image.view)
            for pf in files for image in pf.images if (anatomy := anatomy_boxes(image)) is not None
            for m in measure_image(anatomy, image_size(image))]
    check_keys("Measurement", rows)
    return rows
