"""The rules extractor: its RadGraph JSON round-trips through graph.formats.radgraph.parse_radgraph.

All report sentences here are synthetic, written for these tests.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("medspacy")

from graph.extract.rules import compose_text, extract_text, write_radgraph_json  # noqa: E402
from graph.formats.radgraph import DocStudy, parse_radgraph  # noqa: E402
from graph.vocabulary import vocabulary  # noqa: E402

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


def _roundtrip(tmp_path, report, key="r1"):
    path = tmp_path / "out.json"
    write_radgraph_json([(key, report)], path)
    parsed = parse_radgraph(path, vocabulary(), {key: DocStudy("p1", "s1")})
    assert not parsed.rejections, parsed.rejections
    return parsed


@pytest.mark.parametrize("text,expected", CASES, ids=[c[0][:40] for c in CASES])
def test_roundtrip_mentions(tmp_path, text, expected):
    parsed = _roundtrip(tmp_path, {"findings": text})
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
    for eid, ent in doc["entities"].items():
        assert ent["tokens"] == " ".join(tokens[ent["start_ix"]:ent["end_ix"] + 1])
        for rtype, target in ent["relations"]:
            assert rtype in {"located_at", "modify", "suggestive_of"} and target in doc["entities"]
    parsed = _roundtrip(tmp_path, {"impression": "No effusion.", "findings": "Small left effusion.",
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
    parsed = _roundtrip(tmp_path, "No new focal consolidation.")
    assert {(m.finding, m.polarity, m.change) for m in parsed.mentions} == {("consolidation", "absent", None)}


def test_compose_text_and_empty_report(tmp_path):
    assert compose_text({"impression": "b", "findings": "a"}) == "FINDINGS: a IMPRESSION: b"
    assert compose_text("  a \n b ") == "a b"
    parsed = _roundtrip(tmp_path, "")
    assert parsed.mentions == []


def test_streamed_file_is_json(tmp_path):
    path = tmp_path / "many.json"
    n = write_radgraph_json(((f"d{i}", "Small left effusion.") for i in range(5)), path)
    assert n == 5 and len(json.loads(path.read_text())) == 5
