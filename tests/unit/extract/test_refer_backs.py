"""Refer-backs on IU wordings, read as graph/extract/eval/gold/ANNOTATION_GUIDE.md's §8 says (issue 17, fifth
round): a sentence whose subject is an anaphor is labelled with the findings it refers to, with their side and
what it says about them.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import changes_of, roundtrip, sided_changes_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    # the sentence between states nothing: the reading is of the opacity before it
    ("Patchy opacity in the left upper lobe. Please correlate with symptoms. Findings may reflect pneumonia.",
     {("lung opacity", "left", "present", None), ("pneumonia", "left", "uncertain", None)}),
    # the sign with a side, not the side-less state beside it
    ("Hypoinflated lungs with streaky airspace disease at the right base. It may represent pneumonia.",
     {("low lung volumes", None, "present", None), ("airspace opacity", "right", "present", None),
      ("pneumonia", "right", "uncertain", None)}),
    # the reading's own place ("pleural" of "pleural reaction") states no side: the sign's side
    ("Blunting of the left costophrenic angle. This may be a trace effusion or a pleural reaction.",
     {("costophrenic angle blunting", "left", "present", None), ("pleural effusion", "left", "uncertain", None)}),
], ids=["skips-a-sentence-that-states-nothing", "sided-sign-first", "own-place-without-side"])
def test_a_reading_that_points_back_takes_the_side_of_the_sign_it_reads(tmp_path, text, expected):
    """The guide's §5 and §8: a reading takes the side of the sign it reads, found as a refer-back finds it."""
    assert sided_changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Two tiny nodules in the right upper lobe. These nodules are densely calcified, in keeping with granulomatous "
     "disease.", [("multiple masses/nodules", "present", None)]),
    # through IS_A: the opacities are the atelectasis
    ("Left basilar atelectasis. These opacities are best seen on the lateral view.",
     [("atelectasis", "present", None)]),
    # a change the sentence states keeps it there (the guide's §8: what the sentence says about it)
    ("Bilateral pulmonary nodules. These nodules have increased in size since the prior study.",
     [("multiple masses/nodules", "present", None), ("multiple masses/nodules", "present", "worsened")]),
    # no earlier sentence states it: the demonstrative's finding is the sentence's own
    ("Old fracture of the right 5th rib. These bony lesions could be metastatic.",
     [("bone lesion", "present", None)]),
], ids=["same-finding", "is-a", "changed", "not-stated-before"])
def test_a_finding_a_demonstrative_points_back_to_is_not_repeated(tmp_path, text, expected):
    """The guide's §8: the finding belongs to the sentence that states it and is not repeated."""
    findings = {f for f, _, _ in expected} | {"lung opacity"}
    mentions = roundtrip(tmp_path, {"findings": text}).mentions
    got = {(m.sentence_id, m.finding, m.polarity, m.change) for m in mentions if m.finding in findings}
    assert sorted((g[1:] for g in got), key=str) == sorted(expected, key=str)


@pytest.mark.parametrize("text,expected", [
    ("The heart is enlarged. This has shown definite interval increase since the last radiograph.",
     {("enlarged cardiac silhouette", "present", "worsened")}),
    ("Solitary nodule in the left lower lobe. This is smoothly marginated, and is stable since the CT.",
     {("mass/nodule (not otherwise specified)", "present", "no change")}),
    # a hedge before the cue makes it speculation (the guide's §6)
    ("Left basilar atelectasis. This may have increased since the prior study.",
     {("atelectasis", "present", None)}),
], ids=["shows-increase", "is-x-and-is-stable", "speculation"])
def test_an_opening_pronoun_is_the_subject_of_a_change_cue_anywhere_in_a_sentence_that_names_nothing(
        tmp_path, text, expected):
    """The guide's §8: the sentence whose subject is a pronoun says how the finding it refers to changed."""
    assert changes_of(tmp_path, text) == expected
