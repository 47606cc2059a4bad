"""CXRTrek stage 3's detection questions (graph.cxrtrek.stages) leave out a faulty box, which the reader
(graph.formats.cxrtrek) would reject: past the 224 frame, reversed, of zero area."""

from __future__ import annotations

import random

import pytest

from graph.cxrtrek.facts import Box, Observation, StudyStageFacts
from graph.formats.cxrtrek import ContentItem
from graph.cxrtrek.stages import stage3


def _detections(*boxes: Box) -> list[dict]:
    opacity = Observation("o1", "left lung", "lung opacity", "anatomicalfinding", "present", None)
    f = StudyStageFacts("s1", "p1", 1, None, None, [("i1", "PA")], boxes=list(boxes), observations=[opacity])
    out = [x for x in stage3(f, random.Random(0)) if x["qtype"] == "detection"]
    for x in out:
        ContentItem.model_validate(x)
    return out


def test_a_sound_box_is_asked():
    [d] = _detections(Box("b1", "i1", "left lung", 112, 20, 200, 180))
    assert d["bbox_list"] == [[50.0, 8.93, 89.29, 80.36]] and d["graph_basis"]["bbox_ids"] == ["b1"]


@pytest.mark.parametrize("corners", [(112, 20, 200, 228), (-3, 20, 200, 180), (200, 20, 112, 180), (112, 20, 112, 180)])
def test_a_faulty_box_is_not_asked(corners):
    assert _detections(Box("b1", "i1", "left lung", *corners)) == []


def test_a_faulty_box_leaves_the_regions_other_box():
    [d] = _detections(Box("b1", "i1", "left lung", 112, 20, 200, 228), Box("b2", "i1", "left lung", 112, 20, 200, 180))
    assert d["graph_basis"]["bbox_ids"] == ["b2"]
