"""The rules extractor's assertion and change on IU wordings, read as graph/extract/eval/gold/ANNOTATION_GUIDE.md's §3
and §6 say (issue 17, sixth round).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import changes_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    ("Possibility of a right upper lobe pneumonia.", {("pneumonia", "uncertain", None)}),
    ("Further imaging could exclude the possibility of a lung nodule.",
     {("mass/nodule (not otherwise specified)", "uncertain", None)}),
    ("A small pleural effusion is a possibility.", {("pleural effusion", "uncertain", None)}),
], ids=["before", "exclude-the", "after"])
def test_a_possibility_is_a_hedge(tmp_path, text, expected):
    """The guide's §3: "possible" hedges a finding, and so does its noun ("possibility of X", "X is a
    possibility")."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Recurrent small right pleural effusion.", {("pleural effusion", "present", "new")}),
    ("There is recurrence of the left pneumothorax.", {("pneumothorax", "present", "new")}),
    # a negated recurrence states no finding and no change
    ("No evidence of recurrence. No pneumothorax.", {("pneumothorax", "absent", None)}),
], ids=["recurrent", "recurrence-of", "negated"])
def test_a_recurrent_finding_is_new(tmp_path, text, expected):
    """The guide's §6: a finding that has come back was not on the prior study, so it is new (CHAN-CON-AP)."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("No focal consolidation, no definite pleural effusion seen, right hilar calcifications and a small nodule "
     "in the right lung.",
     {("consolidation", "absent", None), ("pleural effusion", "absent", None), ("calcification", "present", None),
      ("mass/nodule (not otherwise specified)", "present", None)}),
    # the next clause's own negation still negates
    ("No definite pleural effusion seen, no pneumothorax.",
     {("pleural effusion", "absent", None), ("pneumothorax", "absent", None)}),
], ids=["present-after", "negated-after"])
def test_a_negation_ends_at_seen_and_its_comma(tmp_path, text, expected):
    """The guide's §3: "no X seen" negates X; the findings of the clause after its comma are stated as seen."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Developing or resolving right basilar pneumonia.", {("pneumonia", "present", None)}),
    ("Improved left lower lobe consolidation with residual or recurrent pneumonia.",
     {("consolidation", "present", "improved"), ("pneumonia", "present", None)}),
], ids=["two-cues", "residual"])
def test_two_courses_offered_are_no_change(tmp_path, text, expected):
    """The guide's §6: speculation ("developing or resolving pneumonia") states no change."""
    assert changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("There are streaky opacities in the lung bases unchanged, probably chronic atelectasis.",
     {("lung opacity", "present", "no change"), ("atelectasis", "uncertain", None)}),
    ("Mild cardiomegaly is stable, small left pleural effusion.",
     {("enlarged cardiac silhouette", "present", "no change"), ("pleural effusion", "present", None)}),
    # a cue that opens its clause still describes what follows its comma
    ("There is stable, mild cardiomegaly.", {("enlarged cardiac silhouette", "present", "no change")}),
], ids=["reading-after", "finding-after", "opener"])
def test_a_cue_before_a_comma_is_its_findings(tmp_path, text, expected):
    """The guide's §6: a cue after its finding ("opacities ... unchanged,") changes that finding, not the
    finding named after the comma."""
    assert changes_of(tmp_path, text) == expected
