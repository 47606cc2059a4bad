"""CheXStruct's decision thresholds and rounding, as data, with where each one is written.

Source: CheXStruct (the measurement pipeline of CXReasonBench, Lee et al., NeurIPS 2025 Datasets and
Benchmarks), ``CheXStruct/utils/constants.py`` (``MD_RANGES``, ``ROUND_VALUE``) in the public copy
github.com/ase12345636/NTNU-1141-Machine-Learning-Project, read at commit 4805ad58 (under ``evaluate/``; the
later commits from e193623e move the same files to ``CheXStruct/``). The original repository,
ttumyche/CXReasonBench, ships only ``evaluation/``. docs/measurements.md says where cxrkg differs.
"""

from __future__ import annotations

#: the views CheXStruct measures (its main.py keeps ``ViewPosition`` PA and AP); any other view gets no threshold
FRONTAL_VIEWS = ("PA", "AP")

#: ``MD_RANGES['Cardiomegaly']``: cardiomegaly when the rounded cardiothoracic ratio is at least this
CARDIOMEGALY = {"PA": 0.5, "AP": 0.55}
#: ``MD_RANGES['Mediastinal_Widening']``: widening when the rounded mediastinal-to-thoracic ratio is at least this
MEDIASTINAL_WIDENING = {"PA": 0.25, "AP": 0.33}
#: ``MD_RANGES['Aortic_Knob_Enlargement']``: enlarged when the rounded knob-to-trachea ratio is at least this
AORTIC_KNOB_ENLARGEMENT = 2.5
#: ``MD_RANGES['Rotation']``: rotated when the rounded clavicle-distance ratio is below this
ROTATION = 0.4

#: ``MD_RANGES['Inclusion']``: a part is included when its margin (a fraction of the image's extent across that
#: border) is at least the first number; the bottom has a band between the two numbers that CheXStruct calls
#: ``mixed`` (its code then gives the image no inclusion label; cxrkg says ``mixed``)
INCLUSION_APEX = 0.01
INCLUSION_SIDE = 0.005
INCLUSION_BOTTOM_EXCLUDED_BELOW = 0.03
INCLUSION_BOTTOM_INCLUDED_FROM = 0.09

#: ``ROUND_VALUE``: Rotation, Cardiomegaly, Mediastinal_Widening and Aortic_Knob_Enlargement round to 2 decimals
#: before the comparison. ``ROUND_VALUE`` has no entry for inclusion or tracheal deviation; cxrkg rounds
#: the tracheal ratio to 2 and the inclusion margins to 3 decimals (the side margin's threshold, 0.005, has 3).
DECIMALS = 2
INCLUSION_DECIMALS = 3


def view_threshold(thresholds: dict[str, float], view: str | None) -> float | None:
    """The threshold of ``view`` (``"PA"`` / ``"AP"``, case and spaces ignored), None for any other view or none.

    >>> view_threshold(CARDIOMEGALY, "ap")
    0.55
    >>> view_threshold(CARDIOMEGALY, "LATERAL") is None
    True
    """
    return thresholds.get(frontal_view(view) or "")


def frontal_view(view: str | None) -> str | None:
    """``"PA"`` or ``"AP"`` when ``view`` names one of them (case and spaces ignored), else None."""
    name = (view or "").strip().upper()
    return name if name in FRONTAL_VIEWS else None
