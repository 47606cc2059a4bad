"""Chest ImaGenome ``objects[]`` boxes (docs/formats.md §1.3): the checks their types do not make, and their
records.

A box is stored when its region is a vocabulary region, no coordinate or size is negative and neither frame's
box is reversed (``x2 < x1`` or ``y2 < y1``); a zero-area box is accepted. Real Chest ImaGenome boxes include
negative coordinates (§1.3), so a bad box is rejected on its own (a record-level rejection naming
``objects[k].<field>``) and the rest of the scene graph loads.
"""

from __future__ import annotations

from typing import Any, Collection

from graph.records import BoundingBoxRecord, InputError, record_maker

BOX_FIELDS = ("x1", "y1", "x2", "y2", "width", "height", "original_x1", "original_y1", "original_x2",
              "original_y2", "original_width", "original_height")
_BOX_ORDER = (("x1", "x2"), ("y1", "y2"), ("original_x1", "original_x2"), ("original_y1", "original_y2"))
_box_record = record_maker(BoundingBoxRecord)  # BoundingBoxRecord(*values), made faster: a file has dozens


def check_region(name: str, regions: Collection[str], file: str, record: str, where: str) -> None:
    """Rejects a ``bbox_name`` that is not one of ``regions``.

    Raises:
        InputError: naming ``<where>.bbox_name``.
    """
    if name not in regions:
        raise InputError(file, record, f"{where}.bbox_name", f"unknown region {name!r}")


def check_box(obj: Any, file: str, record: str, where: str) -> None:
    """Rejects a negative coordinate or size, and a reversed box (in the 224 or the original frame); a field
    that is None (absent) is not checked.

    Raises:
        InputError: naming the first faulty field (``<where>.x2``) and the values.
    """
    for name in BOX_FIELDS:
        value = getattr(obj, name)
        if value is not None and value < 0:
            raise InputError(file, record, f"{where}.{name}", f"negative {name} {value}")
    for low, high in _BOX_ORDER:
        a, b = getattr(obj, low), getattr(obj, high)
        if a is not None and b is not None and b < a:
            raise InputError(file, record, f"{where}.{high}", f"reversed box: {high} {b} < {low} {a}")


def box_records(objects: list[Any], image: str, regions: Collection[str],
                file: str) -> tuple[tuple[BoundingBoxRecord, ...], list[InputError]]:
    """(the records of the boxes that can be stored, the faults of those that cannot), in one pass.

    Args:
        objects: the scene graph's ``objects[]`` entries as decoded (the model or its twin: the same attributes).
        image: the scene graph's ``image_id``; box ``k``'s id is ``"<image>|<k>"``.
        regions: the vocabulary's region names.
        file: the file's name in rejections.

    Returns:
        the boxes' records in the order of ``objects`` (the faulty ones left out), and one InputError per
        faulty box (:func:`check_region`, :func:`check_box`).

    A box of a known region with every number present, none negative and neither side reversed is taken at
    once (one chained comparison; an absent number makes it raise TypeError); any other is checked field by
    field, which names the fault, and taken if it passes (absent numbers are allowed).
    """
    boxes: list[BoundingBoxRecord] = []
    bad: list[InputError] = []
    for k, o in enumerate(objects):
        try:
            ok = (o.bbox_name in regions and 0 <= o.x1 <= o.x2 and 0 <= o.y1 <= o.y2 and o.width >= 0
                  and o.height >= 0 and 0 <= o.original_x1 <= o.original_x2 and 0 <= o.original_y1 <= o.original_y2
                  and o.original_width >= 0 and o.original_height >= 0)
        except TypeError:  # an absent (None) number: checked below
            ok = False
        if not ok:
            try:
                check_region(o.bbox_name, regions, file, image, f"objects[{k}]")
                check_box(o, file, image, f"objects[{k}]")
            except InputError as exc:
                bad.append(exc)
                continue
        boxes.append(_box_record(  # every BoundingBoxRecord field, in its order
            f"{image}|{k}", image, o.bbox_name, o.x1, o.y1, o.x2, o.y2, o.width, o.height, o.original_x1,
            o.original_y1, o.original_x2, o.original_y2, o.original_width, o.original_height, o.finding_label))
    return tuple(boxes), bad
