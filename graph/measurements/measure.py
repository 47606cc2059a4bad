"""An image's measurements: each formula's value rounded, the threshold of the image's view, the decision,
or the reason it cannot be given.

A decision compares the rounded value with the threshold, as CheXStruct does (``round(ctr, 2) >= 0.5``), so
a stored value and its decision always agree. Views: ``PA`` and ``AP`` get thresholds and decisions; any
other view (or none) gets the values only (``threshold`` and ``decision`` None, ``note`` says why), as
CheXStruct measures PA and AP films only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from graph.measurements import thresholds as th
from graph.measurements.boxes import (
    AORTIC_ARCH,
    CARDIAC_SILHOUETTE,
    LEFT_APICAL_ZONE,
    LEFT_CLAVICLE,
    LEFT_COSTOPHRENIC_ANGLE,
    LEFT_LUNG,
    RIGHT_APICAL_ZONE,
    RIGHT_CLAVICLE,
    RIGHT_COSTOPHRENIC_ANGLE,
    RIGHT_LUNG,
    SIZE_UNKNOWN,
    SPINE,
    TRACHEA,
    UNDEFINED,
    UPPER_MEDIASTINUM,
    Box,
    BoxFault,
    ImageBoxes,
    ImageSize,
)
from graph.measurements.formulas import (
    Undefined,
    aortic_knob_ratio,
    cardiothoracic_ratio,
    inclusion_margin,
    mediastinal_width_ratio,
    rotation_ratio,
    tracheal_deviation,
)
from graph.records import ImageRecord

METHOD = "box"
YES, NO = "yes", "no"
INCLUDED, MIXED, EXCLUDED = "included", "mixed", "excluded"
COMPLETE, CUT_OFF = "complete", "cut off"

# the measurements' names; TASKS: the CheXStruct diagnosis each one decides (the keys of CheXStruct's main.py)
CARDIOTHORACIC_RATIO = "cardiothoracic_ratio"
MEDIASTINAL_WIDTH_RATIO = "mediastinal_width_ratio"
TRACHEAL_DEVIATION = "tracheal_deviation"
AORTIC_KNOB_RATIO = "aortic_knob_ratio"
ROTATION_RATIO = "rotation_ratio"
INCLUSION = "inclusion"
TASKS = {CARDIOTHORACIC_RATIO: "cardiomegaly", MEDIASTINAL_WIDTH_RATIO: "mediastinal_widening",
         TRACHEAL_DEVIATION: "trachea_deviation", AORTIC_KNOB_RATIO: "aortic_knob_enlargement",
         ROTATION_RATIO: "rotation", INCLUSION: "inclusion"}
INCLUSION_PARTS = {  # part -> (its region, its threshold: below it the part is excluded)
    "apex_right": ((RIGHT_APICAL_ZONE,), th.INCLUSION_APEX), "apex_left": ((LEFT_APICAL_ZONE,), th.INCLUSION_APEX),
    "side_right": ((RIGHT_LUNG,), th.INCLUSION_SIDE), "side_left": ((LEFT_LUNG,), th.INCLUSION_SIDE),
    "bottom_right": ((RIGHT_COSTOPHRENIC_ANGLE,), th.INCLUSION_BOTTOM_EXCLUDED_BELOW),
    "bottom_left": ((LEFT_COSTOPHRENIC_ANGLE,), th.INCLUSION_BOTTOM_EXCLUDED_BELOW),
}
INCLUSION_REGIONS = (RIGHT_APICAL_ZONE, LEFT_APICAL_ZONE, RIGHT_LUNG, LEFT_LUNG, RIGHT_COSTOPHRENIC_ANGLE,
                     LEFT_COSTOPHRENIC_ANGLE)


@dataclass(frozen=True)
class Measurement:
    """One measurement of one image.

    Attributes:
        image_id: the image (``ImageRecord.image_id``).
        name: ``cardiothoracic_ratio``, ``mediastinal_width_ratio``, ``tracheal_deviation``,
            ``aortic_knob_ratio``, ``rotation_ratio``, ``inclusion`` (the summary) or ``inclusion_<part>``
            (``apex_right`` .. ``bottom_left``: one lung's margin at one border).
        task: the CheXStruct diagnosis the decision answers (``cardiomegaly``, ``mediastinal_widening``,
            ``trachea_deviation``, ``aortic_knob_enlargement``, ``rotation``, ``inclusion``).
        value: the ratio, rounded (2 decimals; inclusion margins 3), a dimensionless fraction; None when it
            cannot be computed, and for the inclusion summary.
        threshold: the threshold for the image's view (graph.measurements.thresholds), None for a view it
            does not cover and where CheXStruct has none (tracheal deviation, the inclusion summary).
        decision: ``yes`` / ``no`` (cardiomegaly, widening, deviation, enlargement, rotated); ``included`` /
            ``mixed`` / ``excluded`` (an inclusion part); ``complete`` / ``mixed`` / ``cut off`` (the summary);
            None without a value or outside PA / AP.
        regions: the Chest ImaGenome regions whose boxes it reads.
        reason: why there is no value (graph.measurements.boxes: ``box missing``, ``zero-area box``, ``box past
            the image``, ``reversed box``, ..., ``formula undefined``), else None.
        note: words for a reader: the region and numbers behind the reason, or why there is no threshold.
        direction: tracheal deviation only: the patient's side the trachea lies on (``left`` / ``right``).
        method: ``box`` (measured on anatomy boxes, not masks).
    """

    image_id: str
    name: str
    task: str
    value: float | None
    threshold: float | None
    decision: str | None
    regions: tuple[str, ...]
    reason: str | None = None
    note: str | None = None
    direction: str | None = None
    method: str = METHOD


def _faults(boxes: ImageBoxes, regions: tuple[str, ...]) -> tuple[list[Box], BoxFault | None]:
    """The regions' boxes in order, or the first region's fault."""
    found = []
    for region in regions:
        box = boxes.get(region)
        if isinstance(box, BoxFault):
            return [], box
        found.append(box)
    return found, None


class _Image:
    """The image being measured: its boxes, its view and the Measurement maker."""

    def __init__(self, image: ImageRecord, size: ImageSize | None):
        self.id = image.image_id
        self.boxes = ImageBoxes(image.objects, size)
        self.size = size
        self.view = th.frontal_view(image.view)
        self.view_note = None if self.view else f"no threshold for the view {image.view!r}"

    def without(self, name: str, task: str, regions: tuple[str, ...], reason: str, note: str) -> Measurement:
        return Measurement(self.id, name, task, None, None, None, regions, reason, note)

    def ratio(self, name: str, regions: tuple[str, ...], formula: Callable[..., float], threshold: float | None,
              below: bool = False) -> Measurement:
        """A ratio measurement: its boxes, its formula, rounded; ``yes`` when the value is at least the
        threshold (``below``: under it), frontal views only."""
        task = TASKS[name]
        found, fault = _faults(self.boxes, regions)
        if fault is not None:
            return self.without(name, task, regions, fault.reason, fault.words)
        try:
            value = round(formula(*found), th.DECIMALS)
        except Undefined as exc:
            return self.without(name, task, regions, UNDEFINED, str(exc))
        if self.view is None or threshold is None:
            return Measurement(self.id, name, task, value, None, None, regions, note=self.view_note)
        decision = YES if (value < threshold if below else value >= threshold) else NO
        return Measurement(self.id, name, task, value, threshold, decision, regions)


def _trachea(img: _Image) -> Measurement:
    regions = (TRACHEA, SPINE)
    found, fault = _faults(img.boxes, regions)
    if fault is not None:
        return img.without(TRACHEAL_DEVIATION, TASKS[TRACHEAL_DEVIATION], regions, fault.reason, fault.words)
    ratio, direction = tracheal_deviation(*found)
    decision = None if img.view is None else (NO if direction is None else YES)
    return Measurement(img.id, TRACHEAL_DEVIATION, TASKS[TRACHEAL_DEVIATION], round(ratio, th.DECIMALS), None,
                       decision, regions, note=img.view_note, direction=direction)


def _part_decision(part: str, value: float) -> str:
    if part.startswith("bottom"):
        if value < th.INCLUSION_BOTTOM_EXCLUDED_BELOW:
            return EXCLUDED
        return INCLUDED if value >= th.INCLUSION_BOTTOM_INCLUDED_FROM else MIXED
    return INCLUDED if value >= INCLUSION_PARTS[part][1] else EXCLUDED


def _inclusion_part(img: _Image, part: str) -> Measurement:
    """One part's margin from its own box: the box's fault, else ``image size unknown``, else the value."""
    name, task = f"{INCLUSION}_{part}", TASKS[INCLUSION]
    regions, threshold = INCLUSION_PARTS[part]
    box = img.boxes.get(regions[0])
    if isinstance(box, BoxFault):
        return img.without(name, task, regions, box.reason, box.words)
    if img.size is None:
        return img.without(name, task, regions, SIZE_UNKNOWN, "inclusion needs the image's Rows and Columns")
    value = round(inclusion_margin(part, box, img.size), th.INCLUSION_DECIMALS)
    if img.view is None:
        return Measurement(img.id, name, task, value, None, None, regions, note=img.view_note)
    return Measurement(img.id, name, task, value, threshold, _part_decision(part, value), regions)


def _inclusion(img: _Image) -> list[Measurement]:
    """The six parts and the summary: ``cut off`` when a part is excluded, else ``mixed`` when a bottom is in
    the mixed band, else ``complete``; a part without a value gives the summary its reason."""
    parts = [_inclusion_part(img, part) for part in INCLUSION_PARTS]
    missing = next((p for p in parts if p.value is None), None)
    if missing is not None:
        return parts + [img.without(INCLUSION, TASKS[INCLUSION], INCLUSION_REGIONS, missing.reason or "",
                                    f"{missing.name}: {missing.note}")]
    decisions = {_part_decision(p.name.removeprefix(f"{INCLUSION}_"), p.value) for p in parts if p.value is not None}
    summary = CUT_OFF if EXCLUDED in decisions else MIXED if MIXED in decisions else COMPLETE
    return parts + [Measurement(img.id, INCLUSION, TASKS[INCLUSION], None, None, summary if img.view else None,
                                INCLUSION_REGIONS, note=img.view_note)]


def measure_image(image: ImageRecord, size: ImageSize | None = None) -> tuple[Measurement, ...]:
    """Every measurement of one image from its anatomy boxes, in a fixed order: cardiothoracic ratio,
    mediastinal width ratio, tracheal deviation, aortic knob ratio, rotation ratio, the six inclusion parts,
    the inclusion summary (12 in all, whatever the boxes: a measurement that cannot be given names its reason).

    Args:
        image: the image, its ``view`` and ``objects`` (boxes in original pixels).
        size: the image's Rows and Columns, or None (inclusion then has the reason ``image size unknown``,
            and a box past the right or bottom border is only found when it leaves the 224 frame).

    >>> from graph.records import BoundingBoxRecord as B
    >>> boxes = (B("i|0", "i", "cardiac silhouette", 0, 0, 1, 1, original_x1=380, original_y1=500,
    ...            original_x2=660, original_y2=800),
    ...          B("i|1", "i", "right lung", 0, 0, 1, 1, original_x1=100, original_y1=100, original_x2=480,
    ...            original_y2=900),
    ...          B("i|2", "i", "left lung", 0, 0, 1, 1, original_x1=520, original_y1=100, original_x2=900,
    ...            original_y2=900))
    >>> ctr = measure_image(ImageRecord("i", "s", "PA", objects=boxes))[0]
    >>> ctr.value, ctr.threshold, ctr.decision
    (0.35, 0.5, 'no')
    >>> measure_image(ImageRecord("i", "s", "PA"))[0].reason
    'box missing'
    """
    img = _Image(image, size)
    return (
        img.ratio(CARDIOTHORACIC_RATIO, (CARDIAC_SILHOUETTE, RIGHT_LUNG, LEFT_LUNG), cardiothoracic_ratio,
                  th.view_threshold(th.CARDIOMEGALY, img.view)),
        img.ratio(MEDIASTINAL_WIDTH_RATIO, (UPPER_MEDIASTINUM, RIGHT_LUNG, LEFT_LUNG), mediastinal_width_ratio,
                  th.view_threshold(th.MEDIASTINAL_WIDENING, img.view)),
        _trachea(img),
        img.ratio(AORTIC_KNOB_RATIO, (AORTIC_ARCH, TRACHEA), aortic_knob_ratio, th.AORTIC_KNOB_ENLARGEMENT),
        img.ratio(ROTATION_RATIO, (RIGHT_CLAVICLE, LEFT_CLAVICLE, SPINE), rotation_ratio, th.ROTATION, below=True),
        *_inclusion(img),
    )
