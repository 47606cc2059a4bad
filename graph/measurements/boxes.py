"""The anatomy boxes a measurement reads, in original pixels, or the reason one cannot be read.

Boxes are Chest ImaGenome ``objects[]`` entries as :class:`graph.records.BoundingBoxRecord` holds them
(docs/formats.md §1.3). Measurements read the ``original_x1`` .. ``original_y2`` corners: the 224 x 224 frame
is the image resized and padded, and its whole-pixel corners would move a ratio by up to about 1 % (half a
pixel on a 100-pixel width), enough to change a 2-decimal value. A box without original corners is therefore
a reason, not a fall-back. Widths and heights are recomputed from the corners (``x2 - x1``), not read from
``original_width``.

Image axes as in the file: x grows to the viewer's right, y downwards; on a frontal film the patient's right
is on the viewer's left, so the right lung's box has the smaller x.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from graph.records import BoundingBoxRecord

# The Chest ImaGenome regions (vocabulary names, graph/vocab/chest_xray.yaml) the measurements read.
CARDIAC_SILHOUETTE = "cardiac silhouette"
UPPER_MEDIASTINUM = "upper mediastinum"
TRACHEA = "trachea"
SPINE = "spine"
AORTIC_ARCH = "aortic arch"
RIGHT_CLAVICLE = "right clavicle"
LEFT_CLAVICLE = "left clavicle"
RIGHT_LUNG = "right lung"
LEFT_LUNG = "left lung"
RIGHT_APICAL_ZONE = "right apical zone"
LEFT_APICAL_ZONE = "left apical zone"
RIGHT_COSTOPHRENIC_ANGLE = "right costophrenic angle"
LEFT_COSTOPHRENIC_ANGLE = "left costophrenic angle"
REGIONS = (CARDIAC_SILHOUETTE, UPPER_MEDIASTINUM, TRACHEA, SPINE, AORTIC_ARCH, RIGHT_CLAVICLE, LEFT_CLAVICLE,
           RIGHT_LUNG, LEFT_LUNG, RIGHT_APICAL_ZONE, LEFT_APICAL_ZONE, RIGHT_COSTOPHRENIC_ANGLE,
           LEFT_COSTOPHRENIC_ANGLE)

# Why a box cannot be read (a measurement's ``reason``); the words beside it name the region and the numbers.
MISSING = "box missing"
DUPLICATE = "box repeated"
NO_ORIGINAL = "no original-pixel box"
REVERSED = "reversed box"
ZERO_AREA = "zero-area box"
PAST_IMAGE = "box past the image"
SIZE_UNKNOWN = "image size unknown"
UNDEFINED = "formula undefined"

FRAME_224 = 224  # the side of Chest ImaGenome's resized and padded square frame


@dataclass(frozen=True)
class ImageSize:
    """An image's size in original pixels: DICOM ``Rows`` (height) and ``Columns`` (width), as the
    MIMIC-CXR-JPG metadata table gives them."""

    rows: int
    columns: int


@dataclass(frozen=True)
class Box:
    """One region's box in original pixels: corners ``x1 <= x2``, ``y1 <= y2``, both sides positive."""

    region: str
    x1: int
    y1: int
    x2: int
    y2: int

    @property
    def width(self) -> int:
        return self.x2 - self.x1

    @property
    def height(self) -> int:
        return self.y2 - self.y1

    @property
    def centre_x(self) -> float:
        return (self.x1 + self.x2) / 2


@dataclass(frozen=True)
class BoxFault:
    """Why a region's box cannot be measured: ``reason`` (one of this module's reasons) and ``words``
    (the region and the numbers, for a reader)."""

    region: str
    reason: str
    words: str


def _by_region(objects: Iterable[BoundingBoxRecord]) -> dict[str, list[BoundingBoxRecord]]:
    found: dict[str, list[BoundingBoxRecord]] = {}
    for box in objects:
        found.setdefault(box.bbox_name, []).append(box)
    return found


class ImageBoxes:
    """An image's boxes by region, each checked once on first use.

    Args:
        objects: the image's boxes (``ImageRecord.objects``), in any order.
        size: the image's size in original pixels, or None when it is not known: a box is then checked
            against the top and left borders and against the 224 frame only.
    """

    def __init__(self, objects: Iterable[BoundingBoxRecord], size: ImageSize | None = None):
        self.size = size
        self._records = _by_region(objects)
        self._checked: dict[str, Box | BoxFault] = {}

    def get(self, region: str) -> Box | BoxFault:
        """The region's box, or the fault that keeps it from being measured (the first that applies: missing,
        repeated, no original corners, reversed, zero area, past the image)."""
        if region not in self._checked:
            self._checked[region] = self._check(region)
        return self._checked[region]

    def _check(self, region: str) -> Box | BoxFault:
        records = self._records.get(region, [])
        if not records:
            return BoxFault(region, MISSING, f"no {region} box")
        if len(records) > 1:
            return BoxFault(region, DUPLICATE, f"{len(records)} {region} boxes")
        r = records[0]
        x1, y1, x2, y2 = r.original_x1, r.original_y1, r.original_x2, r.original_y2
        if x1 is None or y1 is None or x2 is None or y2 is None:
            return BoxFault(region, NO_ORIGINAL, f"the {region} box has no original_x1 .. original_y2")
        if x2 < x1 or y2 < y1:
            return BoxFault(region, REVERSED, f"the {region} box is reversed: ({x1}, {y1}) to ({x2}, {y2})")
        if x2 == x1 or y2 == y1:
            return BoxFault(region, ZERO_AREA, f"the {region} box has zero area: ({x1}, {y1}) to ({x2}, {y2})")
        past = self._past(r, x1, y1, x2, y2)
        if past:
            return BoxFault(region, PAST_IMAGE, f"the {region} box is past the image: {past}")
        return Box(region, x1, y1, x2, y2)

    def _past(self, r: BoundingBoxRecord, x1: int, y1: int, x2: int, y2: int) -> str:
        """Which border the box crosses ('' for none): the image's, where its size is known, and always
        the top and left borders and the 224 frame's square (a box past the square is past the image)."""
        if x1 < 0 or y1 < 0:
            return f"original_x1 {x1}, original_y1 {y1} (negative)"
        if self.size is not None and (x2 > self.size.columns or y2 > self.size.rows):
            return (f"original_x2 {x2}, original_y2 {y2} beyond Columns {self.size.columns}, "
                    f"Rows {self.size.rows}")
        if r.x1 < 0 or r.y1 < 0 or r.x2 > FRAME_224 or r.y2 > FRAME_224:
            return f"x1 .. y2 ({r.x1}, {r.y1}) to ({r.x2}, {r.y2}) outside the 224 x 224 frame"
        return ""
