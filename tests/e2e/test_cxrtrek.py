"""CXRTrek-format question sets written from the real graph of a hand-made Chest ImaGenome cohort: every
stage's gold answer read back against what the scene graphs state, the file accepted by the reader and the
same for the same seed (the NIH check is in tests/e2e/test_cxrtrek_nih_check.py)."""

from __future__ import annotations

import json

from tests.fixtures.inputs import comparison, objects, scene_graph, write_scene_graph
from tests.fixtures.loading import load_into

PID = 17000001
IMAGES = ("cxt-img-1", "cxt-img-2", "cxt-img-3")
STUDIES = (51000001, 51000002, 51000003)


def _cohort(folder):
    """Three studies: opacity in the left lung (PA), then worse and moderate with a new right effusion and an
    endotracheal tube (AP, a stated comparison), then the opacity stated absent."""
    first = scene_graph(IMAGES[0], PID, STUDIES[0], "2150-01-01 10:00:00",
                        {"left lung": [["anatomicalfinding|yes|lung opacity"]],
                         "right lung": [["anatomicalfinding|no|pleural effusion"]]})
    first["objects"] = objects(IMAGES[0], {"left lung": (112, 20, 200, 180)})
    second = scene_graph(IMAGES[1], PID, STUDIES[1], "2150-02-01 10:00:00",
                         {"left lung": [["anatomicalfinding|yes|lung opacity"]],
                          "right lung": [["anatomicalfinding|yes|pleural effusion"]],
                          "trachea": [["tubesandlines|yes|endotracheal tube"]]},
                         relationships=[comparison(IMAGES[1], IMAGES[0], "left lung", "worsened", "lung opacity")],
                         severity={"left lung": [["severity|yes|moderate"]]})
    second["viewpoint"] = "AP"
    second["objects"] = objects(IMAGES[1], {"left lung": (112, 22, 201, 181), "right lung": (10, 20, 100, 180),
                                            "trachea": (100, 5, 120, 70)})
    third = scene_graph(IMAGES[2], PID, STUDIES[2], "2150-03-01 10:00:00",
                        {"left lung": [["anatomicalfinding|no|lung opacity"]]})
    for g in (first, second, third):
        write_scene_graph(folder, g)


def _by_target(sample, stage, qtype=None):
    return {(c["target"], c["qtype"]): c for c in sample["data_dict"]["cxrtrek_data"]["content"]
            if c["stage"] == stage and c.get("target") and (qtype is None or c["qtype"] == qtype)}


def test_every_stage_answers_what_the_scene_graphs_state(store, tmp_path):
    from graph.formats.cxrtrek import read_samples
    from graph.cxrtrek.generate import generate

    _cohort(tmp_path / "sg")
    load_into(store, tmp_path / "sg")
    summary = generate(store, tmp_path / "q.json", seed=3)

    result = read_samples(tmp_path / "q.json")
    assert result.rejections == [] and summary.samples == 3
    first, second, third = (s.row for s in result.samples)
    data = second["data_dict"]["cxrtrek_data"]
    assert (data["study_id"], data["ref_study_id"], data["pos_study_id"]) == (str(STUDIES[1]), str(STUDIES[0]),
                                                                             str(STUDIES[2]))
    assert first["data_dict"]["cxrtrek_data"]["ref_study_id"] == "" and third["data_dict"]["cxrtrek_data"][
        "pos_study_id"] == ""
    assert second["image"] == [IMAGES[1], IMAGES[0]] and first["image"] == [IMAGES[0]]

    [view] = [c for c in data["content"] if c["task_type"] == "View_Information"]
    assert view["answer_list"] == ["B. Antero-posterior."]
    # quality first, as the demo file asks it: the films with boxes (the first two) have Measurement nodes, but
    # without clavicles, apical zones or the image's Rows and Columns neither rotation nor inclusion is decided
    [quality] = [c for c in data["content"] if c["task_type"] == "Quality_Assessment"]
    assert data["content"][0] is quality and quality["question"].endswith("<image> .")
    assert quality["answer"].startswith("Rotation and inclusion cannot be measured on this image (box missing")
    assert quality["graph_basis"]["basis"] == "not measured" and quality["graph_basis"]["image_id"] == IMAGES[1]
    assert [c["graph_basis"]["image_id"] for c in first["data_dict"]["cxrtrek_data"]["content"]
            if c["task_type"] == "Quality_Assessment"] == [IMAGES[0]]
    assert not [c for c in third["data_dict"]["cxrtrek_data"]["content"] if c["task_type"] == "Quality_Assessment"]

    stage2 = _by_target(second, 2)
    assert {k[0]: c["answer"].endswith("Yes.") for k, c in stage2.items()} == {
        "abnormality_[lung opacity]": True, "abnormality_[pleural effusion]": True,
        "foreign_body_[endotracheal tube]": True, "yes_no_foreign_body": True}
    assert [c["answer"].endswith("No.") for k, c in _by_target(first, 2).items()
            if k[0] == "abnormality_[pleural effusion]"] == [True]

    detection = _by_target(second, 3, "detection")
    assert sorted(k[0] for k in detection) == ["left lung", "right lung", "trachea"]
    assert detection[("left lung", "detection")]["bbox_list"] == [[50.0, 9.82, 89.73, 80.8]]
    assert "<|box|>(50.0, 9.82), (89.73, 80.8)<|/box|>" in detection[("left lung", "detection")]["answer"]
    severity = _by_target(second, 3)[("severity_[lung opacity]", "captioning")]
    assert severity["answer"] == "The lung opacity in the left lung is moderate."

    stage5 = _by_target(second, 5)
    overall = stage5[("overall_change", "single-choice")]
    assert overall["answer"] == "B. The findings have changed." and overall["question"].endswith(
        "Reference X-ray: <image> .") and overall["image_input_count"] == 2
    assert stage5[("change_[lung opacity]", "single-choice")]["answer"] == "B. Still present."
    assert stage5[("stated_change_[lung opacity]", "single-choice")]["answer"] == "B. Worsened."
    assert stage5[("change_[pleural effusion]", "single-choice")]["answer"] == "A. New."
    caption = stage5[("change_[lung opacity]", "captioning")]
    assert "is worse (severity not stated before, moderate now)" in caption["answer"]
    assert caption["graph_basis"]["basis"] == "stated" and caption["image_input_count"] == 2

    stage6 = _by_target(second, 6)
    assert stage6[("next_[lung opacity]", "yes_no")]["answer"] == "No."
    assert stage6[("next_[lung opacity]", "single-choice")]["answer"] == "B. Resolved."
    assert stage6[("next_[pleural effusion]", "single-choice")]["answer"] == "C. Not mentioned."
    assert not _by_target(third, 6) and not _by_target(first, 5)


def test_the_same_graph_and_seed_give_the_same_file_and_stages_can_be_chosen(store, tmp_path):
    from graph.cxrtrek.generate import generate

    _cohort(tmp_path / "sg")
    load_into(store, tmp_path / "sg")
    generate(store, tmp_path / "a.json", seed=5)
    generate(store, tmp_path / "b.json", seed=5)
    generate(store, tmp_path / "c.json", seed=5, stages=(2, 6))

    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    only = json.loads((tmp_path / "c.json").read_text())
    assert {c["stage"] for s in only for c in s["data_dict"]["cxrtrek_data"]["content"]} == {2, 6}
