"""Every field of a Chest ImaGenome scene graph (docs/formats.md §1.2-§1.5): typed and checked (no Neo4j;
tests/e2e/test_scene_graph_fields.py stores them).

Malformed files are real files under tmp_path; each rejection must name the file, the record (the image
id) and the field.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.formats.scene_graph import parse_scene_graph
from graph.records import InputError
from graph.synth import write_cohort
from graph.vocabulary import vocabulary
from tests.fixtures.inputs import write_scene_graph
from tests.fixtures.scene_graph_cases import BOXES, IMG, MALFORMED, STUDY, full_graph

V = vocabulary()
def _rejection(tmp_path: Path, g: dict) -> InputError:
    path = write_scene_graph(tmp_path, g)
    with pytest.raises(InputError) as info:
        parse_scene_graph(path, V)
    assert info.value.file == str(path) and info.value.record == g["image_id"]
    return info.value


# --- one malformed file per kind ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_scene_graph_names_file_record_and_field(tmp_path, kind):
    mutate, field = MALFORMED[kind]
    g = full_graph()
    mutate(g)
    assert _rejection(tmp_path, g).field == field


# A bad box is rejected on its own (real Chest ImaGenome boxes include negative coordinates, formats.md
# §1.3): the rejection names file, record and field, the box is left out, the rest of the file loads.
BAD_BOXES = {
    "negative box": (lambda g: g["objects"][1].update(y1=-3), "objects[1].y1"),
    "negative original box": (lambda g: g["objects"][0].update(original_x1=-12), "objects[0].original_x1"),
    "reversed box": (lambda g: g["objects"][2].update(x2=100), "objects[2].x2"),
    "reversed original box": (lambda g: g["objects"][2].update(original_y2=50), "objects[2].original_y2"),
    "unknown region in objects": (lambda g: g["objects"][0].update(bbox_name="right elbow"), "objects[0].bbox_name"),
}


@pytest.mark.parametrize("kind", sorted(BAD_BOXES))
def test_a_bad_box_is_rejected_alone(tmp_path, kind):
    mutate, field = BAD_BOXES[kind]
    g = full_graph()
    mutate(g)
    path = write_scene_graph(tmp_path, g)
    pf = parse_scene_graph(path, V)
    assert [(r.file, r.record, r.field) for r in pf.rejections] == [(str(path), g["image_id"], field)]
    k = int(field.split("[")[1].split("]")[0])
    assert [b.bbox_id for b in pf.images[0].objects] == [f"{IMG}|{i}" for i in range(len(g["objects"])) if i != k]
    assert pf.mentions  # the findings still load


def test_whole_number_floats_and_zero_area_boxes_are_accepted(tmp_path):
    g = full_graph()
    g["objects"][0].update(x1=20.0, original_height=1400.0)
    g["objects"][1].update(x2=150, width=0)  # zero-area, as in the release (docs/formats.md §1.3)
    g["StudyOrder"] = 2.0
    image = parse_scene_graph(write_scene_graph(tmp_path, g), V).images[0]
    box = image.objects[0]
    assert (box.x1, box.original_height, type(box.x1)) == (20, 1400, int)
    assert (image.objects[1].x1, image.objects[1].x2, image.study_order) == (150, 150, 2)


def test_booleans_are_not_numbers(tmp_path):
    g = full_graph()
    g["objects"][0]["y1"] = True
    assert _rejection(tmp_path, g).field == "objects[0].y1"


# --- parsed records ----------------------------------------------------------------------------------

def test_parsed_records_carry_every_field(tmp_path):
    g = full_graph()
    g["objects"][1]["finding_label"] = "pleural effusion"  # cxrkg extension key
    pf = parse_scene_graph(write_scene_graph(tmp_path, g), V)
    study, image = pf.studies[0], pf.images[0]
    assert (study.gender, study.age_decile, study.reason_for_exam) == ("F", "60-70", g["reason_for_exam"])
    assert (image.view, image.study_order) == ("PA", 2)
    assert [(b.bbox_id, b.bbox_name, b.x1, b.y1, b.x2, b.y2, b.width, b.height) for b in image.objects] == [
        (f"{IMG}|{k}", name, *box, box[2] - box[0], box[3] - box[1]) for k, (name, box) in enumerate(BOXES.items())]
    lca = image.objects[1]
    assert (lca.original_x1, lca.original_y2, lca.original_width, lca.finding_label) == (1500, 1750, 400,
                                                                                           "pleural effusion")
    by = {(m.finding, m.change): m for m in pf.mentions}
    eff = by[("pleural effusion", None)]
    assert (eff.sentence_id, eff.comparison_cues, eff.temporal_cues, eff.severity) == \
        (f"{STUDY}|0", ("comparison|yes|worsened",), (), "moderate")
    assert by[("pneumothorax", None)].sentence_id == f"{STUDY}|1"
    cons = by[("consolidation", None)]
    assert (cons.temporal_cues, cons.texture_cues) == (("temporal|yes|acute",), ("texture|yes|opacity",))


# --- the graph -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synth_results(tmp_path_factory):
    """(path, InputError or None) for every scene graph of a 20-patient synthetic cohort."""
    out = tmp_path_factory.mktemp("synth")
    write_cohort(out, patients=20, seed=11)
    results = []
    for path in sorted((out / "scene_graphs").rglob("*_SceneGraph.json")):
        try:
            rejections = parse_scene_graph(path, V).rejections
            results.append((path, rejections[0] if rejections else None))
        except InputError as exc:
            results.append((path, exc))
    return results


def test_synthetic_scene_graphs_meet_every_type(synth_results):
    """graph/synth writes every field with the type and range the model asks for."""
    assert len(synth_results) > 50
    assert [(p.name, e.field) for p, e in synth_results if e is not None] == []
