"""CheXStruct's measurements as formulas over anatomy boxes (original pixels; x to the viewer's right, y down).

Each formula names its CheXStruct counterpart (``CheXStruct/preprocessor/<file>.py``, the function; the
public copy in github.com/ase12345636/NTNU-1141-Machine-Learning-Project at 4805ad58, under ``evaluate/``)
and how the box version differs from the mask version. What holds for all of them: CheXStruct measures on
CXAS segmentation masks, row by row, and keeps a value only when its quality checks pass (mask against Chest
ImaGenome box overlap, lung width balance, position ranges); a box is one rectangle per region, so a box's
width is the mask's maximum width (its full horizontal extent, which is its widest row's when the outline does
not lean), a row-level width (the mediastinum's widest row, the trachea's median row) is not available, and
none of the mask checks can be made. A formula returns the
unrounded value; rounding and thresholds are :mod:`graph.measurements.measure`'s.

Raises (every formula): :class:`Undefined` when the boxes' geometry leaves the formula without meaning (a
width that is not positive, a clavicle past the midline): the measurement then names that reason.
"""

from __future__ import annotations

from graph.measurements.boxes import Box, ImageSize


class Undefined(Exception):
    """The boxes are readable but the formula has no value for them; the message says why."""


def _positive(value: float, what: str) -> float:
    if value <= 0:
        raise Undefined(f"{what} is {value:g} pixels, not positive")
    return value


def thoracic_width(right_lung: Box, left_lung: Box) -> int:
    """The thoracic width: from the right lung's outer edge (its box's ``x1``) to the left lung's (``x2``).

    Raises:
        Undefined: the width is not positive (the lungs' boxes swapped or disjoint the wrong way round).
    """
    return int(_positive(left_lung.x2 - right_lung.x1, "the thoracic width (left lung x2 - right lung x1)"))


def cardiothoracic_ratio(heart: Box, right_lung: Box, left_lung: Box) -> float:
    """Cardiac silhouette width over thoracic width: ``heart.width / (left_lung.x2 - right_lung.x1)``.

    CheXStruct: ``cardiomegaly.py``, ``extract_cardiomegaly`` (``ctr = heart_width / lung_width``): the heart
    mask's widest connected part (``select_max_width_mask``, ``xmax - xmin``) over the x extent of the two lung
    masks below the heart's top row. Box version: the Chest ImaGenome ``cardiac silhouette`` box's width (the
    mask's maximum width, and CheXStruct only compares this box with its mask, IoU at least 0.5) over the
    lungs' boxes' extent at any height, which is at least the extent below the heart's top: the box ratio is at
    most the mask ratio for the same outlines.
    """
    return heart.width / thoracic_width(right_lung, left_lung)


def mediastinal_width_ratio(mediastinum: Box, right_lung: Box, left_lung: Box) -> float:
    """Upper mediastinum width over thoracic width: ``mediastinum.width / (left_lung.x2 - right_lung.x1)``.

    CheXStruct: ``mediastinal_widening.py``, ``extract_mw`` (``mcr = medi_width / lung_width``): the upper
    mediastinum mask's widest row, and the lungs' extent (right lung's leftmost to left lung's rightmost pixel)
    on that same row. Box version: the ``upper mediastinum`` box's width (at least the widest row's, at no
    known row) over the lungs' boxes' full extent (at least their extent on that row, the lungs being narrower
    near the apices): both terms grow, so the box ratio can fall on either side of the mask ratio.
    """
    return mediastinum.width / thoracic_width(right_lung, left_lung)


def tracheal_deviation(trachea: Box, spine: Box) -> tuple[float, str | None]:
    """(ratio, direction): where the trachea lies against the spine's centre line ``spine.centre_x``.

    The direction is the patient's side the whole trachea lies on (``"left"``: its box starts right of the
    line on the image, ``trachea.x1 > centre``; ``"right"``: ``trachea.x2 < centre``), or None when the line
    crosses the box. The ratio: for a deviated trachea, the gap between the line and the box over the distance
    from the line to the box's far edge (``(x1 - c) / (x2 - c)``, or ``(c - x2) / (c - x1)``); otherwise the
    smaller of the two distances from the line to the box's edges over the larger (1 = centred).

    CheXStruct: ``trachea_deviation.py``, ``extract_trachea_deviation``: the midline is a line fitted through
    the T1-T7 vertebrae's spinous-process points (``extract_meta_midline`` in ``rotation.py``); on each row
    of the trachea mask (the lower three quarters above the carina) the same three cases give a label and a
    ratio, and the label of 9 evenly spaced rows decides (``MD_RANGES['Trachea_Deviation']`` is empty: no
    threshold). Box version: one row only, the box's extremes over all rows, and a vertical midline through
    the ``spine`` box's centre: a trachea that bends across the line counts as not deviated.
    """
    c = spine.centre_x
    if trachea.x1 > c:
        return (trachea.x1 - c) / (trachea.x2 - c), "left"
    if trachea.x2 < c:
        return (c - trachea.x2) / (c - trachea.x1), "right"
    to_right, to_left = c - trachea.x1, trachea.x2 - c  # to the box's edges on the patient's right and left
    return min(to_right, to_left) / max(to_right, to_left), None


def aortic_knob_ratio(arch: Box, trachea: Box) -> float:
    """Aortic knob width over tracheal width: ``(arch.x2 - trachea.x2) / trachea.width``.

    CheXStruct: ``enlarged_aortic_knob.py``, ``extract_enlarged_aortic_knob``: from the mean of the trachea
    mask's rightmost pixels (rows beside the aortic arch) to the further of the aortic arch's and the upper
    descending aorta's rightmost pixel, over the trachea's median row width (``trachea.py``,
    ``calculate_median_width``). Box version: from the ``trachea`` box's right edge (its rightmost pixel over
    every row, not the mean beside the arch) to the ``aortic arch`` box's, over the trachea box's width (at
    least its widest row's, not the median row's); the descending aorta is not read. For the same outlines
    the box ratio is at most the mask ratio.

    Raises:
        Undefined: the arch's box does not reach past the trachea's (CheXStruct requires a positive width).
    """
    knob = _positive(arch.x2 - trachea.x2, "the aortic knob width (aortic arch x2 - trachea x2)")
    return knob / trachea.width


def rotation_ratio(right_clavicle: Box, left_clavicle: Box, spine: Box) -> float:
    """The smaller over the larger distance from each clavicle's medial end to the spine's centre line.

    Distances: ``centre - right_clavicle.x2`` and ``left_clavicle.x1 - centre``, with ``centre =
    spine.centre_x``; 1 is a film without rotation.

    CheXStruct: ``rotation.py``, ``extract_rotation``: each clavicle mask's medial end point
    (``extract_meta_clavicle``) against the midline fitted through the spinous processes of the vertebrae at
    the clavicles' heights (``extract_meta_midline``, ``least_squares_fit_vertical``), the ratio the smaller
    distance over the larger, kept when both are non-negative. Box version: each ``clavicle`` box's inner
    edge (the medial end's x, at no known height) and a vertical line through the ``spine`` box's centre.

    Raises:
        Undefined: a clavicle's inner edge lies past the centre line (a negative distance), or both lie on it.
    """
    c = spine.centre_x
    right, left = c - right_clavicle.x2, left_clavicle.x1 - c
    if right < 0 or left < 0:
        raise Undefined(f"a clavicle's medial edge is past the spine's centre (distances {right:g}, {left:g})")
    if max(right, left) == 0:
        raise Undefined("both clavicles' medial edges are on the spine's centre")
    return min(right, left) / max(right, left)


def inclusion_margin(part: str, box: Box, size: ImageSize) -> float:
    """One lung's margin to one image border, as a fraction of the image's extent across that border.

    Args:
        part: ``apex_right`` / ``apex_left`` (the ``apical zone`` box's top: ``y1 / Rows``), ``side_right``
            (the ``right lung`` box's outer edge: ``x1 / Columns``), ``side_left`` (``(Columns - x2) /
            Columns``), ``bottom_right`` / ``bottom_left`` (the ``costophrenic angle`` box's bottom:
            ``(Rows - y2) / Rows``).
        box: that part's box.
        size: the image's Rows and Columns.

    CheXStruct: ``inclusion.py``, ``extract_inclusion`` (``extract_apex``, ``extract_side``,
    ``extract_bottom``): the lung mask's top point, outermost point (without the hemidiaphragm) and lowest
    lateral point, each distance measured to the first non-black pixel of the film along that column or row,
    over the film's non-black extent there. Box version: distances to the image's borders over its full
    height or width (a black border, a collimator edge or burnt-in label, is counted as film), and no check
    that the two sides' points are level.

    Raises:
        KeyError: ``part`` is none of the six.
    """
    if part in ("apex_right", "apex_left"):
        return box.y1 / size.rows
    if part in ("bottom_right", "bottom_left"):
        return (size.rows - box.y2) / size.rows
    if part == "side_right":
        return box.x1 / size.columns
    if part == "side_left":
        return (size.columns - box.x2) / size.columns
    raise KeyError(part)
