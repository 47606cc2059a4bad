"""The rules extractor on a change of the heart's size stated with the heart as its subject ("heart size has
increased", "interval increase in heart size": graph/extract/eval/gold/ANNOTATION_GUIDE.md §6; issue 17, sixth round).

All report sentences here are synthetic, written for these tests (MIMIC-CXR reports state such changes often).
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import changes_of

pytestmark = pytest.mark.extract


_HEART = "enlarged cardiac silhouette"


@pytest.mark.parametrize("text,change", [
    ("The heart size has slightly increased since the previous radiograph.", "worsened"),
    ("Heart size has increased.", "worsened"),
    ("Cardiac size is increased compared to the study of yesterday.", "worsened"),
    ("Interval increase in heart size.", "worsened"),
    ("Moderate increase in the size of the cardiac silhouette.", "worsened"),
    ("The heart is larger than on the earlier exam.", "worsened"),
    ("The cardiac silhouette has increased in size.", "worsened"),
    ("Heart size is decreased from the prior study.", "improved"),
    ("Heart size has decreased, though the heart remains enlarged.", "improved"),
], ids=["since", "verb", "compared", "interval-noun", "noun", "larger", "in-size", "decreased-from", "decreased-verb"])
def test_stated_change_of_heart_size(tmp_path, text, change):
    """The guide's §6 (§2 names `enlarged cardiac silhouette`): an increase of the heart's size relative to a
    prior is the enlarged cardiac silhouette worsened, a decrease improved."""
    assert (_HEART, "present", change) in changes_of(tmp_path, text)


@pytest.mark.parametrize("text,expected", [
    ("Heart size is stable.", set()),
    ("Stable cardiomediastinal silhouette.", set()),
    ("Heart size remains normal.", {(_HEART, "absent", None)}),
    ("Heart size is normal.", {(_HEART, "absent", None)}),
    ("Heart size has decreased and is now normal.", {(_HEART, "absent", None)}),
    ("No increase in heart size.", set()),
    ("Increased heart size.", {(_HEART, "present", None)}),
    ("Increased opacity behind the heart since the prior exam.", {("lung opacity", "present", "worsened")}),
], ids=["stable", "stable-structure", "remains-normal", "normal", "normal-now", "negated", "state", "other-finding"])
def test_heart_size_without_a_stated_change(tmp_path, text, expected):
    """The guide's §6: a normal structure called stable or normal keeps giving nothing or its normal statement
    (a decrease to normal is the normal statement's); a state without comparison ("increased heart size") is an
    enlarged cardiac silhouette with no change; the heart as the place of another finding is no subject."""
    assert changes_of(tmp_path, text) == expected


def test_lung_volumes_verb_of_change(tmp_path):
    """The guide's §6: "have decreased" is a verb of change, so lower lung volumes are a worsening."""
    assert changes_of(tmp_path, "Lung volumes have decreased.") == {("low lung volumes", "present", "worsened")}



def test_heart_subjects_are_read_as_the_finding_but_not_keyword_matched():
    """Ingestion reads a change subject as its finding; the keyword baseline, which reads every synonym in
    every sentence, leaves the heart's normal-structure names alone ("Heart size is normal.")."""
    from graph.extract.eval.gold_eval import GoldSentence, baseline_predictions
    from graph.datasets.iu import IUReport
    from graph.vocabulary import vocabulary

    v = vocabulary()
    assert v.finding_for("heart size") == _HEART
    assert "heart size" not in v.findings[_HEART].synonyms
    text = "Heart size is normal."
    report = IUReport("1", "x", "", "", text, "", (), (), ())
    gold = GoldSentence("1", "findings", 0, len(text), "dev", "", ())
    assert baseline_predictions({"1": report}, [gold], v)[gold.key] == []


def test_the_findings_matcher_sets_a_change_subject_only_beside_a_quantity_word():
    """A normal "heart size" never reaches ConText or the rules: the matcher drops it (the speed of MIMIC-length
    reports, where nearly every report names the heart), and keeps the one whose size has changed."""
    from graph.extract.rules.sections import compose_text
    from graph.extract.rules.spacy_pipeline import build_pipeline

    doc = build_pipeline()(compose_text({"findings": "Heart size is normal. Heart size has increased since the prior."}))
    subjects = [e for e in doc.ents if e.text.lower() == "heart size"]
    assert [e.sent.text.split()[-1] for e in subjects] == ["prior."]
