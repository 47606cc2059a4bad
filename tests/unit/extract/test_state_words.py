"""The rules extractor's change classes where a change word states a state, read as
graph/extract/eval/gold/ANNOTATION_GUIDE.md's §6 says (issue 17, sixth round).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import changes_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    ("Mildly increased thoracic kyphosis, unchanged from the prior exam.",
     {("kyphosis", "present", "no change")}),
    ("Increased kyphosis of the thoracic spine, similar to the prior radiograph.",
     {("kyphosis", "present", "no change")}),
    # a comparison of its own makes it a change again
    ("Increased kyphosis of the thoracic spine since the prior radiograph.",
     {("kyphosis", "present", "worsened")}),
], ids=["unchanged-from", "similar-to", "own-comparison"])
def test_the_comparison_of_another_cue_leaves_a_state_word_a_state(tmp_path, text, expected):
    """The guide's §6: "increased kyphosis" is a state unless the sentence compares with a prior; a comparison
    that another cue makes ("similar to the prior") says the state is unchanged."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Faint increased density at the left base, likely due to overlying soft tissues.",
     {("lung opacity", "present", None)}),
    ("Mild increased opacity in the right lower zone, probably breast tissue.",
     {("lung opacity", "present", None)}),
    ("Slightly increased opacity at the left base compared to the right.",
     {("lung opacity", "present", None)}),
    # a prior named makes it a change again
    ("Slightly increased opacity at the left base compared to the right and to the prior study.",
     {("lung opacity", "present", "worsened")}),
    ("Increased opacity at the left base, more than on the prior study, with overlying soft tissues.",
     {("lung opacity", "present", "worsened")}),
], ids=["soft-tissue", "breast", "sides", "sides-and-prior", "outside-and-prior"])
def test_an_increased_density_put_down_to_the_body_wall_or_the_other_side_is_a_state(tmp_path, text, expected):
    """The guide's §6: a density called increased because of overlying soft tissue, or more than on the other
    side ("left worse than right"), states no change."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The previously seen small left pneumothorax is not visualized on this exam.",
     {("pneumothorax", "absent", "resolved")}),
    ("Previously noted left basilar nodule is not identified today.",
     {("mass/nodule (not otherwise specified)", "absent", "resolved")}),
    # a present finding takes the class of the sentence's other cue
    ("The previously described right upper lobe nodule has increased in size.",
     {("mass/nodule (not otherwise specified)", "present", "worsened")}),
], ids=["pneumothorax", "nodule", "present"])
def test_a_previously_seen_finding_that_is_not_seen_is_resolved(tmp_path, text, expected):
    """The guide's §6: a finding no longer seen is CHAN-CON-RES and absent."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Small right pleural effusion, differential diagnosis includes increased atelectasis or tumor progression.",
     {("pleural effusion", "present", None), ("atelectasis", "uncertain", None), ("lung cancer", "uncertain", None)}),
    # a cue before the differential keeps its class
    ("Increased right pleural effusion, differential diagnosis includes atelectasis or tumor progression.",
     {("pleural effusion", "present", "worsened"), ("atelectasis", "uncertain", None),
      ("lung cancer", "uncertain", None)}),
], ids=["in-the-list", "before-the-list"])
def test_a_cue_in_a_differential_diagnosis_changes_nothing(tmp_path, text, expected):
    """The guide's §6: speculation is no change; a cue among the items of a differential diagnosis does not
    reach back to the findings named before it."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The lung volumes remain low.", {("low lung volumes", "present", "no change")}),
    ("Lung volumes are low.", {("low lung volumes", "present", None)}),
], ids=["remain-low", "are-low"])
def test_low_lung_volumes_that_remain_are_unchanged(tmp_path, text, expected):
    """The guide's §6: "remains" is a no-change cue; the finding's name does not swallow it."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Mild diffuse interstitial prominence, worse in the left lung base.",
     {("increased reticular markings/ild pattern", "present", None)}),
    # a comparison with a prior, or no place after it, keeps the change
    ("Mild diffuse interstitial prominence, worse in the left lung base since the prior study.",
     {("increased reticular markings/ild pattern", "present", "worsened")}),
    ("Right pleural effusion, worse on today's study.", {("pleural effusion", "present", "worsened")}),
], ids=["where", "where-since-prior", "no-place"])
def test_a_comparative_before_a_place_says_where_a_finding_is_worse(tmp_path, text, expected):
    """The guide's §6: "left worse than right" states no change; nor does "worse in the left lung base"."""
    assert changes_of(tmp_path, text) == expected


def test_persistence_is_a_no_change_cue(tmp_path):
    """The guide's §6 lists "persistent"; its noun says the same."""
    assert changes_of(tmp_path, "There is persistence of a small right pleural effusion.") == {
        ("pleural effusion", "present", "no change")}
