"""The rules extractor's sides of findings (the annotation guide's §5), issue 17's fifth round.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import roundtrip, sided_findings_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    ("Nodular opacity overlying the upper lungs bilaterally.",
     {("mass/nodule (not otherwise specified)", "bilateral", "present")}),
    ("Several calcified granulomas are present in the upper lungs bilaterally.",
     {("calcified nodule", "bilateral", "present")}),
    ("Clear lungs bilaterally.", {("lung opacity", "bilateral", "absent")}),
], ids=["upper-lungs", "granulomas", "normal-statement"])
def test_bilaterally_after_a_place_sides_what_is_there(tmp_path, text, expected):
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Small effusion at the right base and atelectasis at the left base.",
     {("pleural effusion", "right", "present"), ("atelectasis", "left", "present")}),
    ("Postsurgical changes of the left shoulder and degenerative changes of the right shoulder.",
     {("postsurgical changes", "left", "present"), ("shoulder osteoarthritis", "right", "present")}),
    ("Patchy atelectasis in the medial right base and lingular scarring.",
     {("linear/patchy atelectasis", "right", "present"), ("pleural/parenchymal scarring", None, "present")}),
    # a side word after a preposition is a place too
    ("There is an effusion on the right and a pneumothorax on the left.",
     {("pleural effusion", "right", "present"), ("pneumothorax", "left", "present")}),
], ids=["two-bases", "two-shoulders", "position-word", "on-the-side"])
def test_a_place_after_a_preposition_places_the_finding_before_it(tmp_path, text, expected):
    assert sided_findings_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Left basilar atelectasis and right middle lobe scarring.",
     {("atelectasis", "left", "present"), ("pleural/parenchymal scarring", "right", "present")}),
    ("Small left effusion and right middle lobe atelectasis.",
     {("pleural effusion", "left", "present"), ("atelectasis", "right", "present")}),
], ids=["scarring", "atelectasis"])
def test_a_side_adjective_sides_the_finding_it_opens(tmp_path, text, expected):
    assert sided_findings_of(tmp_path, text) == expected


def _placed(tmp_path, text):
    """(finding, side, region) of every mention ingestion reads from ``text`` as a findings section."""
    return {(m.finding, m.side, m.anatomy) for m in roundtrip(tmp_path, {"findings": text}).mentions}


@pytest.mark.parametrize("text,expected", [
    ("Patchy bilateral airspace disease in the lungs.",
     {("airspace opacity", "bilateral", "left lung"), ("airspace opacity", "bilateral", "right lung")}),
    ("Stable 1 cm nodule left mid chest.", {("mass/nodule (not otherwise specified)", "left", "left lung")}),
    # a place whose parts are not one left and one right keeps its region and the stated side
    ("Left PICC with tip in the SVC.", {("picc", "left", "svc")}),
], ids=["lungs", "chest", "svc"])
def test_a_stated_side_places_a_finding_in_the_part_on_that_side(tmp_path, text, expected):
    assert _placed(tmp_path, text) == expected
