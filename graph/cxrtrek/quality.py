"""Stage 1's Quality_Assessment answers: what the anatomy boxes measure of an image's rotation and inclusion,
and the technical-assessment findings its study states.

Which images are asked about: every image of the study with rotation or inclusion Measurement nodes (the
loaders write them for every image with an anatomy box, graph.measurements), in image id order with the
study's main image first; a study that states a technical-assessment finding present (or uncertain, as the
other stages read hedged findings) but has no such image is asked about its main image.

An answer, in this order: the rotation (``rotation_ratio`` decided: rotated below CheXStruct's 0.4, else not),
the inclusion (the ``inclusion`` summary: ``cut off`` names the parts excluded, ``mixed`` the parts in
CheXStruct's mixed band, ``complete``), the stated findings; "No technical deficiencies are noted." leads
an answer where both were measured, neither found a fault and nothing is stated. Where neither was decided
(a box missing, a view other than PA / AP, the image's size unknown) and nothing is stated, the answer says
they cannot be measured and names the measurements' reasons.

``graph_basis``: ``basis`` ``measured`` (Measurement nodes read), ``stated`` (observations read), ``measured
and stated``, or ``not measured``; ``image_id``, ``measurement_ids``, ``observation_ids``.
"""

from __future__ import annotations

from typing import Any

from graph.cxrtrek import templates as t
from graph.cxrtrek.facts import TECHNICAL_CATEGORY, Measured, Observation, StudyStageFacts

ROTATION, INCLUSION = "rotation_ratio", "inclusion"
EXCLUDED, MIXED = "excluded", "mixed"
ROTATED_YES = "yes"
CUT_OFF, COMPLETE = "cut off", "complete"


def stated_technical(f: StudyStageFacts) -> list[Observation]:
    """The study's technical-assessment observations stated present or uncertain, by finding."""
    return [o for o in f.observations if o.category == TECHNICAL_CATEGORY and o.present]


def quality_images(f: StudyStageFacts, main: str | None) -> list[str]:
    """The image ids asked about (see the module docstring), the main image first."""
    measured = sorted({m.image_id for m in f.measurements})
    if main in measured:
        measured.remove(main)
        measured.insert(0, main)
    if not measured and stated_technical(f):
        return [main or f.study_id]
    return measured


def _parts(measured: dict[str, Measured], decision: str) -> tuple[str, bool]:
    """The inclusion parts with this decision, named (both sides of one part together), and whether they
    are more than one."""
    words = []
    for part, (one, both) in t.INCLUSION_PART_WORDS.items():
        sides = [side for side in ("right", "left")
                 if (m := measured.get(f"{INCLUSION}_{part}_{side}")) is not None and m.decision == decision]
        words += [both] if len(sides) == 2 else [f"{side} {one}" for side in sides]
    return (t.joined(words) if words else "", len(words) > 1 or any(w.startswith("bilateral") for w in words))


def _inclusion_sentence(measured: dict[str, Measured]) -> str | None:
    summary = measured.get(INCLUSION)
    if summary is None or summary.decision is None:
        return None
    if summary.decision == CUT_OFF:
        return t.CUT_OFF.format(parts=_parts(measured, EXCLUDED)[0] or "whole chest")
    if summary.decision == MIXED:
        parts, many = _parts(measured, MIXED)
        return t.PARTLY_INCLUDED.format(parts=parts, verb="are" if many else "is")
    return t.COMPLETE


def quality_answer(f: StudyStageFacts, image_id: str) -> tuple[str, dict[str, Any]]:
    """One image's Quality_Assessment answer and its ``graph_basis`` (see the module docstring)."""
    measured = {m.name: m for m in f.measurements if m.image_id == image_id}
    rotation = measured.get(ROTATION)
    sentences = []
    if rotation is not None and rotation.decision is not None:
        sentences.append(t.ROTATED if rotation.decision == ROTATED_YES else t.NOT_ROTATED)
    inclusion = _inclusion_sentence(measured)
    sentences += [inclusion] if inclusion else []
    stated = stated_technical(f)
    findings = sorted({o.finding for o in stated})
    if findings:
        sentences.append(t.TECHNICALLY_LIMITED.format(findings=t.joined([t.TECHNICAL_WORDS.get(x, x)
                                                                         for x in findings])))
    used = [m for m in (rotation, measured.get(INCLUSION)) if m is not None and m.decision is not None]
    if len(used) == 2 and not findings and t.ROTATED not in sentences and inclusion == t.COMPLETE:
        sentences.insert(0, t.NO_DEFICIENCY)
    if not sentences:
        reasons = sorted({m.reason for m in measured.values() if m.reason}) or ["no threshold for the view"]
        sentences.append(t.NOT_MEASURED.format(reasons=", ".join(reasons)))
    basis = "measured and stated" if used and stated else "measured" if used else "stated" if stated \
        else "not measured"
    return " ".join(sentences), {
        "basis": basis, "image_id": image_id,
        "measurement_ids": [m.measurement_id for m in measured.values() if m.decision is not None or not used],
        "observation_ids": [o.observation_id for o in stated]}
