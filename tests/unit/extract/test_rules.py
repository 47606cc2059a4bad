"""The rules extractor: its RadGraph JSON round-trips through graph.formats.radgraph.parse_radgraph.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import json

import pytest

from graph.extract.rules import compose_text, extract_text, write_radgraph_json
from graph.vocabulary import vocabulary
from tests.fixtures.extract import roundtrip, sided_changes_of

pytestmark = pytest.mark.extract

# (text, expected {(anatomy, finding, polarity, severity, change)}) -- change as cxrkg progression class
CASES = [
    ("Small left pleural effusion.",
     {("left costophrenic angle", "pleural effusion", "present", "small", None)}),
    ("No pneumothorax.",
     {("right apical zone", "pneumothorax", "absent", None, None),
      ("left apical zone", "pneumothorax", "absent", None, None)}),
    ("Moderate cardiomegaly is unchanged.",
     {("cardiac silhouette", "enlarged cardiac silhouette", "present", "moderate", "no change")}),
    ("Possible right lower lobe pneumonia.",
     {("right lower lung zone", "pneumonia", "uncertain", None, None)}),
    ("The right pleural effusion has increased.",
     {("right costophrenic angle", "pleural effusion", "present", None, "worsened")}),
    ("Mild pulmonary edema has improved.",
     {("right lung", "pulmonary edema/hazy opacity", "present", "mild", "improved"),
      ("left lung", "pulmonary edema/hazy opacity", "present", "mild", "improved")}),
    ("New consolidation in the left upper lobe.",
     {("left upper lung zone", "consolidation", "present", None, "new")}),
    ("The left pneumothorax has resolved.",
     {("left apical zone", "pneumothorax", "absent", None, "resolved")}),
    ("The endotracheal tube has been removed.",
     {("trachea", "endotracheal tube", "absent", None, "resolved")}),
    ("The nasogastric tube has been advanced.",
     {("abdomen", "enteric tube", "present", None, "repositioned")}),
    ("Large right pleural effusion, new since the prior study.",
     {("right costophrenic angle", "pleural effusion", "present", "large", "new")}),
    ("There is no focal consolidation, pleural effusion or pneumothorax.",
     {(side + " lung", "consolidation", "absent", None, None) for side in ("left", "right")}
     | {(side + " costophrenic angle", "pleural effusion", "absent", None, None) for side in ("left", "right")}
     | {(side + " apical zone", "pneumothorax", "absent", None, None) for side in ("left", "right")}),
    ("Stable calcified granuloma in the right upper lobe.",
     {("right upper lung zone", "calcified nodule", "present", None, "no change")}),
    ("Mild thoracic scoliosis.",
     {("spine", "scoliosis", "present", "mild", None)}),
    ("Small hiatal hernia may be present.",
     {("mediastinum", "hernia", "uncertain", "small", None)}),
]




@pytest.mark.parametrize("text,expected", CASES, ids=[c[0][:40] for c in CASES])
def test_roundtrip_mentions(tmp_path, text, expected):
    parsed = roundtrip(tmp_path, {"findings": text})
    got = {(m.anatomy, m.finding, m.polarity, m.severity.lower() if m.severity else None, m.change)
           for m in parsed.mentions}
    assert got == expected
    assert {m.section for m in parsed.mentions} <= {"findings"}


def test_output_shape_and_sections(tmp_path):
    doc = extract_text({"impression": "No effusion.", "findings": "Small left effusion.",
                        "indication": "Rule out pneumonia."}, "k")["k"]
    assert set(doc) == {"text", "entities", "data_source", "data_split"} and doc["data_split"] == "inference"
    tokens = doc["text"].split(" ")
    assert tokens[:2] == ["INDICATION", ":"] and "FINDINGS" in tokens and "IMPRESSION" in tokens
    assert tokens.index("FINDINGS") < tokens.index("IMPRESSION")
    for ent in doc["entities"].values():
        assert ent["tokens"] == " ".join(tokens[ent["start_ix"]:ent["end_ix"] + 1])
        for rtype, target in ent["relations"]:
            assert rtype in {"located_at", "modify", "suggestive_of"} and target in doc["entities"]
    parsed = roundtrip(tmp_path, {"impression": "No effusion.", "findings": "Small left effusion.",
                                   "indication": "Rule out pneumonia."})
    by_section = {(m.section, m.finding, m.polarity) for m in parsed.mentions}
    assert ("indication", "pneumonia", "uncertain") in by_section
    assert ("findings", "pleural effusion", "present") in by_section
    assert ("impression", "pleural effusion", "absent") in by_section


def test_suggestive_of_relation():
    doc = extract_text("Right basilar opacity suggestive of pneumonia.", "k")["k"]
    ents = doc["entities"]
    opacity = next(e for e in ents.values() if e["tokens"] == "opacity")
    target = [t for r, t in opacity["relations"] if r == "suggestive_of"]
    assert target and ents[target[0]]["tokens"] == "pneumonia"


def test_no_new_is_not_a_new_finding(tmp_path):
    parsed = roundtrip(tmp_path, "No new focal consolidation.")
    assert {(m.finding, m.polarity, m.change) for m in parsed.mentions} == {("consolidation", "absent", None)}


def test_compose_text_and_empty_report(tmp_path):
    assert compose_text({"impression": "b", "findings": "a"}) == "FINDINGS: a IMPRESSION: b"
    assert compose_text("  a \n b ") == "a b"
    parsed = roundtrip(tmp_path, "")
    assert parsed.mentions == []


def test_streamed_file_is_json(tmp_path):
    path = tmp_path / "many.json"
    n = write_radgraph_json(((f"d{i}", "Small left effusion.") for i in range(5)), path)
    assert n == 5 and len(json.loads(path.read_text())) == 5


def _mentions(tmp_path, report):
    return {(m.anatomy, m.finding, m.polarity, m.change) for m in roundtrip(tmp_path, report).mentions}


@pytest.mark.parametrize("report,expected", [
    # a sentence that refers back changes the present findings of the previous sentence
    ({"findings": "Small right pleural effusion. Increased since the prior study."},
     {("right costophrenic angle", "pleural effusion", "present", "worsened")}),
    ({"impression": "1. Left base atelectasis. 2. This has improved compared to the prior exam."},
     {("left lower lung zone", "atelectasis", "present", "improved")}),
    # ... and of nothing when that sentence states only absent findings
    ({"findings": "No pneumothorax. Unchanged."},
     {(s + " apical zone", "pneumothorax", "absent", None) for s in ("left", "right")}),
    # a section that opens with it: the report's earlier present findings without a change
    ({"findings": "Moderate hiatal hernia.", "impression": "Increased since the prior study."},
     {("mediastinum", "hernia", "present", "worsened")}),
    # "findings" after a sentence of absences: the section's earlier present findings; "prior chest CT" is
    # a study, not a place
    ({"impression": "Moderate hiatal hernia. No pneumothorax. Findings are unchanged compared with prior chest CT."},
     {("mediastinum", "hernia", "present", "no change")}
     | {(s + " apical zone", "pneumothorax", "absent", None) for s in ("left", "right")}),
], ids=["previous-sentence", "numbered-list", "absent-only", "section-opening", "findings-after-absences"])
def test_refer_back(tmp_path, report, expected):
    assert _mentions(tmp_path, report) == expected


@pytest.mark.parametrize("text,expected", [
    ("Decreasing lung volumes.", {("lungs", "low lung volumes", "present", "worsened")}),
    ("Lung volumes are increased compared to the prior study.", {("lungs", "low lung volumes", "present", "improved")}),
    ("Improved aeration of the left lung base.", {("left lower lung zone", "low lung volumes", "present", "improved")}),
    ("Decreased lung volumes.", {("lungs", "low lung volumes", "present", None)}),  # a state, not a change
    # change subjects only with a change; "lung volumes are normal" is a normal statement (the guide's §4)
    ("Lung volumes are normal. Aeration of the lungs is normal.",
     {("lungs", "low lung volumes", "absent", None), ("right lung", "hyperaeration", "absent", None),
      ("left lung", "hyperaeration", "absent", None)}),
    ("The lungs are hyperinflated with increased retrosternal airspace.",
     {("lungs", "hyperaeration", "present", None)}),  # "increased" is the airspace's, not a change
    ("The heart is large, unchanged from the prior exam.",
     {("cardiac silhouette", "enlarged cardiac silhouette", "present", "no change")}),
    ("Lines and tubes are unchanged.", {("chest", "support devices", "present", "no change")}),
    ("Stable calcified right hilar lymph nodes.",
     {("right hilar structures", "granulomatous disease", "present", "no change")}),
    ("Bone density is decreased.", set()),
], ids=["decreasing-volumes", "increased-volumes", "aeration", "state", "no-change-subject", "attributive",
        "heart-is-large", "lines-and-tubes", "calcified-nodes", "bone-density"])
def test_change_subjects_and_new_forms(tmp_path, text, expected):
    assert _mentions(tmp_path, {"findings": text}) == expected


@pytest.mark.parametrize("text,side", [
    ("Dextroscoliosis of the thoracic spine.", "right"),
    ("Mild dextro curvature of the thoracic spine.", "right"),
    ("Mild rightward curvature of the thoracic spine.", "right"),
    ("Mild right apex curvature of the lower thoracic spine.", "right"),
    ("Thoracic scoliosis, convex to the left.", "left"),
    ("Mild levoscoliosis.", "left"),
    ("Mild scoliosis.", None),
])
def test_scoliosis_direction(tmp_path, text, side):
    from graph.extract.eval.evaluate import curve_sides

    doc = extract_text({"findings": text}, "k")["k"]
    assert curve_sides(doc, "scoliosis", vocabulary()) == ({side} if side else set())
    # ingestion still places the curve on the side-less spine
    mentions = roundtrip(tmp_path, {"findings": text}).mentions
    assert {(m.anatomy, m.finding) for m in mentions} == {("spine", "scoliosis")}


# (text, expected {(finding, polarity)}): normal statements read back as the absences they assert
NORMALS = [
    ("The lungs are clear.", {("lung opacity", "absent")}),
    ("Heart size and pulmonary vasculature are normal.",
     {("enlarged cardiac silhouette", "absent"), ("vascular congestion", "absent")}),
    ("Normal cardiomediastinal silhouette.", {("enlarged cardiac silhouette", "absent"),
                                              ("mediastinal widening", "absent")}),
    ("The lungs are normally inflated and clear.", {("low lung volumes", "absent"), ("lung opacity", "absent")}),
    ("The costophrenic angles are sharp and the trachea is midline.",
     {("costophrenic angle blunting", "absent"), ("mediastinal displacement", "absent")}),
    ("The heart size is probably normal.", {("enlarged cardiac silhouette", "uncertain")}),
    ("The lungs are otherwise clear.", set()),  # denies only what the report did not name
    ("No acute cardiopulmonary abnormality.", set()),  # names no structure
    ("The lungs are not clear.", set()),
    ("Heart size is enlarged but the mediastinum is normal.",
     {("enlarged cardiac silhouette", "present"), ("mediastinal widening", "absent")}),
]


@pytest.mark.parametrize("text,expected", NORMALS, ids=[c[0][:40] for c in NORMALS])
def test_normal_statements_state_absences(tmp_path, text, expected):
    parsed = roundtrip(tmp_path, {"findings": text})
    assert {(m.finding, m.polarity) for m in parsed.mentions} == expected
    assert not {"clear", "normal", "sharp", "midline"} & set(parsed.unmapped_terms)


def test_a_stated_side_is_kept_where_the_region_has_none(tmp_path):
    parsed = roundtrip(tmp_path, {"findings": "Left PICC tip at the cavoatrial junction. Small right effusion."})
    got = {(m.finding, m.side, vocabulary().regions[m.anatomy].side) for m in parsed.mentions}
    assert ("picc", "left", None) in got  # the SVC has no side; the statement does
    assert ("pleural effusion", "right", "right") in got





@pytest.mark.parametrize("text,expected", [
    # both sides named in one phrase are bilateral
    ("Bibasilar airspace opacities, right greater than left.", {("airspace opacity", "bilateral", "present", None)}),
    ("Low lung volumes bilaterally.", {("low lung volumes", "bilateral", "present", None)}),
    # a place that ends inside a finding's name keeps its side ("left lower lung" + "lung nodule")
    ("Dense left lower lung nodule.", {("mass/nodule (not otherwise specified)", "left", "present", None)}),
], ids=["greater-than", "bilaterally", "anatomy-inside-finding"])
def test_sides_of_coordinated_and_nested_phrases(tmp_path, text, expected):
    assert sided_changes_of(tmp_path, text) == expected


def test_lingula_is_left(tmp_path):
    parsed = roundtrip(tmp_path, {"findings": "Calcified granuloma in the lingula."})
    assert {vocabulary().regions[m.anatomy].side for m in parsed.mentions} == {"left"}


@pytest.mark.parametrize("text,expected", [
    # a cue that opens its sentence applies to the list after it, up to the next cue
    ("Stable appearance of the enteric tube and left PICC.",
     {("enteric tube", None, "present", "no change"), ("picc", "left", "present", "no change")}),
    ("Stable mediastinal contours with aortic tortuosity.", {("tortuous aorta", None, "present", "no change")}),
    ("Stable cardiomegaly with new right effusion.",
     {("enlarged cardiac silhouette", None, "present", "no change"), ("pleural effusion", "right", "present", "new")}),
    # seen / not seen on the prior study: no change / new, and "not" negates nothing
    ("Right upper lobe nodule, not present on the prior study.",
     {("mass/nodule (not otherwise specified)", "right", "present", "new")}),
    ("Scarring in the left apex as before.", {("pleural/parenchymal scarring", "left", "present", "no change")}),
    ("Near-complete resolution of the right effusion.", {("pleural effusion", "right", "present", "improved")}),
    # ... and so does a cue that opens a clause after a comma
    ("Heart size is normal, stable mediastinal contours with aortic tortuosity.",
     {("enlarged cardiac silhouette", None, "absent", None), ("tortuous aorta", None, "present", "no change")}),
], ids=["list", "named-inside-normal", "next-cue", "not-on-prior", "as-before", "near-complete", "clause"])
def test_change_cues_over_lists_and_priors(tmp_path, text, expected):
    assert sided_changes_of(tmp_path, text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Small left effusion. The lungs are otherwise grossly clear.", {("pleural effusion", "left", "present", None)}),
    ("The lungs remain clear, aside from mild apical scarring.",
     {("pleural/parenchymal scarring", None, "present", None)}),
    ("Cardiac and mediastinal contours are within normal limits.",
     {("enlarged cardiac silhouette", None, "absent", None), ("mediastinal widening", None, "absent", None)}),
], ids=["otherwise-adverb", "aside-from", "cardiac-and-mediastinal"])
def test_normal_statement_exceptions(tmp_path, text, expected):
    assert sided_changes_of(tmp_path, text) == expected


def test_a_run_of_periods_ends_the_sentence_for_the_radgraph_reader(tmp_path):
    parsed = roundtrip(tmp_path, {"findings": "Increased interstitial opacities.. No pleural effusion."})
    sentences = {m.finding: m.sentence_id for m in parsed.mentions}
    assert sentences["pleural effusion"] != sentences["increased reticular markings/ild pattern"]


def test_the_pipeline_does_not_load_pytorch(tmp_path):
    """spaCy's thinc would import PyTorch (about 500 MB per extraction worker); it stays importable."""
    import subprocess
    import sys

    code = ("import sys; from graph.extract.rules import build_pipeline; build_pipeline(); "
            "assert 'torch' not in sys.modules; import importlib.util; print(importlib.util.find_spec('torch') is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() in ("True", "False")  # False only where PyTorch is not installed at all


@pytest.mark.parametrize("text,expected", [
    # a reading in a sentence that points back takes the place of the finding it reads
    ("Right hilar calcified lymph nodes. These likely represent prior granulomatous disease.",
     {("granulomatous disease", "right", "present", None), ("granulomatous disease", "right", "uncertain", None)}),
    ("Patchy left basilar opacity. This may represent pneumonia.",
     {("lung opacity", "left", "present", None), ("pneumonia", "left", "uncertain", None)}),
    # ... and nowhere else
    ("Patchy left basilar opacity. Pneumonia is not excluded.",
     {("lung opacity", "left", "present", None), ("pneumonia", None, "uncertain", None)}),
    # the procedure or device named is the finding, not "postsurgical changes"
    ("Postsurgical changes of prior CABG.", {("cabg grafts", None, "present", None)}),
    ("Postsurgical changes in the left hemithorax.", {("postsurgical changes", "left", "present", None)}),
], ids=["reading-of-nodes", "may-represent", "no-pointer", "generic-of-named", "generic-alone"])
def test_readings_that_point_back_and_named_procedures(tmp_path, text, expected):
    assert sided_changes_of(tmp_path, text) == expected


def test_a_vocabulary_without_the_predicate_finding_is_named_in_the_error(tmp_path):
    """"The heart is large" is matched by a predicate rule whose finding is the vocabulary's "heart large"; a
    vocabulary that maps that phrase to nothing fails with an error naming it, not with a KeyError."""
    from graph.vocabulary import VOCAB_FILE, load_vocabulary

    text = VOCAB_FILE.read_text(encoding="utf-8")
    assert text.count(" heart large,") == 1
    path = tmp_path / "vocab.yaml"
    path.write_text(text.replace(" heart large,", ""), encoding="utf-8")
    v = load_vocabulary(path)
    assert v.finding_for("heart large") is None
    enlarged = extract_text("The heart is enlarged.", v=v)["doc"]["entities"].values()  # the rest still extracts
    assert [e["tokens"] for e in enlarged if e["label"] == "OBS-DP"] == ["enlarged"]
    with pytest.raises(ValueError, match='"heart large" to no finding'):
        extract_text("The heart is large.", v=v)
