"""Parsers on hand-made files in the released formats, the real RadGraph-XL sample, and malformed input."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from graph.formats.metadata import read_metadata, study_datetime
from graph.formats.radgraph import DocStudy, parse_radgraph, parse_radgraph_chunks, read_doc_mapping, study_for_doc_key
from graph.formats.scene_graph import parse_scene_graph
from graph.records import InputError
from graph.vocabulary import vocabulary
from tests.fixtures.inputs import comparison, radgraph_doc, scene_graph, write_radgraph, write_scene_graph

V = vocabulary()
IMG1 = "aaaaaaaa-00000000-00000000-00000000-00000001"
IMG2 = "aaaaaaaa-00000000-00000000-00000000-00000002"
SAMPLE = Path(__file__).resolve().parents[2] / "graph" / "samples" / "radgraph_xl"


def test_scene_graph_mentions_polarity_severity_and_comparisons(tmp_path):
    g = scene_graph(IMG2, 10000001, 50000002, "2150-03-04 10:22:31",
                    {"left costophrenic angle": [["anatomicalfinding|yes|pleural effusion", "nlp|yes|abnormal"],
                                                 ["anatomicalfinding|no|pneumothorax", "nlp|yes|normal"]]},
                    relationships=[comparison(IMG2, IMG1, "left costophrenic angle", "worsened", "pleural effusion")],
                    severity={"left costophrenic angle": [["severity|yes|moderate"], []]})
    pf = parse_scene_graph(write_scene_graph(tmp_path, g), V)
    assert [(s.study_id, s.patient_id, s.study_datetime.isoformat()) for s in pf.studies] == \
        [("50000002", "10000001", "2150-03-04T10:22:31")]
    by = {(m.finding, m.change): m for m in pf.mentions}
    eff = by[("pleural effusion", None)]
    assert (eff.polarity, eff.severity, eff.severity_score, eff.anatomy) == ("present", "moderate", 2, "left costophrenic angle")
    assert by[("pneumothorax", None)].polarity == "absent"
    stated = by[("pleural effusion", "worsened")]
    assert stated.prior_image_id == IMG1 and stated.polarity is None
    assert all(m.finding != "abnormal" for m in pf.mentions)  # nlp tags are not findings


def test_scene_graph_multi_label_comparison_is_counted_not_loaded(tmp_path):
    rel = comparison(IMG2, IMG1, "left lung", "worsened", "lung opacity")
    rel["relationship_names"] = ["comparison|yes|worsened", "comparison|yes|no change"]
    g = scene_graph(IMG2, 1, 2, None, {}, relationships=[rel])
    pf = parse_scene_graph(write_scene_graph(tmp_path, g), V)
    assert pf.ambiguous_comparisons == 1 and pf.mentions == []
    assert pf.studies[0].study_datetime is None


@pytest.mark.parametrize("mutate, field", [
    (lambda g: g.update(study_id={"not": "an id"}), "study_id"),
    (lambda g: g["attributes"][0].update(phrases="one phrase"), "attributes[0].phrases"),
    (lambda g: g["attributes"][0]["severity_cues"].append([]), "attributes[0].severity_cues"),
    (lambda g: g["attributes"][0]["attributes"][0].append("anatomicalfinding|maybe|atelectasis"), "attributes[0].attributes[0]"),
    (lambda g: g.update(StudyDateTime="yesterday"), "StudyDateTime"),
])
def test_scene_graph_errors_name_file_record_and_field(tmp_path, mutate, field):
    g = scene_graph(IMG1, 1, 2, "2150-01-01 00:00:00", {"left lung": [["anatomicalfinding|yes|atelectasis"]]})
    mutate(g)
    path = write_scene_graph(tmp_path, g)
    with pytest.raises(InputError) as info:
        parse_scene_graph(path, V)
    assert info.value.field == field and info.value.file == str(path) and info.value.record == IMG1


def test_truncated_scene_graph_is_rejected_with_its_file(tmp_path):
    path = write_scene_graph(tmp_path, scene_graph(IMG1, 1, 2, None, {}))
    path.write_text(path.read_text()[:40])
    with pytest.raises(InputError, match="invalid JSON") as info:
        parse_scene_graph(path, V)
    assert info.value.file == str(path)


def test_deeply_nested_json_is_one_rejection_and_the_batch_goes_on(tmp_path):
    from graph.ingest.parse import parse_files
    from graph.ingest.plan import RADGRAPH, SCENE_GRAPH, InputFile

    good = write_scene_graph(tmp_path / "good", scene_graph(IMG1, 1, 2, None, {}))
    deep = "[" * 10_000 + "]" * 10_000
    nested_sg = tmp_path / "deep_SceneGraph.json"
    nested_sg.write_text('{"image_id": "x", "objects": ' + deep + "}")
    nested_rg = tmp_path / "deep_radgraph.json"
    nested_rg.write_text('{"d1": {"text": "a", "entities": ' + deep + "}}")
    parsed = parse_files([InputFile(str(nested_sg), SCENE_GRAPH, ""), InputFile(str(good), SCENE_GRAPH, ""),
                          InputFile(str(nested_rg), RADGRAPH, "")], V, None)
    assert [(r.file, r.record, r.field) for p in parsed for r in p.rejections] == [
        (str(nested_sg), None, None), (str(nested_rg), None, None)]
    assert all("nested too deeply" in r.reason for p in parsed for r in p.rejections)
    assert [s.study_id for s in parsed[1].studies] == ["2"]


def test_radgraph_v1_normalises_anatomy_finding_severity_and_change(tmp_path):
    text = "FINDINGS : Small left pleural effusion has increased . No pneumothorax ."
    doc = radgraph_doc(text, [
        ("Small", "OBS-DP", 2, [("modify", 4)]),
        ("left", "ANAT-DP", 3, [("modify", 3)]),
        ("pleural", "ANAT-DP", 4, []),
        ("effusion", "OBS-DP", 5, [("located_at", 3)]),
        ("increased", "CHAN-CON-WOR", 7, [("modify", 4)]),
        ("pneumothorax", "OBS-DA", 10, []),
    ])
    pf = parse_radgraph(write_radgraph(tmp_path / "r.json", {"p10/p10000001/s50000002.txt": doc}), V)
    assert pf.rejections == []
    eff = [m for m in pf.mentions if m.finding == "pleural effusion"]
    assert [(m.anatomy, m.polarity, m.severity_score, m.change, m.section) for m in eff] == \
        [("left costophrenic angle", "present", 1, "worsened", "findings")]
    ptx = sorted(m.anatomy for m in pf.mentions if m.finding == "pneumothorax")
    assert ptx == ["left apical zone", "right apical zone"]  # no side stated: both sides, absent
    assert pf.studies[0].patient_id == "10000001" and pf.studies[0].study_id == "50000002"


def test_radgraph_anatomy_phrase_and_code_alias(tmp_path):
    text = "Worsening opacity at the left base ."
    doc = radgraph_doc(text, [("Worsening", "CHAN-WOR", 0, [("modify", 2)]), ("opacity", "OBS-DP", 1, [("located_at", 4)]),
                              ("left", "ANAT-DP", 4, [("modify", 4)]), ("base", "ANAT-DP", 5, [])])
    # entity 4 is "left", a modifier of entity 4 itself would be odd: fix the target to "base" (5)
    doc["entities"]["2"]["relations"] = [["located_at", "4"]]
    doc["entities"]["3"]["relations"] = [["modify", "4"]]
    doc["entities"]["4"] = {"tokens": "base", "label": "ANAT-DP", "start_ix": 5, "end_ix": 5, "relations": []}
    doc["entities"]["3"]["start_ix"] = doc["entities"]["3"]["end_ix"] = 4
    pf = parse_radgraph(write_radgraph(tmp_path / "r.json", {"p10/p10000001/s50000002.txt": doc}), V)
    assert [(m.anatomy, m.finding, m.change) for m in pf.mentions] == [("left lower lung zone", "lung opacity", "worsened")]


def test_radgraph_bad_records_are_rejected_alone(tmp_path):
    good = radgraph_doc("No effusion .", [("effusion", "OBS-DA", 1, [])])
    unknown = radgraph_doc("No effusion .", [("effusion", "OBS-MAYBE", 1, [])])
    dangling = radgraph_doc("No effusion .", [("effusion", "OBS-DA", 1, [("located_at", 7)])])
    past_end = radgraph_doc("No effusion .", [("effusion", "OBS-DA", 5, [])])
    docs = {"p10/p10000001/s50000001.txt": good, "p10/p10000001/s50000002.txt": unknown,
            "p10/p10000001/s50000003.txt": dangling, "p10/p10000001/s50000004.txt": past_end,
            "no-mimic-key": good}
    pf = parse_radgraph(write_radgraph(tmp_path / "r.json", docs), V)
    assert [s.study_id for s in pf.studies] == ["50000001"]
    got = {r.record: r.field for r in pf.rejections}
    assert got == {"p10/p10000001/s50000002.txt": "entities.1.label",
                   "p10/p10000001/s50000003.txt": "entities.1.relations",
                   "p10/p10000001/s50000004.txt": "entities.1.end_ix",
                   "no-mimic-key": "doc_key"}
    assert all(r.file == str(tmp_path / "r.json") for r in pf.rejections)


def test_labeler_variant_and_jsonl(tmp_path):
    doc = radgraph_doc("Mild atelectasis .", [("Mild", "OBS-DP", 0, [("modify", 2)]), ("atelectasis", "OBS-DP", 1, [])])
    test_json = {"p10/p10000001/s50000001.txt": {"text": doc["text"], "labeler_1": {"entities": doc["entities"]},
                                                 "labeler_2": {"entities": {}}, "data_split": "test"}}
    pf = parse_radgraph(write_radgraph(tmp_path / "test.json", test_json), V)
    assert [(m.finding, m.severity) for m in pf.mentions][:1] == [("atelectasis", "mild")]
    line = {"doc_key": "p10/p10000001/s50000009.txt", "dataset": "radgraph-xl",
            "sentences": [["Mild", "atelectasis", "."], ["No", "effusion", "."]],
            "ner": [[[0, 0, "Observation::definitely present"], [1, 1, "Observation::definitely present"]],
                    [[4, 4, "Observation::definitely absent"]]],
            "relations": [[[0, 0, 1, 1, "modify"]], []]}
    path = tmp_path / "xl.jsonl"
    path.write_text(json.dumps(line) + "\n" + "{not json\n")
    pf = parse_radgraph(path, V)
    assert sorted({(m.finding, m.polarity) for m in pf.mentions}) == [("atelectasis", "present"), ("pleural effusion", "absent")]
    assert [r.record for r in pf.rejections] == ["line 2"]


def test_labeler_and_processed_list_variants_are_counted(tmp_path):
    doc = radgraph_doc("Mild atelectasis .", [("Mild", "OBS-DP", 0, [("modify", 2)]), ("atelectasis", "OBS-DP", 1, [])])
    test_json = {"p10/p10000001/s50000001.txt": {"text": doc["text"], "labeler_1": {"entities": doc["entities"]},
                                                 "labeler_2": {"entities": {}}}}
    assert parse_radgraph(write_radgraph(tmp_path / "test.json", test_json), V).variants == {
        "radgraph test.json: labeler_1 read, labeler_2 not": 1}
    pf = parse_radgraph(SAMPLE / "expected_processed_annotations.json", V, read_doc_mapping(SAMPLE / "doc_mapping.csv"))
    assert pf.variants == {"radgraph package: processed-annotations list": 5}


def test_a_list_of_package_outputs_is_keyed_by_position(tmp_path):
    """Stanford-AIMI/radgraph's tests store RadGraph-XL's output on a test set as a JSON list of one
    ``{"0": doc}`` per call (``radgraph([report])``); an item of one document is keyed by its position."""
    one = radgraph_doc("No effusion .", [("effusion", "Observation::definitely absent", 1, [])])
    two = radgraph_doc("Mild atelectasis .", [("Mild", "Observation::definitely present", 0, [("modify", 2)]),
                                              ("atelectasis", "Observation::definitely present", 1, [])])
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps([{"0": one}, {"0": two}, {"0": one, "1": two}, {"text": "no doc"}]))
    mapping = {key: DocStudy("10000001", f"5000000{n}") for n, key in enumerate(["0", "1", "2.0", "2.1"])}
    pf = parse_radgraph(path, V, mapping)
    assert [s.record for s in pf.studies] == ["0", "1", "2.0", "2.1"]
    assert {(m.record, m.finding, m.polarity, m.severity) for m in pf.mentions if m.record in ("0", "1")} == {
        ("0", "pleural effusion", "absent", None), ("1", "atelectasis", "present", "mild")}
    assert pf.variants == {"radgraph package: list of per-call outputs": 4}
    assert [(r.record, r.field) for r in pf.rejections] == [("[3]", "report_id")]
    streamed = list(parse_radgraph_chunks(path, V, mapping, docs_per_chunk=2))
    assert [m.mention_id for c in streamed for m in c.mentions] == [m.mention_id for m in pf.mentions]


def test_dygie_prediction_lines_read_predicted_spans_without_their_scores(tmp_path):
    """A DyGIE ``predict`` file (the radgraph package reads its own so) has ``predicted_ner`` items
    ``[start, end, label, logit, probability]`` and ``predicted_relations`` ``[s1, e1, s2, e2, label, logit,
    probability]`` instead of ``ner`` / ``relations``; a gold line may lack ``relations``."""
    pred = {"doc_key": "p10/p10000001/s50000001.txt", "sentences": [["Mild", "atelectasis", "."]],
            "predicted_ner": [[[0, 0, "Observation::definitely present", 4.1, 0.97],
                               [1, 1, "Observation::definitely present", 5.0, 0.99]]],
            "predicted_relations": [[[0, 0, 1, 1, "modify", 3.3, 0.95]]]}
    gold = {"doc_key": "p10/p10000001/s50000002.txt", "sentences": [["No", "effusion", "."]],
            "ner": [[[1, 1, "Observation::definitely absent"]]]}
    neither = {"doc_key": "p10/p10000001/s50000003.txt", "sentences": [["Clear", "."]]}
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in (pred, gold, neither)))
    pf = parse_radgraph(path, V)
    assert {(m.study_id, m.finding, m.polarity, m.severity) for m in pf.mentions} == {
        ("50000001", "atelectasis", "present", "mild"), ("50000002", "pleural effusion", "absent", None)}
    assert pf.variants == {"radgraph-xl DyGIE: predicted_ner / predicted_relations read": 1}
    assert [(r.record, r.field) for r in pf.rejections] == [("p10/p10000001/s50000003.txt", "ner")]


def test_real_radgraph_xl_sample_with_mapping():
    mapping = read_doc_mapping(SAMPLE / "doc_mapping.csv")
    pf = parse_radgraph(SAMPLE / "expected_processed_annotations.json", V, mapping)
    assert pf.rejections == [] and len(pf.reports) == 5
    first = {(m.finding, m.polarity) for m in pf.mentions if m.record == "1"}
    # "The lungs are clear and the costophrenic angles are sharp": RadGraph-XL's "clear" / "sharp" located at
    # the structure are normal statements, read as the absences they assert
    assert {("pneumonia", "absent"), ("pulmonary edema/hazy opacity", "absent"), ("pleural effusion", "absent"),
            ("pneumothorax", "absent"), ("lung opacity", "absent"), ("costophrenic angle blunting", "absent")} == first
    assert not {"clear", "sharp"} & set(pf.unmapped_terms)
    assert any(m.finding == "scoliosis" for m in pf.mentions if m.record == "2")  # "dextrocurvature"
    assert "fibroglandular density" in pf.unmapped_terms  # kept and counted, not dropped


def test_doc_keys_and_mapping_errors(tmp_path):
    assert study_for_doc_key("files/p10/p10000032/s50414267.txt", None) == DocStudy("10000032", "50414267")
    assert study_for_doc_key("chexpert_0001", None) is None
    bad = tmp_path / "m.csv"
    bad.write_text("doc_key,patient\n1,2\n")
    with pytest.raises(InputError, match="missing column") as info:
        read_doc_mapping(bad)
    assert "study_id" in info.value.field


def test_metadata_dates(tmp_path):
    assert study_datetime(21500304, 102231.5).isoformat() == "2150-03-04T10:22:31.500000"
    path = tmp_path / "mimic-cxr-2.0.0-metadata.csv"
    path.write_text("dicom_id,subject_id,study_id,ViewPosition,StudyDate,StudyTime\n"
                    "a,10000001,50000001,PA,21500304,102231.5\nb,10000001,50000001,AP,21500304,090000\n"
                    "c,10000001,50000002,PA,notadate,1\n")
    dates, errors = read_metadata(path)
    assert dates.study_datetime["50000001"].hour == 9  # earliest image time
    assert [e.field for e in errors] == ["StudyDate"] and "line 4" in errors[0].record


@pytest.mark.parametrize("day, time", [
    ("21500304", "102231.5"), ("20000229", "0"), ("20010229", "1"), ("21501301", "1"), ("00000101", "1"),
    ("2.1500304e7", ""), ("21500304", "235959.9995"), ("21500304", "235959.9994"), ("21500304", "235960"),
    ("21500304", "240000"), ("21500304", "000000.0005"), ("21500304", "99.5"), ("215003040", "1")])
def test_study_datetime_reads_stamps_as_strptime_does(day, time):
    # the stamp's fields are read directly where they have strptime's widths; the rest goes to strptime
    stamp = f"{int(float(day))} {'%010.3f' % float(time or 0)}"
    try:
        expected = datetime.strptime(stamp, "%Y%m%d %H%M%S.%f")
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            study_datetime(day, time)
    else:
        assert study_datetime(day, time) == expected


def test_metadata_rows_after_unreadable_dates_still_count(tmp_path):
    # a study's images in any order (the earliest time wins), bad dates between them: each bad row is named by
    # its line and left out, the rows around it keep their study, patient and image
    path = tmp_path / "mimic-cxr-2.0.0-metadata.csv"
    path.write_text("dicom_id,subject_id,study_id,StudyDate,StudyTime\n"
                    "a,10000001,50000001,21500304,120000\nb,10000001,50000001,bad,1\n"
                    "c,10000002,50000002,21500305,1\nd,10000001,50000001,21500304,080000\n"
                    "e,10000003,50000003,,1\nf,10000001,50000001,21500304,100000\ng,10000004,50000004,1e400,1\n")
    dates, errors = read_metadata(path)
    assert [(e.record, e.field) for e in errors] == [("line 3 (dicom b)", "StudyDate"),
                                                     ("line 6 (dicom e)", "StudyDate"),
                                                     ("line 8 (dicom g)", "StudyDate")]
    assert {s: d.hour for s, d in dates.study_datetime.items()} == {"50000001": 8, "50000002": 0}
    assert dates.study_patient == {"50000001": "10000001", "50000002": "10000002"}
    assert dates.image_study == {"a": "50000001", "c": "50000002", "d": "50000001", "f": "50000001"}


def test_metadata_is_read_once_per_file_version(tmp_path, monkeypatch):
    import os

    import graph.ingest.plan as ingest

    reads, hashes, sha256_of = [], [], ingest.sha256_of
    monkeypatch.setattr(ingest, "read_metadata", lambda path: reads.append(path) or read_metadata(path))
    monkeypatch.setattr(ingest, "sha256_of", lambda path: hashes.append(path) or sha256_of(path))
    path = tmp_path / "mimic-cxr-2.0.0-metadata.csv"
    header = "dicom_id,subject_id,study_id,ViewPosition,StudyDate,StudyTime\n"
    path.write_text(header + "a,10000001,50000001,PA,21500304,102231.5\n")
    os.utime(path, (1e9, 1e9))  # written long ago
    for _ in range(3):  # planning and two batches
        dates, rejections = ingest.metadata_dates([str(path)])
    assert len(reads) == 1 and dates.study_datetime["50000001"].day == 4 and not rejections
    assert not hashes  # an old file is known by its size and time, not read again to hash it
    for day in (5, 6):  # two rewrites of the same size, possibly within one clock tick
        path.write_text(header + f"a,10000001,50000001,PA,2150030{day},102231.5\n")
        dates, _ = ingest.metadata_dates([str(path)])
        assert dates.study_datetime["50000001"].day == day
    assert len(reads) == 3
    path.unlink()
    dates, rejections = ingest.metadata_dates([str(path)])
    assert not dates.study_datetime and rejections[0].file == str(path) and "cannot read" in rejections[0].reason


def test_sided_anatomy_words_keep_their_side(tmp_path):
    doc = radgraph_doc("Increasing left-sided pleural effusion .", [
        ("Increasing", "CHAN-CON-WOR", 0, [("modify", 4)]), ("left-sided", "ANAT-DP", 1, [("modify", 3)]),
        ("pleural", "ANAT-DP", 2, []), ("effusion", "OBS-DP", 3, [("located_at", 3)])])
    doc["entities"]["4"]["relations"] = [["located_at", "3"]]
    pf = parse_radgraph(write_radgraph(tmp_path / "r.json", {"p10/p10000001/s50000002.txt": doc}), V)
    assert [(m.anatomy, m.change) for m in pf.mentions] == [("left costophrenic angle", "worsened")]


def test_a_normal_statement_of_one_side_denies_on_that_side_only(tmp_path):
    # RadGraph's own form: the side word modifies the structure, the predicate is located at it
    doc = radgraph_doc("The left lung is clear . Both lungs are clear .", [
        ("left", "ANAT-DP", 1, [("modify", 2)]), ("lung", "ANAT-DP", 2, []),
        ("clear", "OBS-DP", 4, [("located_at", 2)]),
        ("Both", "ANAT-DP", 6, [("modify", 5)]), ("lungs", "ANAT-DP", 7, []),
        ("clear", "OBS-DP", 9, [("located_at", 5)])])
    pf = parse_radgraph(write_radgraph(tmp_path / "r.json", {"p10/p10000001/s50000002.txt": doc}), V)
    opacity = sorted((m.sentence_id.rsplit("|", 1)[1], m.anatomy) for m in pf.mentions
                     if m.finding == "lung opacity" and m.polarity == "absent")
    assert opacity == [("0", "left lung"), ("1", "left lung"), ("1", "right lung")]


def test_places_on_both_sides_make_a_finding_bilateral(tmp_path):
    doc = radgraph_doc("Clips in the right neck and left mediastinum .", [
        ("Clips", "OBS-DP", 0, [("located_at", 3), ("located_at", 5)]), ("right", "ANAT-DP", 3, [("modify", 3)]),
        ("neck", "ANAT-DP", 4, []), ("left", "ANAT-DP", 6, [("modify", 5)]), ("mediastinum", "ANAT-DP", 7, [])])
    pf = parse_radgraph(write_radgraph(tmp_path / "r.json", {"p10/p10000001/s50000002.txt": doc}), V)
    assert {m.side for m in pf.mentions} == {"bilateral"}
