"""The rules extractor's sides of findings (the annotation guide's §5), issue 17's fifth round.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

pytest.importorskip("medspacy")

from tests.unit.test_extract_rules import _found_sided  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    ("Nodular opacity overlying the upper lungs bilaterally.",
     {("mass/nodule (not otherwise specified)", "bilateral", "present")}),
    ("Several calcified granulomas are present in the upper lungs bilaterally.",
     {("calcified nodule", "bilateral", "present")}),
    ("Clear lungs bilaterally.", {("lung opacity", "bilateral", "absent")}),
], ids=["upper-lungs", "granulomas", "normal-statement"])
def test_bilaterally_after_a_place_sides_what_is_there(tmp_path, text, expected):
    assert _found_sided(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Small effusion at the right base and atelectasis at the left base.",
     {("pleural effusion", "right", "present"), ("atelectasis", "left", "present")}),
    ("Postsurgical changes of the left shoulder and degenerative changes of the right shoulder.",
     {("postsurgical changes", "left", "present"), ("shoulder osteoarthritis", "right", "present")}),
], ids=["two-bases", "two-shoulders"])
def test_a_place_after_a_preposition_places_the_finding_before_it(tmp_path, text, expected):
    assert _found_sided(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Left basilar atelectasis and right middle lobe scarring.",
     {("atelectasis", "left", "present"), ("pleural/parenchymal scarring", "right", "present")}),
    ("Small left effusion and right middle lobe atelectasis.",
     {("pleural effusion", "left", "present"), ("atelectasis", "right", "present")}),
], ids=["scarring", "atelectasis"])
def test_a_side_adjective_sides_the_finding_it_opens(tmp_path, text, expected):
    assert _found_sided(tmp_path, text) == expected
