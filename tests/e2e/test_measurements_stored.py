"""The anatomy measurements in the real Neo4j: both loaders store each image's Measurement nodes with the
metadata's image size, the geometry's own observations and their progression between studies, recomputed
when a scene graph is reloaded; a malformed box rejects nothing else and gives the measurement's reason.
(tests/e2e/test_bulk_load.py compares the bulk and the transactional graph node for node.)"""

from __future__ import annotations

import json

from tests.fixtures.inputs import objects, scene_graph, write_scene_graph
from tests.fixtures.loading import load_into

PATIENT = 10000042
LUNGS = {"right lung": (20, 20, 105, 200), "left lung": (119, 20, 204, 200)}  # thoracic width 184 (1,840 px)
ANATOMY = {"upper mediastinum": (95, 25, 130, 70), "trachea": (106, 10, 118, 60), "spine": (102, 10, 122, 210),
           "aortic arch": (110, 50, 135, 70), "right clavicle": (30, 15, 100, 30), "left clavicle": (124, 15, 194, 30),
           "right apical zone": (25, 22, 100, 50), "left apical zone": (124, 22, 199, 50),
           "right costophrenic angle": (20, 170, 45, 200), "left costophrenic angle": (179, 170, 204, 200)}
METADATA = ("dicom_id,subject_id,study_id,StudyDate,StudyTime,Rows,Columns\n"
            f"img1,{PATIENT},50000001,21500101,100000,2240,2240\n"
            f"img2,{PATIENT},50000002,21500301,100000,2240,2240\n"
            f"img3,{PATIENT},50000003,21500501,100000,,\n")

MEASURED = """
MATCH (i:Image)-[:HAS_MEASUREMENT]->(m:Measurement)
RETURN i.image_id AS image, i.rows AS rows, m.name AS name, m.value AS value, m.decision AS decision,
       m.reason AS reason ORDER BY image, name
"""
GEOMETRY = """
MATCH (s:Study)-[:HAS_GEOMETRY_OBSERVATION]->(g:GeometryObservation)-[:FROM_MEASUREMENT]->(m:Measurement)
RETURN s.study_id AS study, g.finding AS finding, g.state AS state, g.value AS value, m.image_id AS image
ORDER BY study, finding
"""
PROGRESSIONS = """
MATCH (g:GeometryObservation)-[p:PROGRESSION]->(prior:GeometryObservation)
RETURN g.study_id AS study, prior.study_id AS prior, g.finding AS finding, p.change AS change, p.source AS source
"""


def _film(image: str, study: int, heart: tuple[int, int, int, int], **replace: tuple[int, int, int, int]) -> dict:
    g = scene_graph(image, PATIENT, study, None, {"left lung": [["anatomicalfinding|no|pleural effusion"]]})
    g["objects"] = objects(image, {"cardiac silhouette": heart, **LUNGS, **ANATOMY, **replace})
    return g


def _cohort(folder):
    (folder / "mimic-cxr-2.0.0-metadata.csv").write_text(METADATA, encoding="utf-8")
    write_scene_graph(folder, _film("img1", 50000001, (64, 120, 160, 190)))  # CTR 960 / 1840 = 0.52
    second = write_scene_graph(folder, _film("img2", 50000002, (60, 120, 167, 190)))  # 1070 / 1840 = 0.58
    bad = _film("img3", 50000003, (64, 120, 160, 190))
    left = next(o for o in bad["objects"] if o["bbox_name"] == "left lung")
    left["original_x1"], left["original_x2"] = left["original_x2"], left["original_x1"]  # a reversed box
    write_scene_graph(folder, bad)
    return second


def _by(rows, *keys):
    return {tuple(r[k] for k in keys): r for r in rows}


def test_both_loaders_store_measurements_geometry_and_its_progression(store, tmp_path):
    second = _cohort(tmp_path)
    _, result = load_into(store, tmp_path)
    assert [(r.record, r.field) for r in result.rejections] == [("img3", "objects[2].original_x2")]
    measured = _by(store.read(MEASURED), "image", "name")
    assert len(measured) == 36  # 12 per image with boxes, the one with a rejected box included
    assert (measured[("img1", "cardiothoracic_ratio")]["value"], measured[("img1", "cardiothoracic_ratio")]["decision"],
            measured[("img1", "cardiothoracic_ratio")]["rows"]) == (0.52, "yes", 2240)
    assert measured[("img2", "cardiothoracic_ratio")]["value"] == 0.58
    assert measured[("img3", "cardiothoracic_ratio")]["reason"] == "box missing"  # its left lung was rejected
    assert measured[("img3", "inclusion_apex_right")]["reason"] == "image size unknown"  # no Rows / Columns
    assert measured[("img1", "inclusion")]["decision"] == "complete"
    # the rest of the bad file loaded: its study, image and report statement are there
    assert store.read("MATCH (:Study {study_id: '50000003'})-[:HAS_OBSERVATION]->(o) RETURN count(o) AS n")[0]["n"] == 1

    geometry = _by(store.read(GEOMETRY), "study", "finding")
    assert geometry[("50000001", "enlarged cardiac silhouette")]["state"] == "present"
    assert ("50000003", "enlarged cardiac silhouette") not in geometry  # no value, no observation
    assert geometry[("50000001", "rotated")]["state"] == "absent"
    assert store.read("MATCH (o:Observation {finding: 'enlarged cardiac silhouette'}) RETURN count(o) AS n")[0]["n"] == 0
    assert store.read(PROGRESSIONS) == [{"study": "50000002", "prior": "50000001", "finding": "enlarged cardiac silhouette",
                                         "change": "worsened", "source": "geometry"}]

    # the second film reloaded with a smaller heart: its measurements and the progression are recomputed
    g = json.loads(second.read_text())
    heart = next(o for o in g["objects"] if o["bbox_name"] == "cardiac silhouette")
    heart["original_x2"] = heart["original_x1"] + 900  # 900 / 1840 = 0.49: no longer enlarged
    second.write_text(json.dumps(g))
    load_into(store, tmp_path)
    measured = _by(store.read(MEASURED), "image", "name")
    assert len(measured) == 36 and measured[("img2", "cardiothoracic_ratio")]["value"] == 0.49
    assert [r["change"] for r in store.read(PROGRESSIONS)] == ["resolved"]
