"""CXRTrek stage 1's Quality_Assessment (graph.cxrtrek.quality, graph.cxrtrek.stages.stage1) on studies built
from graph.measurements' own measurements of the made-up films of tests/fixtures/films.py: a straight, whole
film; a rotated one; one with an apex cut off; one with the costophrenic angles in the mixed band; a study
whose report states low lung volumes; an image without the boxes; and a study with nothing to assess."""

from __future__ import annotations

import random

from graph.cxrtrek import templates as t
from graph.cxrtrek.facts import Measured, Observation, StudyStageFacts
from graph.formats.cxrtrek import ContentItem
from graph.cxrtrek.stages import stage1
from graph.measurements import measure_image
from tests.fixtures.films import SIZE, image


def _measured(image_id: str, img, size=SIZE) -> list[Measured]:
    return [Measured(f"{image_id}|{m.name}", image_id, m.name, m.value, m.threshold, m.decision, m.reason)
            for m in measure_image(img, size) if m.task in ("rotation", "inclusion")]


def _study(*films, observations=(), view="PA") -> StudyStageFacts:
    images = [(image_id, view) for image_id, _ in films]
    measured = [m for image_id, img in films for m in _measured(image_id, img)]
    return StudyStageFacts("s1", "p1", 1, None, None, images, measurements=measured,
                           observations=list(observations))


def _quality(f: StudyStageFacts) -> list[dict]:
    items = [x for x in stage1(f, random.Random(0)) if x["task_type"] == "Quality_Assessment"]
    for x in items:
        ContentItem.model_validate(x)  # the reader's own check: a valid stage 1 caption
    return items


def test_a_straight_whole_film_has_no_deficiency():
    [q] = _quality(_study(("i1", image())))
    assert q["answer"] == " ".join([t.NO_DEFICIENCY, t.NOT_ROTATED, t.COMPLETE])
    assert q["stage"] == 1 and q["qtype"] == "captioning" and q["question"] in t.QUALITY_QUESTIONS
    assert q["graph_basis"]["basis"] == "measured" and q["graph_basis"]["image_id"] == "i1"
    assert "i1|rotation_ratio" in q["graph_basis"]["measurement_ids"]
    assert "i1|inclusion" in q["graph_basis"]["measurement_ids"]


def test_a_rotated_film_says_so():
    # the left clavicle's medial edge 30 px from the spine's centre (x = 1000), the right's 100: 0.3 < 0.4
    [q] = _quality(_study(("i1", image(left_clavicle=(1030, 450, 1600, 600)))))
    assert q["answer"].startswith(t.ROTATED) and t.NO_DEFICIENCY not in q["answer"]


def test_an_apex_cut_off_names_it():
    # the right apical zone's top at row 10 of 2500: 0.004 < 0.01; both apices: the demo's "bilateral"
    [one] = _quality(_study(("i1", image(right_apical_zone=(400, 10, 900, 600)))))
    assert t.CUT_OFF.format(parts="right lung apex") in one["answer"]
    [both] = _quality(_study(("i1", image(right_apical_zone=(400, 10, 900, 600),
                                          left_apical_zone=(1100, 5, 1600, 600)))))
    assert t.CUT_OFF.format(parts="bilateral lung apices") in both["answer"]


def test_the_mixed_band_is_partly_included():
    # the left costophrenic angle's bottom at 2350: (2500 - 2350) / 2500 = 0.06, between 0.03 and 0.09
    [q] = _quality(_study(("i1", image(left_costophrenic_angle=(1500, 1850, 1700, 2350)))))
    assert t.PARTLY_INCLUDED.format(parts="left costophrenic angle", verb="is") in q["answer"]


def test_a_stated_technical_finding_joins_the_measurements():
    low = Observation("o1", "lungs", "low lung volumes", "technicalassessment", "present", None)
    opacity = Observation("o2", "left lung", "lung opacity", "anatomicalfinding", "present", None)
    [q] = _quality(_study(("i1", image()), observations=[low, opacity]))
    assert t.TECHNICALLY_LIMITED.format(findings="low lung volumes") in q["answer"]
    assert t.NO_DEFICIENCY not in q["answer"]
    assert q["graph_basis"]["basis"] == "measured and stated" and q["graph_basis"]["observation_ids"] == ["o1"]


def test_a_stated_finding_without_boxes_asks_the_main_image():
    skin = Observation("o1", "left chest wall", "skin fold", "technicalassessment", "uncertain", None)
    f = StudyStageFacts("s1", "p1", 1, None, None, [("i1", "PA")], observations=[skin])
    [q] = _quality(f)
    assert q["answer"] == t.TECHNICALLY_LIMITED.format(findings="a skin fold")
    assert q["graph_basis"] == {"basis": "stated", "image_id": "i1", "measurement_ids": [], "observation_ids": ["o1"]}
    absent = Observation("o1", "left chest wall", "skin fold", "technicalassessment", "absent", None)
    assert _quality(StudyStageFacts("s1", "p1", 1, None, None, [("i1", "PA")], observations=[absent])) == []


def test_every_image_with_boxes_is_asked_the_main_first():
    f = _study(("i2", image()), ("i1", image(left_clavicle=(1030, 450, 1600, 600))))
    f.images = [("i0", "LATERAL"), ("i1", "PA"), ("i2", "PA")]
    items = _quality(f)
    assert [q["graph_basis"]["image_id"] for q in items] == ["i1", "i2"]
    assert [x["task_type"] for x in stage1(f, random.Random(0))] == ["Quality_Assessment"] * 2 + ["View_Information"]


def test_an_image_with_boxes_but_no_decision_names_the_reasons():
    # no clavicles (rotation: box missing) and no size (inclusion: image size unknown)
    img = image(right_clavicle=None)
    f = StudyStageFacts("s1", "p1", 1, None, None, [("i1", "PA")], measurements=_measured("i1", img, size=None))
    [q] = _quality(f)
    assert q["answer"] == t.NOT_MEASURED.format(reasons="box missing, image size unknown")
    assert q["graph_basis"]["basis"] == "not measured" and len(q["graph_basis"]["measurement_ids"]) == 8


def test_a_study_without_boxes_or_technical_findings_asks_the_view_only():
    f = StudyStageFacts("s1", "p1", 1, None, None, [("i1", "AP")])
    assert [x["task_type"] for x in stage1(f, random.Random(0))] == ["View_Information"]
