"""The rules extractor's change classes and sides on IU wordings of the development set iu_sentences_3.json
(issue 17, fourth round), read as graph/extract/eval/gold/ANNOTATION_GUIDE.md's §5, §6 and §8 say.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

pytest.importorskip("medspacy")

from tests.unit.test_extract_rules import _roundtrip, changes_of  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    ("Right upper lobe opacity, not well seen on the prior study, may represent pneumonia.",
     {("lung opacity", "present", "new"), ("pneumonia", "uncertain", None)}),
    ("Small left pleural effusion, not clearly seen on prior.", {("pleural effusion", "present", "new")}),
    ("Small left pleural effusion, well seen on the previous study.",
     {("pleural effusion", "present", "no change")}),
    ("Left basilar atelectasis. This was present previously.", {("atelectasis", "present", "no change")}),
    ("Small left pleural effusion, not seen previously.", {("pleural effusion", "present", "new")}),
], ids=["not-well-seen", "not-clearly-seen", "well-seen", "present-previously", "not-seen-previously"])
def test_seen_on_the_prior_with_an_adverb_before_the_verb(tmp_path, text, expected):
    """The guide's §6: "seen / present on the prior study" is no change, "not seen on the prior study" new,
    also with the adverb before the verb and with "previously" for the prior study."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The mediastinal contours are normal with unchanged atherosclerosis and tortuosity of the aorta.",
     {("mediastinal widening", "absent", None), ("vascular calcification", "present", "no change"),
      ("tortuous aorta", "present", "no change")}),
    ("Since the prior study there has been removal of the central line and enteric tube.",
     {("ij line", "absent", "resolved"), ("enteric tube", "absent", "resolved")}),
    # another cue or an absence ends the list
    ("Heart size is normal with new right atelectasis and stable left effusion.",
     {("enlarged cardiac silhouette", "absent", None), ("atelectasis", "present", "new"),
      ("pleural effusion", "present", "no change")}),
], ids=["no-change", "removal", "next-cue"])
def test_a_cue_before_a_list_applies_to_the_list(tmp_path, text, expected):
    """The guide's §6: a cue that opens a list of findings applies to the list, also where the list does not
    open its sentence."""
    assert changes_of(tmp_path, text) == expected


def _sides(tmp_path, text):
    return {(m.finding, m.polarity, m.side) for m in _roundtrip(tmp_path, {"findings": text}).mentions}


@pytest.mark.parametrize("text,expected", [
    ("Opacification of the left upper lobe suggestive of hilar mass.",
     {("lung opacity", "present", "left"), ("mass/nodule (not otherwise specified)", "uncertain", "left")}),
    # a reading with a side of its own keeps it
    ("Right lower lobe opacity which may represent atelectasis in the left base.",
     {("lung opacity", "present", "right"), ("atelectasis", "uncertain", "left")}),
], ids=["hilar", "own-side"])
def test_a_reading_without_a_side_takes_the_side_of_its_sign(tmp_path, text, expected):
    """The guide's §5: a reading takes the side of the sign it reads, also where the reading names a place
    of either side ("hilar")."""
    assert _sides(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("There is scarring in the right mid and upper lung zone with surgical clips.",
     {("pleural/parenchymal scarring", "present", "right"), ("surgical clips", "present", "right")}),
    ("Calcified granulomas are seen in the left mid to lower lung.", {("calcified nodule", "present", "left")}),
], ids=["and", "to"])
def test_a_side_before_joined_zones_sides_the_place(tmp_path, text, expected):
    """The guide's §5: the side the sentence states for the findings' location, also before two zones that
    "and" / "to" join."""
    assert _sides(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    # the device is left, its leads state no side
    ("There is a cardiac pacemaker overlying the left chest wall with leads in the right heart.",
     {("cardiac pacer and wires", "present", "left"), ("cardiac pacer and wires", "present", None)}),
    ("Pacemaker leads terminate in the right heart.", {("cardiac pacer and wires", "present", None)}),
], ids=["left-device", "leads-only"])
def test_the_right_heart_is_no_side_of_a_device(tmp_path, text, expected):
    """The guide's §5: sides naming heart chambers are no laterality ("leads ending in the right atrium and
    right ventricle"); "the right heart" names the right chambers."""
    assert _sides(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The heart is again enlarged.", {("enlarged cardiac silhouette", "present", "no change")}),
    ("Small bilateral pleural effusions are again present.", {("pleural effusion", "present", "no change")}),
], ids=["is-again", "are-again"])
def test_a_finding_that_is_again_so_is_unchanged(tmp_path, text, expected):
    """The guide's §6: "again seen / noted" is no change, and so is a finding that "is again" what it was."""
    assert changes_of(tmp_path, text) == expected


def test_a_reading_of_the_appearance_takes_the_place_of_the_sign_before(tmp_path):
    """The guide's §5 and §8: "Appearance suggests atelectasis." reads the sign of the sentence before and
    takes its side."""
    text = "Bandlike opacities are present in the right lung. Appearance suggests atelectasis."
    assert _sides(tmp_path, text) == {("lung opacity", "present", "right"), ("atelectasis", "uncertain", "right")}
