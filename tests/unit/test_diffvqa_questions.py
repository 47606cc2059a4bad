"""Medical-Diff-VQA questions without Neo4j: templates and libraries, parsing, the mapping, the answer
grammar, the uncertain-finding policy and seeded generation over hand-made study facts."""

from __future__ import annotations

import pandas as pd
import pytest

from graph.questions import grammar as g
from graph.questions.answer import answer, level_of
from graph.questions.facts import Observation, StudyFacts, type_words
from graph.questions.generate import generate_frame
from graph.questions.mapping import MAPPING_FILE, ZONES, MappingError, Place, load_mapping, mapping, unmapped
from graph.questions.parse import QuestionParseError, parse_question
from graph.questions.templates import DISEASE_NAMES, LOCATIONS, TEMPLATES


def obs(finding, anatomy, polarity="present", severity=None, evidence=(), textures=()):
    return Observation(anatomy, finding, polarity, severity, tuple(evidence), tuple(textures))


def study(sid, order, view="PA", *observations, pid="7", stated=()):
    return StudyFacts(sid, pid, order, view, list(observations), list(stated))


def test_the_libraries_are_the_generators():
    assert len(DISEASE_NAMES) == 30 and DISEASE_NAMES[:3] == ("pleural effusion", "atelectasis", "cardiomegaly")
    assert DISEASE_NAMES[12] == "tortuosity of the descending aorta " and DISEASE_NAMES[-1] == "air collection"
    assert sum(len(t) for t in TEMPLATES.values()) == 17  # 16 of create_question_set plus "is the xxx bilateral?"


def test_each_template_has_its_own_key_and_parses_back_to_it():
    keys = [t.key for templates in TEMPLATES.values() for t in templates]
    assert len(set(keys)) == len(keys) == 17
    for qtype, templates in TEMPLATES.items():
        for t in templates:
            assert t.key.startswith(qtype)
            filled = t.text.replace("lxxx", "right lung").replace("xxx", "left lung" if qtype == "abnormality" else "edema")
            assert parse_question(filled).template.key == t.key, filled


@pytest.mark.parametrize("question, qtype, disease, sides, zones", [
    ("what abnormalities are seen in this image?", "abnormality", None, None, None),
    ("what abnormalities are seen in the left lower lung?", "abnormality", None, {"left"}, {"lower", "base"}),
    ("is there evidence of any abnormalities in this image?", "abnormality", None, None, None),
    ("Is there evidence of effusion in this image?", "presence", "pleural effusion", None, None),
    ("is there  infection?", "presence", "pneumonia", None, None),
    ("is there edema in the lung bases?", "presence", "edema", set(), {"lower", "base"}),
    ("is the atelectasis bilateral?", "presence", "atelectasis", None, None),
    ("is this AP view?", "view", None, None, None),
    ("is the edema located on the left side or right side?", "location", "edema", None, None),
    ("what level is the pneumothorax?", "level", "pneumothorax", None, None),
    ("what type is the lung opacity?", "type", "lung opacity", None, None),
    ("what has changed in the right lung area?", "difference", None, {"right"}, set()),
])
def test_questions_parse_into_type_and_slots(question, qtype, disease, sides, zones):
    q = parse_question(question)
    assert (q.question_type, q.disease) == (qtype, disease)
    assert (q.location is None) == (sides is None)
    if q.location is not None:
        assert (set(q.location.sides), set(q.location.zones)) == (sides, zones)


@pytest.mark.parametrize("question, message", [
    ("what is the answer?", "matches none"), ("is there a unicorn?", "not a Medical-Diff-VQA disease"),
    ("is there edema in the kitchen?", "not a location")])
def test_questions_outside_the_templates_are_refused(question, message):
    with pytest.raises(QuestionParseError, match=message):
        parse_question(question)


def test_the_mapping_names_stated_findings_and_refuses_unknown_names(tmp_path):
    m = mapping()
    assert m.disease("calcified nodule") == "granuloma" and m.disease("infiltration") is None
    assert m.disease("tortuous aorta", "descending aorta") == "tortuosity of the descending aorta "
    assert m.disease("tortuous aorta", "aortic arch") == "tortuosity of the thoracic aorta"
    assert m.level("moderate") == "moderate" and m.level("large") is None
    assert m.place("left lower lung zone") == Place("left", "lower") and m.place("mediastinum") == Place(None, None)
    rows = unmapped(m)
    assert {"kind": "finding", "name": "infiltration", "note": "anatomicalfinding"} in rows
    assert {r["name"] for r in rows if r["kind"] == "disease"} >= {"hypoxemia", "thymoma"}
    assert not {r["name"] for r in rows if r["kind"] == "finding"} & set(m.findings)
    bad = tmp_path / "m.yaml"
    bad.write_text(MAPPING_FILE.read_text().replace("hernia: hernia", "hernia: hiatus"))
    with pytest.raises(MappingError, match="'hiatus' is not a Diff-VQA disease"):
        load_mapping(bad)
    bad.write_text(MAPPING_FILE.read_text().replace('"{side} lung": ["{side}", null]', '"{side} lung": [both, null]'))
    with pytest.raises(MappingError, match="side 'both' is not in the location library"):
        load_mapping(bad)
    assert set(ZONES) <= set(LOCATIONS)  # a zone is a word of location_lib.csv


def test_difference_grammar_is_the_generators():
    assert g.difference_answer([], [], []) == "nothing has changed."
    assert g.difference_caption(["edema"], []) == "the main image has an additional finding of edema than the reference image. "
    assert g.difference_caption(["a", "b"], ["c", "d", "e"]) == (
        "the main image has additional findings of a, and b than the reference image. "
        "the main image is missing the findings of c, d, and e than the reference image. ")
    assert g.difference_answer([g.level_change("edema", "mild", "severe")], [], ["pneumonia"]) == (
        "the level of edema has changed from mild to severe. "
        "the main image is missing the finding of pneumonia than the reference image. ")


@pytest.mark.parametrize("places, words", [
    ([Place("left", "lower")], "left lower lung"), ([Place("left", None), Place("left", "upper")], "left upper lung"),
    ([Place("left", "lower"), Place("left", "upper")], "left"), ([Place("right", "base")], "right"),
    ([Place("left", "lower"), Place("right", "base")], "bibasilar"), ([Place("left", "upper"), Place("right", None)], "bilateral"),
    ([Place(None, None)], None)])
def test_location_words(places, words):
    assert g.location_words(places) == words


def test_uncertain_counts_as_present_unless_strict():
    s = study("2", 2, "PA", obs("pneumonia", "left lower lung zone", "uncertain"),
              obs("pleural effusion", "right costophrenic angle", "absent"))
    q = parse_question("is there pneumonia?")
    assert answer(q, s).text == "yes" and answer(q, s, strict=True).text == "no"
    assert list(s.negated()) == ["pleural effusion"]
    assert answer(parse_question("what abnormalities are seen in this image?"), s, strict=True).text == "none"


def test_levels_types_and_is_a_parents():
    o = [obs("pleural effusion", "left costophrenic angle", severity="mild"),
         obs("pleural effusion", "right costophrenic angle", severity="moderate", evidence=["layering effusion"]),
         obs("calcified nodule", "right mid lung zone", textures=["texture|yes|calcified"])]
    assert level_of(o[:2]) == "moderate" and level_of([obs("pneumothorax", "left apical zone", severity="large")]) is None
    assert type_words(o[1:2]) == ["layering"] and type_words(o[2:]) == ["calcified"]
    # a linear atelectasis is named atelectasis; its IS_A parent lung opacity is not named
    s = study("1", 1, "PA", obs("linear/patchy atelectasis", "left lower lung zone"))
    assert answer(parse_question("what abnormalities are seen in this image?"), s).text == "atelectasis"


def test_stated_changes_make_the_basis_both():
    ref = study("1", 1, "PA", obs("pneumothorax", "left apical zone"))
    main = study("2", 2, "AP", stated=[("1", "left apical zone", "pneumothorax", "resolved")])
    a = answer(parse_question("what has changed compared to the reference image?"), main, ref)
    assert (a.text, a.basis) == ("the main image is missing the finding of pneumothorax than the reference image. ",
                                 "both")
    a = answer(parse_question("what has changed compared to the reference image?"), main, study("0", 0))
    assert (a.text, a.basis) == ("nothing has changed.", "derived")


def _cohort(patients=30):
    studies = {}
    for p in range(patients):
        for k in range(1, 5):
            sid = f"{p}-{k}"
            studies[sid] = study(sid, k, "AP" if k == 2 else "LATERAL" if k == 3 and p % 5 == 0 else "PA",
                                 obs("pleural effusion", "left lower lung zone", severity=["mild", "moderate"][k % 2]),
                                 obs("atelectasis", f"{['left', 'right'][p % 2]} lower lung zone", "present" if k > 1 else "absent"),
                                 obs("calcified nodule", "right mid lung zone", textures=["texture|yes|calcified"]), pid=str(p))
    return studies


def test_generation_draws_by_the_generators_rules_and_is_seeded():
    studies = _cohort()
    a, b, c = generate_frame(studies, seed=3), generate_frame(studies, seed=3), generate_frame(studies, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert set(a["question_type"]) == set(TEMPLATES)
    order = {sid: s.order for sid, s in studies.items()}
    assert all(order[r] < order[m] for m, r in zip(a["study_id"], a["ref_id"], strict=True))
    assert not {sid for sid, s in studies.items() if not s.frontal} & (set(a["study_id"]) | set(a["ref_id"]))
    assert (a.groupby(["study_id", "ref_id"])["question"].nunique() == a.groupby(["study_id", "ref_id"]).size()).all()
    # references are drawn among all earlier frontal studies, not only the previous one
    assert len({order[r] for m, r in zip(a["study_id"], a["ref_id"], strict=True) if m.endswith("-4")}) > 1


def test_cli_unmapped_and_an_unparseable_ask_need_no_server():
    from typer.testing import CliRunner

    from flows.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["diffvqa", "unmapped", "--format", "csv"])
    assert result.exit_code == 0 and "finding,infiltration,anatomicalfinding" in result.output
    assert "disease,hypoxemia," in result.output and "severity,large," in result.output
    result = runner.invoke(app, ["diffvqa", "ask", "why is the sky blue?", "--study", "1"])
    assert result.exit_code == 1 and "Traceback" not in result.output  # nothing answered
    assert "what has changed compared to the reference image?" in " ".join(result.output.split())
