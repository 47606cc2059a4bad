"""The rules extractor's change classes on IU wordings, read as graph/extract/eval/gold/ANNOTATION_GUIDE.md's §6, §7
and §8 say (issue 17, fifth round), and on patterns found by auditing unlabelled IU sentences with change cues
(sixth round).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from graph.extract.rules import extract_text
from tests.fixtures.extract import changes_of

pytestmark = pytest.mark.extract


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


# --- patterns found by auditing unlabelled IU sentences with change cues against the guide's §6 and §8

@pytest.mark.parametrize("text,expected", [
    ("Faint nodular opacities in the left upper zone. These are more prominent than on the prior exam.",
     {("multiple masses/nodules", "present", "worsened")}),
    ("Patchy right basilar opacity is less prominent than on the prior study.",
     {("lung opacity", "present", "improved")}),
    # "prominent" names an enlarged hilum beside a hilum: the finding keeps it, the cue its head
    ("The right hilum is more prominent than on the prior exam.",
     {("enlarged hilum", "present", "worsened")}),
    ("Less prominent left hilum since the previous radiograph.",
     {("enlarged hilum", "present", "improved")}),
], ids=["refer-back", "predicate", "hilum-predicate", "hilum-attributive"])
def test_more_or_less_prominent_is_a_change_cue(tmp_path, text, expected):
    """The guide's §6: "more prominent" is a worsening (and "less prominent" an improvement), also where its
    last word could name an enlarged hilum."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Cardiac XXXX unchanged in position since the last exam.", {("cardiac pacer and wires", "present", "no change")}),
    ("A cardiac XXXX overlies the left chest with its tip in the right ventricle.",
     {("cardiac pacer and wires", "present", None)}),
    # after a side it is a heart border
    ("The right cardiac XXXX is partly obscured by overlying soft tissue.", set()),
], ids=["stable", "tip", "border"])
def test_a_redacted_cardiac_device_is_the_pacemaker(tmp_path, text, expected):
    """The guide's §7: the pacemaker, its generator or its leads are `cardiac pacer and wires`; IU redacts the
    device's name after "cardiac"."""
    assert changes_of(tmp_path, text) == expected


def _refers_back(text, cue):
    """The targets of the no-change entity of ``cue`` (a word that occurs once in ``text``)."""
    doc = extract_text({"findings": text}, "k")["k"]
    ents = doc["entities"]
    return {ents[t]["tokens"] for e in ents.values() if e["label"] == "CHAN-NC" and e["tokens"] == cue
            for _, t in e["relations"]}


@pytest.mark.parametrize("text,cue,expected", [
    ("The cardiomediastinal silhouette is unchanged. The heart remains mildly enlarged.",
     "unchanged", {"enlarged"}),
    ("Stable cardiomegaly since the prior exam. The heart size is unchanged.", "unchanged", {"cardiomegaly"}),
    # the heart called abnormal nowhere, or without a no-change cue of its own: nothing
    ("No effusion. Unchanged cardiomediastinal silhouette.", "Unchanged", set()),
    ("Cardiomegaly. Unchanged cardiomediastinal silhouette.", "Unchanged", set()),
    # a size stated in the stable sentence is its own
    ("Unchanged cardiomegaly. Heart size upper limits of normal but stable.", "stable", set()),
], ids=["remains-enlarged-after", "stable-cardiomegaly-before", "normal-heart", "no-cue-of-its-own", "size-stated"])
def test_a_stable_heart_refers_back_to_the_unchanged_enlarged_heart(text, cue, expected):
    """The guide's §6: a stable heart is a refer-back to the enlarged heart of its report (when that heart is
    called unchanged where it is stated, so that its own sentence keeps its class)."""
    assert _refers_back(text, cue) == expected


@pytest.mark.parametrize("text,expected", [
    ("Chronic left apical scarring, not significantly XXXX from prior.",
     {("pleural/parenchymal scarring", "present", "no change")}),
    ("Coarse interstitial markings in both lungs. This is not significantly XXXX since the last exam.",
     {("increased reticular markings/ild pattern", "present", "no change")}),
], ids=["predicate", "refer-back"])
def test_not_significantly_redacted_is_no_change(tmp_path, text, expected):
    """The guide's §6 (no significant change): IU redacts "changed" after "not significantly"."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Dual-lead pacemaker over the right chest with stable intact XXXX placement.",
     {("cardiac pacer and wires", "present", "no change")}),
    ("An AICD is seen in the right chest wall with unchanged placement.",
     {("cardiac pacer and wires", "present", "no change")}),
], ids=["intact", "placement"])
def test_a_stable_placement_after_a_device_is_the_devices(tmp_path, text, expected):
    """The guide's §7: "stable position of the pacemaker" is the device's no change, also where the place comes
    after the device ("with stable intact lead placement")."""
    assert changes_of(tmp_path, text) == expected
