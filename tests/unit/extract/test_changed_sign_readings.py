"""How a change cue reaches the findings of its sentence: the reading offered for a changed sign
(graph/extract/eval/gold/ANNOTATION_GUIDE.md's §6; issue 17, sixth round).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import changes_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    ("Stable right apical opacity, probably scarring.",
     {("lung opacity", "present", "no change"), ("pleural/parenchymal scarring", "uncertain", "no change")}),
    ("Increasing left upper lobe mass, probably a carcinoma.",
     {("mass/nodule (not otherwise specified)", "present", "worsened"), ("lung cancer", "uncertain", "worsened")}),
    ("Again seen is a left lower lobe density which may represent atelectasis.",
     {("lung opacity", "present", "no change"), ("atelectasis", "uncertain", "no change")}),
    ("Stable blunting of the left costophrenic angle, likely due to pleural thickening.",
     {("costophrenic angle blunting", "present", "no change"),
      ("pleural/parenchymal scarring", "uncertain", "no change")}),
], ids=["comma", "comma-hedge-article", "which-may-represent", "due-to"])
def test_the_one_reading_of_a_changed_sign_has_its_change(tmp_path, text, expected):
    """The guide's §6: a cue before a sign names the feature, whichever finding it is, so the one reading
    offered for it has the sign's class."""
    assert changes_of(tmp_path, text) >= expected


@pytest.mark.parametrize("text,reading", [
    # several readings: the differential states no change
    ("Stable right basilar opacity, could represent scarring or atelectasis.", "atelectasis"),
    # a predicate cue ends its clause; the reading after it is a clause of its own
    ("Right basilar opacity, stable since the prior study and may represent atelectasis.", "atelectasis"),
], ids=["several", "after-predicate"])
def test_a_reading_among_several_or_after_a_predicate_cue_has_no_change(tmp_path, text, reading):
    changes = changes_of(tmp_path, text)
    assert ("lung opacity", "present", "no change") in changes
    assert {c for f, _, c in changes if f == reading} == {None}


@pytest.mark.parametrize("text,expected", [
    ("The previously noted small left pneumothorax is not seen on the current study.",
     {("pneumothorax", "absent", "resolved")}),
    ("Previously described right upper lobe nodule is not visualized today.",
     {("mass/nodule (not otherwise specified)", "absent", "resolved")}),
], ids=["pneumothorax", "nodule"])
def test_an_absent_finding_seen_before_has_resolved(tmp_path, text, expected):
    """The guide's §6: a finding the prior study showed that is not seen now has resolved ("no longer seen")."""
    assert changes_of(tmp_path, text) == expected


def test_a_present_finding_seen_before_takes_its_own_cue(tmp_path):
    assert changes_of(tmp_path, "The previously noted left lower lobe nodule is unchanged.") == {
        ("mass/nodule (not otherwise specified)", "present", "no change")}
