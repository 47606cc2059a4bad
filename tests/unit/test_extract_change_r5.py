"""The rules extractor's change classes on IU wordings, read as graph/extract/eval/gold/ANNOTATION_GUIDE.md's §6, §7
and §8 say (issue 17, fifth round).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

pytest.importorskip("medspacy")

from tests.unit.test_extract_rules import changes_of  # noqa: E402


@pytest.mark.parametrize("text,expected", [
    ("Heart size is normal, stable mediastinal and hilar contours, surgical clips and sternotomy wires.",
     {("enlarged cardiac silhouette", "absent", None), ("surgical clips", "present", None),
      ("sternotomy wires", "present", None)}),
    ("Stable cardiomediastinal silhouette with normal heart size, calcified mediastinal lymph nodes.",
     {("enlarged cardiac silhouette", "absent", None), ("granulomatous disease", "present", None)}),
    # an abnormality inside the structure keeps the cue
    ("Heart size is normal, stable mediastinal contours with aortic tortuosity.",
     {("enlarged cardiac silhouette", "absent", None), ("tortuous aorta", "present", "no change")}),
], ids=["list", "with-then-list", "inside"])
def test_a_stable_normal_structure_ends_at_its_comma(tmp_path, text, expected):
    """The guide's §6: a cue on a normal structure goes to the abnormalities inside it ("stable mediastinal
    contours with aortic tortuosity"), not to the items listed after it."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Decreased peripheral vascular markings with hyperexpansion of the lungs.",
     {("hyperaeration", "present", None)}),
    ("Increased lucencies at both apices along with scarring in the left upper lobe.",
     {("pleural/parenchymal scarring", "present", None)}),
    # a quantity cue of the finding itself keeps its class
    ("Decreased left basilar atelectasis.", {("atelectasis", "present", "improved")}),
], ids=["markings", "lucencies", "own-finding"])
def test_a_quantity_cue_of_a_word_that_is_no_finding_changes_nothing_after_it(tmp_path, text, expected):
    """The guide's §6: a change cue changes the finding it describes; "decreased vascular markings" says the
    markings are fewer, not that the hyperexpansion named after them has improved."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("There has been interval CABG.", {("cabg grafts", "present", "new")}),
    ("Interval postsurgical changes of median sternotomy.", {("sternotomy wires", "present", "new")}),
    # a cue of its own after it says what changed; "in the interval" changes nothing by itself
    ("Interval removal of the left PICC.", {("picc", "absent", "resolved")}),
    ("Left chest port. It is unchanged in the interval.", {("chest port", "present", "no change")}),
], ids=["cabg", "sternotomy", "removal", "in-the-interval"])
def test_interval_before_a_device_is_its_placement(tmp_path, text, expected):
    """The guide's §6 and §7: a device placed in the interval is CHAN-DEV-AP ("interval CABG")."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Calcified granulomas in the left upper lobe. These appear similar to the previous chest CT.",
     {("calcified nodule", "present", "no change")}),
    ("Extensive fibrotic changes of the right lung, similar to the previous exam.",
     {("pleural/parenchymal scarring", "present", "no change")}),
    ("Prominent interstitial markings which are similar from prior examination.",
     {("increased reticular markings/ild pattern", "present", "no change")}),
], ids=["appear-similar", "similar-to-the-previous", "similar-from"])
def test_similar_to_a_prior_study_is_no_change(tmp_path, text, expected):
    """The guide's §6 lists "similar" among the no-change cues, whatever names the prior study."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Mild cardiomegaly as before with no pleural effusions.",
     {("enlarged cardiac silhouette", "present", "no change"), ("pleural effusion", "absent", None)}),
    ("Stable appearance of the chest without focal airspace disease.", {("airspace opacity", "absent", None)}),
], ids=["as-before-with-no", "stable-without"])
def test_an_absent_finding_has_no_change(tmp_path, text, expected):
    """The guide's §6: a negated finding has no change (only a resolved finding or a removed device is absent
    with a change)."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Interval increased bilateral interstitial opacities.",
     {("increased reticular markings/ild pattern", "present", "worsened")}),
    ("Increased bilateral interstitial opacities.", {("increased reticular markings/ild pattern", "present", None)}),
    ("No interval change in the diffusely increased bilateral interstitial opacities.",
     {("increased reticular markings/ild pattern", "present", "no change")}),
], ids=["interval", "state", "other-cue"])
def test_increased_markings_compared_with_a_prior_are_worse(tmp_path, text, expected):
    """The guide's §6: "increased interstitial markings" is a state unless the sentence compares with a prior
    ("interval", "since") and no other cue says how they changed."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Again identified are calcified mediastinal lymph nodes.", {("granulomatous disease", "present", "no change")}),
    ("Again visualized is a compression fracture of T12.", {("spinal fracture", "present", "no change")}),
], ids=["identified", "visualized"])
def test_again_with_any_verb_of_seeing_is_no_change(tmp_path, text, expected):
    """The guide's §6: "again seen / noted" is no change, with the other verbs of seeing IU uses."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("There is increased thoracic kyphosis.", {("kyphosis", "present", None)}),
    ("There is increased tortuosity of the descending thoracic aorta.", {("tortuous aorta", "present", None)}),
    ("Increased kyphosis since the prior study.", {("kyphosis", "present", "worsened")}),
    ("The thoracic kyphosis has increased.", {("kyphosis", "present", "worsened")}),
], ids=["kyphosis", "tortuosity", "compared", "verb"])
def test_increased_before_a_shape_is_its_degree(tmp_path, text, expected):
    """The guide's §6: a change word that states a state ("increased kyphosis": exaggerated) is no change
    unless the sentence compares with a prior or uses a verb of change."""
    assert changes_of(tmp_path, text) == expected
