"""The rules extractor's finding recall, issue 17's sixth round: two describing words that share a noun, and
findings the vocabulary lacked (the annotation guide's §2).

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import pytest

from tests.fixtures.extract import sided_changes_of

pytestmark = pytest.mark.extract


@pytest.mark.parametrize("text,expected", [
    ("Scattered alveolar and interstitial opacities in both lower lobes.",
     {("airspace opacity", "bilateral", "present", None),
      ("increased reticular markings/ild pattern", "bilateral", "present", None)}),
    ("No alveolar or interstitial opacities.",
     {("airspace opacity", None, "absent", None), ("increased reticular markings/ild pattern", None, "absent", None)}),
    ("Right apical chronic inflammatory and fibrotic changes, stable.",
     {("chronic inflammatory change", "right", "present", "no change"),
      ("pleural/parenchymal scarring", "right", "present", "no change")}),
    ("Calcified and tortuous aorta.", {("vascular calcification", None, "present", None),
                                      ("tortuous aorta", None, "present", None)}),
    # "patchy" and "central" name no finding with the noun: one finding
    ("Patchy and central interstitial opacities.", {("increased reticular markings/ild pattern", None, "present", None)}),
], ids=["alveolar-and-interstitial", "negated-or", "two-word-adjective-with-change", "calcified-and-tortuous",
        "no-second-finding"])
def test_coordinated_describing_words(tmp_path, text, expected):
    """"Alveolar and interstitial opacities" states alveolar opacities and interstitial opacities, each with the
    sentence's side, polarity and change (observations._coordinated; the annotation guide's §2 names each phrase)."""
    assert sided_changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Prominent epicardial fat pads are again seen.", {("epicardial fat", None, "present", "no change")}),
    ("There is a prominent left pericardial fat pad.", {("epicardial fat", "left", "present", None)}),
    ("Right basilar opacity could represent cardiophrenic fat.",
     {("lung opacity", "right", "present", None), ("epicardial fat", "right", "uncertain", None)}),
], ids=["epicardial-fat-pads-again", "pericardial-fat-pad", "cardiophrenic-fat"])
def test_epicardial_fat(tmp_path, text, expected):
    """Prominent fat at the heart's borders is a finding of its own, named as the guide's `other:<name>` would name
    it (epicardial, pericardial or cardiophrenic fat; vocabulary, issue 17's sixth round)."""
    assert sided_changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Right upper lobe scarring with hilar retraction, unchanged.",
     {("pleural/parenchymal scarring", "right", "present", "no change"),
      ("hilar retraction", "right", "present", "no change")}),
    ("The left hilum is retracted upward.", {("hilar retraction", "left", "present", None)}),
], ids=["hilar-retraction", "hilum-is-retracted"])
def test_hilar_retraction(tmp_path, text, expected):
    """A hilum drawn up by scarring is a finding of its own, named as the guide's `other:<name>` would name it
    (vocabulary, issue 17's sixth round)."""
    assert sided_changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Unchanged calcified granulomas/lymph nodes in both hila.",
     {("calcified nodule", "bilateral", "present", "no change"),
      ("granulomatous disease", "bilateral", "present", "no change")}),
    ("Calcified granuloma and enlarged lymph nodes.",
     {("calcified nodule", None, "present", None), ("enlarged hilum", None, "present", None)}),
], ids=["slash-joined-nouns", "own-describing-word"])
def test_shared_describing_word(tmp_path, text, expected):
    """A describing word that opens a finding goes with the noun joined to it ("calcified granulomas / lymph
    nodes": calcified lymph nodes, granulomatous disease; observations._shared_describer, the guide's §2), unless
    that noun has a describing word of its own."""
    assert sided_changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The chin overlies both lung apices.", {("artifact", "bilateral", "present", None)}),
    ("The left apex is partly obscured by the mandible.", {("artifact", "left", "present", None)}),
    ("Nipple piercings project over both lower lungs.", {("artifact", "bilateral", "present", None)}),
    ("Overlying jewelry at the right base.", {("artifact", "right", "present", None)}),
], ids=["chin", "mandible", "piercings", "jewelry"])
def test_overlying_objects(tmp_path, text, expected):
    """The patient's chin or mandible over the apices, jewelry and piercings are overlying-object artifacts (the
    guide's §2; vocabulary, issue 17's sixth round)."""
    assert sided_changes_of(tmp_path, text) == expected


def test_coordinated_words_open_the_text():
    """The first describing word may be the text's first token (a sentence given alone, without a section
    header)."""
    from graph.extract.rules import build_pipeline, doc_to_radgraph
    from graph.vocabulary import vocabulary

    v = vocabulary()
    doc = doc_to_radgraph(build_pipeline(v)("Alveolar and interstitial opacities."), v)
    spans = {(e["tokens"], e["label"], tuple(r[0] for r in e["relations"])) for e in doc["entities"].values()}
    assert spans == {("Alveolar", "OBS-DP", ("modify",)), ("interstitial opacities", "OBS-DP", ()),
                     ("opacities", "OBS-DP", ())}
