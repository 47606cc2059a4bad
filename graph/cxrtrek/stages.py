"""The questions of each CXRTrek stage cxrkg answers from the graph, for one study.

Each function returns content items (dicts with the demo file's fields, :mod:`graph.formats.cxrtrek`) whose
``graph_basis`` says where the answer comes from: ``basis`` (``stated``: the study's own statements;
``derived``: a PROGRESSION edge derived by :mod:`graph.longitudinal.events`; ``not stated``: nothing said) and the ids of
the observations, PROGRESSION edges or boxes read. ``image_input_count`` is set when the sample is assembled.

- Stage 1 (Quality_Assessment, View_Information): per image with rotation or inclusion measurements (or, where
  the study states a technical-assessment finding and no image has them, its main image) a caption of its
  quality from the measurements and the stated findings (:mod:`graph.cxrtrek.quality`), the main image first,
  as the demo file asks quality before the view; then the view of the study's first PA / AP image (else its
  first image), from the image metadata.
- Stage 2 (Findings_Identification): per finding stated in the study (any region), yes/no or a Yes/No choice
  (drawn): present or uncertain -> yes, only absent -> no; targets ``abnormality_[f]``, or ``foreign_body_[f]``
  for tubes, lines and devices; a caption listing the present findings; ``yes_no_foreign_body`` when a
  device is stated.
- Stage 3 (Attributes_Description, Findings_Detection): per present finding its regions (caption, and a
  choice among its region and two other Chest ImaGenome box regions when it has one region), each stated
  severity word; a detection question per box of a region where a finding is present, in percent of the
  224 x 224 frame the scene graph's boxes are given in (a box past the frame, reversed or of zero area is
  not asked).
- Stage 5 (Differences_Comparison, every study with a previous study, as in the demo file, where each of the
  67 samples with a reference study has stage 5): whether anything changed (a choice, target
  ``overall_change``: "It shows an unchanged trend." where every PROGRESSION edge to the previous study says
  persistent or no change, or there is none); then per (finding, region) with PROGRESSION edges, a choice of
  the derived change, a choice of the stated change where the sources state one change, and a caption with
  the severity before and after.
- Stage 6 (Future_Trend_Analysis, only with a next study): per present finding, what the next study states of
  it (yes/no: still present; a choice of still present, resolved = stated absent, not mentioned).
"""

from __future__ import annotations

import random
import zlib
from collections import defaultdict
from functools import lru_cache
from typing import Any

from graph.cxrtrek import templates as t
from graph.cxrtrek.facts import DEVICE_CATEGORIES, Box, Change, Observation, StudyStageFacts
from graph.cxrtrek.quality import quality_answer, quality_images
from graph.terms import State
from graph.vocabulary import vocabulary

Item = dict[str, Any]
FRAME = 224
"""Chest ImaGenome's box frame: ``x1 .. y2`` are pixels of the image resized to 224 x 224."""
FRAME_NAME = "224x224"


def item(stage: int, task_type: str, qtype: str, question: str, answer: str, basis: dict[str, Any],
         **more: Any) -> Item:
    """One content item in the demo file's field order, ``graph_basis`` last."""
    return {"stage": stage, "task_type": task_type, "qtype": qtype, "image_input_count": 1, "question": question,
            "answer": answer, **more, "graph_basis": basis}


def choice(stage: int, task_type: str, question: str, options: list[str], right: int, basis: dict[str, Any],
           **more: Any) -> Item:
    """A single-choice item: ``question`` has ``{options}`` where the options are listed."""
    text = question.replace("{options}", t.listed_options(options))
    return item(stage, task_type, "single-choice", text, options[right], basis, option_list=options,
                answer_list=[options[right]], **more)


def main_image(images: list[tuple[str, str | None]]) -> tuple[str, str | None] | None:
    """The first PA / AP image, else the first image, else None."""
    return next((i for i in images if i[1] in t.VIEW_OPTIONS), images[0] if images else None)


def _quality(f: StudyStageFacts, main: str | None) -> list[Item]:
    """The quality captions; the wording is chosen by the image id, not drawn, so that the draws of the
    other stages stay as they were before stage 1 asked quality."""
    out = []
    for image_id in quality_images(f, main):
        answer, basis = quality_answer(f, image_id)
        question = t.QUALITY_QUESTIONS[zlib.crc32(image_id.encode()) % len(t.QUALITY_QUESTIONS)]
        out.append(item(1, "Quality_Assessment", "captioning", question, answer, basis, target="image_quality"))
    return out


def stage1(f: StudyStageFacts, rng: random.Random) -> list[Item]:
    """The quality questions, then the view question (none when the study's images state no view)."""
    image_id, view = main_image(f.images) or ("", None)
    quality = _quality(f, image_id or None)
    if not view:
        return quality
    basis = {"basis": "stated", "image_id": image_id, "view": view}
    if view in t.VIEW_OPTIONS:
        options = t.lettered(list(t.VIEW_OPTIONS.values()))
        return quality + [choice(1, "View_Information", t.VIEW_CHOICE, options, list(t.VIEW_OPTIONS).index(view),
                                 basis)]
    return quality + [item(1, "View_Information", "captioning", t.VIEW_CAPTION,
                           t.VIEW_CAPTION_ANSWER.format(view=view.lower()), basis)]


def _stated(obs: list[Observation], present: bool) -> dict[str, Any]:
    return {"basis": "stated", "state": State.PRESENT if present else State.ABSENT,
            "observation_ids": [o.observation_id for o in obs if o.present == present]}


def _yes_no(rng: random.Random, stage: int, task_type: str, x: str, yes: bool, basis: dict[str, Any],
            target: str, plain: tuple[str, ...], choices: tuple[str, ...]) -> Item:
    """A yes/no question or a Yes/No choice (drawn), option order drawn too."""
    if rng.random() < 0.5:
        return item(stage, task_type, "yes_no", rng.choice(plain).format(x=x), t.YES if yes else t.NO, basis,
                    target=target)
    order = [t.NO, t.YES] if rng.random() < 0.5 else [t.YES, t.NO]
    question = rng.choice(choices).replace("{x}", x)
    return choice(stage, task_type, question, t.lettered(order), order.index(t.YES if yes else t.NO), basis,
                  target=target)


def stage2(f: StudyStageFacts, rng: random.Random) -> list[Item]:
    """Findings identification: a caption of the present findings, a question per stated finding, and the
    foreign-body question when a device is stated."""
    by = f.by_finding()
    if not by:
        return []
    present = [name for name, obs in by.items() if any(o.present for o in obs)]
    caption = t.FINDINGS_CAPTION_ANSWER.format(findings=t.joined(present)) if present else t.NO_FINDINGS_ANSWER
    shown = [o.observation_id for name in present for o in by[name] if o.present] if present else \
        [o.observation_id for obs in by.values() for o in obs]
    out = [item(2, "Findings_Identification", "captioning", t.FINDINGS_CAPTION, caption,
                {"basis": "stated", "observation_ids": shown})]
    devices: list[Observation] = []
    for name, obs in by.items():
        yes = name in present
        device = obs[0].category in DEVICE_CATEGORIES
        devices += obs if device else []
        target = f"{'foreign_body' if device else 'abnormality'}_[{name}]"
        out.append(_yes_no(rng, 2, "Findings_Identification", name, yes, _stated(obs, yes), target, t.YES_NO,
                           t.YES_NO_CHOICE))
    if devices:
        yes = any(o.present for o in devices)
        out.append(item(2, "Findings_Identification", "yes_no", t.FOREIGN_BODY, t.YES if yes else t.NO,
                        _stated(devices, yes), target="yes_no_foreign_body"))
    return out


@lru_cache(maxsize=1)
def box_regions() -> tuple[str, ...]:
    """The vocabulary's Chest ImaGenome box regions, sorted: the places a location choice offers."""
    return tuple(sorted(r.name for r in vocabulary().regions.values() if r.has_bbox))


def _location(rng: random.Random, name: str, present: list[Observation]) -> list[Item]:
    places = sorted({o.anatomy for o in present})
    basis = {"basis": "stated", "observation_ids": [o.observation_id for o in present]}
    out = [item(3, "Attributes_Description", "captioning", t.LOCATION_CAPTION.format(x=name),
                t.LOCATION_CAPTION_ANSWER.format(x=name, places=t.joined(places)), basis, target=f"location_[{name}]")]
    others = [r for r in box_regions() if r not in places]
    if len(places) == 1 and len(others) >= 2:
        texts = [places[0], *rng.sample(others, 2)]
        rng.shuffle(texts)
        options = t.numbered([t.sentence(x) for x in texts])
        out.append(choice(3, "Attributes_Description", t.LOCATION_CHOICE.replace("{x}", name), options,
                          texts.index(places[0]), basis, target=f"location_[{name}]"))
    for o in present:
        if o.severity:
            out.append(item(3, "Attributes_Description", "captioning",
                            t.SEVERITY_CAPTION.format(x=name, place=o.anatomy),
                            t.SEVERITY_CAPTION_ANSWER.format(x=name, place=o.anatomy, severity=o.severity),
                            {"basis": "stated", "observation_ids": [o.observation_id]}, target=f"severity_[{name}]"))
    return out


def _percent(v: int) -> float:
    return round(v * 100 / FRAME, 2)


def _in_frame(b: Box) -> bool:
    """A box with area inside the 224 frame: a faulty box (past the frame, reversed, zero area; the synthetic
    cohort plants some, graph.measurements names them) is no detection answer, and the reader rejects it."""
    return 0 <= b.x1 < b.x2 <= FRAME and 0 <= b.y1 < b.y2 <= FRAME


def _detection(f: StudyStageFacts, places: set[str]) -> list[Item]:
    out, done = [], set()
    for b in f.boxes:
        if b.name not in places or b.name in done or not _in_frame(b):
            continue
        done.add(b.name)
        box = [_percent(b.x1), _percent(b.y1), _percent(b.x2), _percent(b.y2)]
        answer = t.DETECTION_ANSWER.format(x=b.name, x1=box[0], y1=box[1], x2=box[2], y2=box[3])
        basis = {"basis": "stated", "bbox_ids": [b.bbox_id], "image_id": b.image_id, "frame": FRAME_NAME}
        out.append(item(3, "Findings_Detection", "detection", t.DETECTION.format(x=t.sentence(b.name).rstrip(".")),
                        answer, basis, target=b.name, bbox_list=[box]))
    return out


def stage3(f: StudyStageFacts, rng: random.Random) -> list[Item]:
    """Attributes of each present finding (regions, severity) and detection of their regions' boxes."""
    out: list[Item] = []
    places: set[str] = set()
    for name, obs in f.by_finding().items():
        present = [o for o in obs if o.present]
        if present:
            out += _location(rng, name, present)
            places |= {o.anatomy for o in present}
    return out + _detection(f, places)


def _change_items(name: str, place: str, changes: list[Change]) -> list[Item]:
    derived = [c for c in changes if c.basis == "derived" and c.change in t.DERIVED_OPTIONS]
    stated = [c for c in changes if c.basis == "stated" and c.change in t.STATED_OPTIONS]
    said = sorted({c.change for c in stated})
    out = []
    if derived:
        d = derived[0]
        options = t.lettered(list(t.DERIVED_OPTIONS.values()))
        basis = {"basis": "derived", "progression_ids": [d.progression_id], "change": d.change,
                 "observation_ids": [d.observation_id, d.prior_observation_id]}
        out.append(choice(5, "Differences_Comparison", t.CHANGE_CHOICE.replace("{x}", name).replace("{place}", place),
                          options, list(t.DERIVED_OPTIONS).index(d.change), basis, target=f"change_[{name}]"))
    if len(said) == 1:
        options = t.lettered(list(t.STATED_OPTIONS.values()))
        basis = {"basis": "stated", "progression_ids": [c.progression_id for c in stated], "change": said[0]}
        out.append(choice(5, "Differences_Comparison", t.STATED_CHOICE.replace("{x}", name).replace("{place}", place),
                          options, list(t.STATED_OPTIONS).index(said[0]), basis, target=f"stated_change_[{name}]"))
    main = stated[0] if len(said) == 1 else (derived[0] if derived else None)
    if main is not None:
        severity = t.CHANGE_SEVERITY.format(before=main.prior_severity or t.NOT_STATED,
                                            after=main.severity or t.NOT_STATED)
        answer = t.CHANGE_CAPTION_ANSWER.format(x=name, place=place, change=t.CHANGE_WORDS[main.change],
                                                severity=severity if main.prior_severity or main.severity else "")
        basis = {"basis": main.basis, "progression_ids": [main.progression_id],
                 "observation_ids": [main.observation_id, main.prior_observation_id]}
        out.append(item(5, "Differences_Comparison", "captioning", t.CHANGE_CAPTION.format(x=name, place=place),
                        answer, basis, target=f"change_[{name}]"))
    return out


def _overall(f: StudyStageFacts) -> Item:
    """Whether anything changed against the previous study (:data:`graph.cxrtrek.templates.OVERALL_OPTIONS`)."""
    changed = [c for c in f.changes if c.change not in t.UNCHANGED]
    state = "changed" if changed else "no change"
    basis = {"basis": "derived", "change": state, "prior_study_id": f.prior_id,
             "progression_ids": [c.progression_id for c in changed or f.changes]}
    options = t.lettered(list(t.OVERALL_OPTIONS.values()))
    return choice(5, "Differences_Comparison", t.OVERALL_CHANGE_CHOICE, options, list(t.OVERALL_OPTIONS).index(state),
                  basis, target="overall_change")


def stage5(f: StudyStageFacts, rng: random.Random) -> list[Item]:
    """Whether anything changed against the previous study (every study with one: a study without a
    PROGRESSION edge answers no change), then the change of each (finding, region) from its PROGRESSION
    edges."""
    if not f.prior_id:
        return []
    groups: dict[tuple[str, str], list[Change]] = defaultdict(list)
    for c in f.changes:
        groups[(c.finding, c.anatomy)].append(c)
    return [_overall(f)] + [x for (name, place), changes in sorted(groups.items())
                            for x in _change_items(name, place, changes)]


def stage6(f: StudyStageFacts, rng: random.Random) -> list[Item]:
    """What the next study states of each present finding (any region)."""
    if not f.next_id:
        return []
    nxt, out = f.by_finding(nxt=True), []
    for name, obs in f.by_finding().items():
        if not any(o.present for o in obs):
            continue
        later = nxt.get(name, [])
        state = State.PRESENT if any(o.present for o in later) else State.ABSENT if later else State.NOT_MENTIONED
        basis = {"basis": "stated" if later else "not stated", "next_study_id": f.next_id, "state": state,
                 "observation_ids": [o.observation_id for o in later if o.present == (state == State.PRESENT)]}
        out.append(item(6, "Future_Trend_Analysis", "yes_no", t.NEXT_YES_NO.format(x=name),
                        t.YES if state == State.PRESENT else t.NO, basis, target=f"next_[{name}]"))
        options = t.lettered(list(t.NEXT_OPTIONS.values()))
        out.append(choice(6, "Future_Trend_Analysis", t.NEXT_CHOICE.replace("{x}", name), options,
                          list(t.NEXT_OPTIONS).index(state), basis, target=f"next_[{name}]"))
    return out


STAGES = {1: stage1, 2: stage2, 3: stage3, 5: stage5, 6: stage6}
"""The stages cxrkg writes. 4 (relations), 7 (advice) and 8 (the report) need report text or a model."""
