"""What the geometry decides per study, and how it changes from a study to the one before: the rows of the
geometry link step (graph/schema.yaml: ``GeometryObservation`` and its ``PROGRESSION`` edges, source
``geometry``).

A study's geometry observation of a finding comes from its measured image: the first of its images, by image
id, whose measurement has a decision (a PA or AP film with the boxes the measurement reads). ``yes`` (``cut
off`` for inclusion) is ``present``, ``no`` (``complete``) ``absent``; an inclusion decided ``mixed`` (a
costophrenic angle in CheXStruct's band between exclusion and inclusion, where CheXStruct gives no label) gives
no observation. These are the geometry's own, under their own source: a report's statement of the same finding
is an ``Observation``, and the two are never merged.

Progression, between a study and its prior study (the PRIOR link) when both have the finding's observation, is
derived for the two findings a ratio grades (the cardiothoracic and the mediastinal width ratio): absent then
present is ``new``, present then absent ``resolved``, present in both ``worsened`` when the ratio rose by more
than :data:`TOLERANCE`, ``improved`` when it fell by more, else ``no change``; absent in both gives no edge.
Rotation, inclusion and tracheal deviation describe how a film was taken or a position, not a grade, so they
get no progression.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from graph.measurements.measure import (
    CARDIOTHORACIC_RATIO,
    COMPLETE,
    CUT_OFF,
    INCLUSION,
    MEDIASTINAL_WIDTH_RATIO,
    NO,
    ROTATION_RATIO,
    TRACHEAL_DEVIATION,
    YES,
)
from graph.measurements.rows import measurement_id
from graph.terms import Source

SOURCE = Source.GEOMETRY.value
RULE = "measurement_change"
# Two films of an unchanged heart differ by up to about 0.01 in the box ratio (the corners' placement, and
# the rounding to 2 decimals, 0.005 each way); a change of more than 0.02 is beyond both.
TOLERANCE = 0.02

# measurement -> the finding its decision observes (vocabulary names: "tracheal deviation" is a synonym of
# mediastinal displacement; the vocabulary has no finding for a cut-off film)
FINDINGS = {CARDIOTHORACIC_RATIO: "enlarged cardiac silhouette", MEDIASTINAL_WIDTH_RATIO: "mediastinal widening",
            TRACHEAL_DEVIATION: "mediastinal displacement", ROTATION_RATIO: "rotated", INCLUSION: "anatomy cut off"}
GRADED = (CARDIOTHORACIC_RATIO, MEDIASTINAL_WIDTH_RATIO)
_STATE = {YES: "present", CUT_OFF: "present", NO: "absent", COMPLETE: "absent"}


@dataclass(frozen=True)
class MeasuredStudy:
    """What the link step reads of one study.

    Attributes:
        study_id, patient_id: the study and its patient.
        study_datetime: the study's date as ISO text, or None.
        prior_id: the study its PRIOR link points to (the one before it), or None.
        measurements: ``(image_id, name, value, threshold, decision)`` of its images' measurements of
            :data:`FINDINGS` that have a decision (value and threshold None where the measurement has none).
    """

    study_id: str
    patient_id: str
    study_datetime: str | None
    prior_id: str | None
    measurements: tuple[tuple[str, str, float | None, float | None, str], ...]


def geometry_observation_id(study_id: str, finding: str) -> str:
    """The natural key of a GeometryObservation (``"<study_id>|<finding>"``)."""
    return f"{study_id}|{finding}"


def _observations(study: MeasuredStudy) -> dict[str, dict[str, Any]]:
    """measurement name -> the study's observation row (with the key of its Measurement), from the first
    image (by id) that decides the measurement."""
    decided: dict[str, dict[str, Any] | None] = {}
    for image_id, name, value, threshold, decision in sorted(study.measurements):
        if name not in FINDINGS or name in decided or decision is None:
            continue
        if decision not in _STATE:  # inclusion "mixed": decided, with no state
            decided[name] = None
            continue
        row = {"geometry_observation_id": geometry_observation_id(study.study_id, FINDINGS[name]),
               "patient_id": study.patient_id, "study_id": study.study_id, "image_id": image_id,
               "finding": FINDINGS[name], "state": _STATE[decision], "source": SOURCE, "measurement": name,
               "value": value, "threshold": threshold, "study_datetime": study.study_datetime,
               "measurement_id": measurement_id(image_id, name)}
        decided[name] = {k: v for k, v in row.items() if v is not None}
    return {name: row for name, row in decided.items() if row is not None}


def change(prior: dict[str, Any], current: dict[str, Any]) -> str | None:
    """The derived change of a graded finding from ``prior`` to ``current`` (observation rows), or None
    (absent in both)."""
    before, now = prior["state"], current["state"]
    if before == "absent":
        return None if now == "absent" else "new"
    if now == "absent":
        return "resolved"
    rise = current.get("value", 0.0) - prior.get("value", 0.0)
    if rise > TOLERANCE + 1e-9:  # the values are rounded to 2 decimals: 0.52 - 0.50 is 0.020000000000000018
        return "worsened"
    return "improved" if rise < -TOLERANCE - 1e-9 else "no change"


def geometry_rows(studies: Iterable[MeasuredStudy]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The GeometryObservation rows and the PROGRESSION rows (``{current, prior, props}``, the shape of
    ``graph.store.statements.progressions_statement``) of these studies (whole patients: a study's prior
    must be among them for its edge).

    Each observation row carries ``measurement_id``, the Measurement it comes from (its FROM_MEASUREMENT
    link), beside the node's properties.
    """
    studies = list(studies)
    seen = {s.study_id: _observations(s) for s in studies}
    observations = [row for s in studies for row in seen[s.study_id].values()]
    edges = []
    for s in studies:
        before = seen.get(s.prior_id) if s.prior_id else None
        if not before:
            continue
        for name in GRADED:
            if name in before and name in seen[s.study_id]:
                current, prior = seen[s.study_id][name], before[name]
                if (kind := change(prior, current)) is not None:
                    edges.append({"current": current["geometry_observation_id"],
                                  "prior": prior["geometry_observation_id"],
                                  "props": {"progression_id": f"{current['geometry_observation_id']}|{s.prior_id}|"
                                                              f"{SOURCE}|{kind}",
                                            "change": kind, "basis": "derived", "source": SOURCE, "rule": RULE,
                                            "prior_state": prior["state"], "current_state": current["state"]}})
    return observations, edges
