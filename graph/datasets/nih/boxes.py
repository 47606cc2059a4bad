"""NIH's radiologist boxes (BBox_List_2017) as Chest ImaGenome ``objects`` entries.

Coordinates in BBox_List are x, y, w, h in pixels of the 1024x1024 PNGs NIH released; Chest ImaGenome's
``x1..y2`` frame is 224x224 (docs/formats.md §1.3). The layout of an entry is the contract in
:mod:`graph.datasets.nih.convert`.
"""

from __future__ import annotations

import math

import pandas as pd

from graph.datasets.nih.rows import reject_rows
from graph.datasets.nih.tables import BBOX_MEMBER
from graph.records import Rejection

PNG_SIZE = 1024  # BBox_List coordinates are pixels of the 1024x1024 PNGs NIH released
FRAME_224 = 224  # Chest ImaGenome's x1..y2 frame (docs/formats.md §1.3)


def _half_up(value: float) -> int:
    # round() rounds halves to even; pixel corners round half up, as image tools do
    return int(math.floor(value + 0.5))


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


def boxes_by_image(bbox: pd.DataFrame, known: set[str],
                   written: set[str]) -> tuple[dict[str, list[dict]], list[Rejection]]:
    """The ``objects`` of each written image (Image Index -> entries, numbered per region in table order)
    and the rejected rows: coordinates that are not numbers >= 0 (for images written or unknown), images
    that are not in Data_Entry (``known``)."""
    coords = bbox[["x", "y", "w", "h"]].apply(lambda c: pd.to_numeric(c.str.strip(), errors="coerce"))
    bad = coords.isna().any(axis=1) | (coords["w"] < 0) | (coords["h"] < 0)
    unknown = ~bbox["Image Index"].isin(known)
    # rows of images outside a --patients selection are not this run's business, unless no image has them
    in_scope = unknown | bbox["Image Index"].isin(written)
    rejected = reject_rows(bbox[bad & in_scope], BBOX_MEMBER, "Bbox [x,y,w,h]", "box coordinates are not numbers >= 0")
    rejected += reject_rows(bbox[unknown & ~bad], BBOX_MEMBER, "Image Index", "image is not in Data_Entry_2017_v2020")
    out: dict[str, list[dict]] = {}
    seen: dict[tuple[str, str], int] = {}
    rows = pd.concat([bbox[["Image Index", "Finding Label"]], coords], axis=1)
    for image, label, x, y, w, h in rows[~bad & bbox["Image Index"].isin(written)].itertuples(index=False):
        image_id = image.removesuffix(".png")
        key = (image_id, box_region(label, x, w))
        seen[key] = seen.get(key, 0) + 1
        out.setdefault(image, []).append(box_object(image_id, label, x, y, w, h, seen[key]))
    return out, rejected

