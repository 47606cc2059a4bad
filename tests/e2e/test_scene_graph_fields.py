"""Every field of a Chest ImaGenome scene graph stored in the real Neo4j and read back; a batch with
malformed files loads the good ones (the parsing checks are in tests/unit/test_scene_graph_parsing.py)."""

from __future__ import annotations

import json

from tests.fixtures.inputs import objects, radgraph_doc, write_radgraph, write_scene_graph
from tests.fixtures.loading import load_into
from tests.fixtures.scene_graph_cases import BOXES, IMG, LCA, MALFORMED, PID, STUDY, full_graph


BOX_ROWS = """
MATCH (:Image {image_id: $image})-[:HAS_BBOX]->(b:BoundingBox)-[:OF_ANATOMY]->(a:Anatomy)
RETURN b.bbox_id AS bbox_id, a.name AS anatomy, properties(b) AS props ORDER BY bbox_id
"""


def test_round_trip_stores_every_field(store, tmp_path):
    g = full_graph()
    g["objects"][1]["finding_label"] = "pleural effusion"
    write_scene_graph(tmp_path, g)
    _, result = load_into(store, tmp_path)
    assert result.rejections == []

    row = store.read("MATCH (p:Patient)-[:HAS_STUDY]->(s:Study)-[:HAS_IMAGE]->(i:Image) "
                     "RETURN p.gender AS gender, s.age_decile AS age, s.reason_for_exam AS reason, "
                     "i.study_order AS order, i.view AS view")
    assert row == [{"gender": "F", "age": "60-70", "reason": g["reason_for_exam"], "order": 2, "view": "PA"}]

    boxes = store.read(BOX_ROWS, image=IMG)
    assert [(b["bbox_id"], b["anatomy"]) for b in boxes] == [(f"{IMG}|{k}", n) for k, n in enumerate(BOXES)]
    lca = boxes[1]["props"]
    assert lca == {"bbox_id": f"{IMG}|1", "image_id": IMG, "bbox_name": LCA, "x1": 150, "y1": 140, "x2": 190,
                   "y2": 175, "width": 40, "height": 35, "original_x1": 1500, "original_y1": 1400,
                   "original_x2": 1900, "original_y2": 1750, "original_width": 400, "original_height": 350,
                   "finding_label": "pleural effusion"}
    assert "finding_label" not in boxes[0]["props"]

    mentions = {(r["finding"], r["change"]): r for r in store.read(
        "MATCH (o:Observation)-[:HAS_MENTION]->(m:Mention) RETURN o.finding AS finding, m.change AS change, "
        "m.sentence_id AS sentence, m.temporal_cues AS temporal, m.texture_cues AS texture, "
        "m.comparison_cues AS comparison")}
    assert mentions[("consolidation", None)] == {"finding": "consolidation", "change": None,
                                                 "sentence": f"{STUDY}|0", "temporal": ["temporal|yes|acute"],
                                                 "texture": ["texture|yes|opacity"], "comparison": None}
    assert mentions[("pleural effusion", None)]["comparison"] == ["comparison|yes|worsened"]
    assert mentions[("pneumothorax", None)]["sentence"] == f"{STUDY}|1"
    constraints = store.read("SHOW CONSTRAINTS YIELD labelsOrTypes, properties RETURN labelsOrTypes, properties")
    assert {"labelsOrTypes": ["BoundingBox"], "properties": ["bbox_id"]} in constraints


def test_reloaded_changed_scene_graph_leaves_no_stale_boxes(store, tmp_path):
    path = write_scene_graph(tmp_path, full_graph())
    load_into(store, tmp_path)
    g = json.loads(path.read_text())
    g["objects"] = objects(IMG, {"trachea": (100, 5, 120, 70)})
    g["age_decile"] = "70-80"
    path.write_text(json.dumps(g))
    plan, result = load_into(store, tmp_path)
    assert plan.changed == {str(path.resolve())} and result.rejections == []
    boxes = store.read(BOX_ROWS, image=IMG)
    assert [(b["bbox_id"], b["anatomy"], b["props"]["y2"]) for b in boxes] == [(f"{IMG}|0", "trachea", 70)]
    assert store.read("MATCH (b:BoundingBox) RETURN count(b) AS n") == [{"n": 1}]
    assert store.read("MATCH (s:Study) RETURN s.age_decile AS age") == [{"age": "70-80"}]

    g["objects"] = []
    path.write_text(json.dumps(g))
    load_into(store, tmp_path)
    assert store.read("MATCH (b:BoundingBox) RETURN count(b) AS n") == [{"n": 0}]


def test_forced_reload_and_a_report_keep_boxes_and_study_fields(store, tmp_path):
    write_scene_graph(tmp_path, full_graph())
    load_into(store, tmp_path)
    with store.driver.session() as s:
        s.run("MATCH (f:SourceFile) DELETE f").consume()  # every file read again, written with MERGE
    text = "IMPRESSION : Left pleural effusion ."
    doc = radgraph_doc(text, [("Left", "ANAT-DP", 2, [("modify", 2)]), ("pleural", "ANAT-DP", 3, []),
                              ("effusion", "OBS-DP", 4, [("located_at", 2)])])
    write_radgraph(tmp_path / "radgraph" / f"s{STUDY}.json", {f"p10/p{PID}/s{STUDY}.txt": doc})
    load_into(store, tmp_path)
    assert len(store.read(BOX_ROWS, image=IMG)) == len(BOXES)
    assert store.read("MATCH (b:BoundingBox) RETURN count(b) AS n") == [{"n": len(BOXES)}]
    row = store.read("MATCH (p:Patient)-[:HAS_STUDY]->(s:Study) RETURN p.gender AS g, s.age_decile AS a, "
                     "s.reason_for_exam AS r")
    assert row == [{"g": "F", "a": "60-70", "r": "___F with dyspnea, eval for effusion"}]


def test_batch_with_malformed_files_loads_the_good_ones(store, prefect_harness, tmp_path):
    from flows.ingest_flow import ingest_flow

    good = [write_scene_graph(tmp_path / "good", full_graph(f"cccccccc-00000000-00000000-00000000-0000010{n}",
                                                            STUDY + 100 + n, f"2150-0{n + 1}-01 10:00:00"))
            for n in range(3)]
    bad = {}
    for n, kind in enumerate(sorted(MALFORMED)):
        mutate, field = MALFORMED[kind]
        g = full_graph(f"cccccccc-00000000-00000000-00000000-{n + 200:08d}", STUDY + 200 + n)
        mutate(g)
        bad[str(write_scene_graph(tmp_path / "bad", g).resolve())] = (g["image_id"], field)
    summary = ingest_flow([str(tmp_path)], rejected_report=None)
    assert summary.files_seen == len(good) + len(bad)
    assert (summary.files_loaded, summary.files_rejected) == (len(good), len(bad))
    assert summary.files_loaded + summary.files_rejected == summary.files_seen
    assert {r.file: (r.record, r.field) for r in summary.rejections} == bad
    assert store.read("MATCH (i:Image) RETURN count(i) AS n") == [{"n": len(good)}]
    assert store.read("MATCH (b:BoundingBox) RETURN count(b) AS n") == [{"n": len(good) * len(BOXES)}]


# --- the synthetic generator -------------------------------------------------------------------------
