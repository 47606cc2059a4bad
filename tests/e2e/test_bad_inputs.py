"""Bad input against the real Neo4j: every rejection names file, record and field, the valid rest of the
batch loads, and nothing already stored is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.inputs import radgraph_doc, scene_graph, write_radgraph, write_scene_graph
from tests.fixtures.loading import load_into

PID = 10000077
STUDY = {1: 50000771, 2: 50000772}
IMG = {n: f"cccccccc-00000000-00000000-00000000-0000000{n}" for n in STUDY}
WHEN = {1: "2150-01-01 08:00:00", 2: "2150-01-11 08:00:00"}
LCA = "left costophrenic angle"
EFFUSION = [("Left", "ANAT-DP", 0, [("modify", 2)]), ("pleural", "ANAT-DP", 1, []),
            ("effusion", "OBS-DP", 2, [("located_at", 2)])]


def _study(folder: Path, n: int) -> Path:
    g = scene_graph(IMG[n], PID, STUDY[n], WHEN[n], {LCA: [["anatomicalfinding|yes|pleural effusion"]]})
    return write_scene_graph(folder / "scene_graphs", g)


def _key(n: int) -> str:
    return f"p10/p{PID}/s{STUDY[n]}.txt"


def _mentions_by_record(store, path: Path) -> dict[str, int]:
    rows = store.read("MATCH (m:Mention) WHERE m.file = $f RETURN m.record AS record, count(m) AS n",
                      f=str(path.resolve()))
    return {r["record"]: r["n"] for r in rows}


@pytest.mark.parametrize("streamed", [False, True])
def test_an_updated_report_file_with_one_rejected_document_keeps_that_documents_earlier_data(store, tmp_path,
                                                                                          monkeypatch, streamed):
    if streamed:  # every RadGraph file streamed, one document per transaction
        from graph.ingest import load, plan

        monkeypatch.setattr(plan, "STREAM_THRESHOLD_BYTES", 0)
        monkeypatch.setattr(load, "STREAM_CHUNK_DOCS", 1)
    _study(tmp_path, 1)
    _study(tmp_path, 2)
    path = write_radgraph(tmp_path / "radgraph" / "reports.json",
                          {_key(1): radgraph_doc("Left pleural effusion .", EFFUSION),
                           _key(2): radgraph_doc("Left pleural effusion .", EFFUSION)})
    load_into(store, tmp_path)
    before = _mentions_by_record(store, path)
    assert set(before) == {_key(1), _key(2)}

    docs = json.loads(path.read_text())
    docs[_key(1)] = radgraph_doc("Left pleural effusion . Cardiomegaly .", EFFUSION + [("Cardiomegaly", "OBS-DP", 4, [])])
    docs[_key(2)]["entities"]["1"]["label"] = "ANAT-NOPE"
    path.write_text(json.dumps(docs))
    plan, result = load_into(store, tmp_path)
    assert plan.changed == {str(path.resolve())}
    assert [(Path(r.file).name, r.record, r.field) for r in result.rejections] == [
        ("reports.json", _key(2), "entities.1.label")]
    after = _mentions_by_record(store, path)
    assert after[_key(2)] == before[_key(2)]  # the rejected document's earlier mentions stay
    assert after[_key(1)] > before[_key(1)]  # the accepted one is replaced by its new version
    plan, _ = load_into(store, tmp_path)  # a rerun changes nothing and loses nothing
    assert plan.load == [] and _mentions_by_record(store, path) == after


def _checks(store) -> dict[str, int]:
    from graph.store.consistency import run_checks

    return {c.name: c.count for c in run_checks(store)}


def test_the_same_image_or_doc_key_in_two_files_is_rejected_naming_both(store, tmp_path):
    first = _study(tmp_path / "a", 1)
    report = write_radgraph(tmp_path / "a" / "reports.json", {_key(1): radgraph_doc("Left pleural effusion .", EFFUSION)})
    copies = tmp_path / "b"
    copies.mkdir()
    (copies / first.name).write_text(first.read_text())
    (copies / "more_reports.json").write_text(report.read_text())
    _, result = load_into(store, tmp_path / "a", copies)  # one batch: the later file's records are rejected
    got = sorted((Path(r.file).parent.name, r.record, r.field) for r in result.rejections)
    assert got == [("b", IMG[1], "image_id"), ("b", _key(1), "doc_key")]
    assert all(str(tmp_path / "a") in r.reason for r in result.rejections)

    store.clear()
    from graph.vocabulary import vocabulary

    store.ensure_schema(vocabulary())
    load_into(store, tmp_path / "a")
    _, result = load_into(store, copies)  # a later run: rejected against the graph
    assert sorted((r.record, r.field) for r in result.rejections) == [(IMG[1], "image_id"), (_key(1), "doc_key")]
    assert store.read("MATCH ()-[r:HAS_IMAGE]->() RETURN count(r) AS n")[0]["n"] == 1
    assert store.read("MATCH (m:Mention) WHERE m.file STARTS WITH $b RETURN count(m) AS n",
                      b=str(copies.resolve()))[0]["n"] == 0
    assert _checks(store)["duplicate_relationships"] == 0


def test_a_comparison_with_another_patients_image_or_its_own_study_is_rejected(store, tmp_path):
    from tests.fixtures.inputs import comparison

    _study(tmp_path, 1)
    other = scene_graph("dddddddd-0", 20000088, 50000881, "2150-01-05 08:00:00",
                        {LCA: [["anatomicalfinding|yes|pleural effusion"]]})
    write_scene_graph(tmp_path / "scene_graphs", other)
    later = tmp_path / "later"
    crossing = scene_graph(IMG[2], PID, STUDY[2], WHEN[2], {LCA: [["anatomicalfinding|yes|pleural effusion"]]},
                           relationships=[comparison(IMG[2], "dddddddd-0", LCA, "worsened", "pleural effusion")])
    itself = scene_graph("dddddddd-1", 20000088, 50000882, "2150-02-05 08:00:00",
                         {LCA: [["anatomicalfinding|yes|pleural effusion"]]},
                         relationships=[comparison("dddddddd-1", "dddddddd-1", LCA, "worsened", "pleural effusion")])
    write_scene_graph(later, crossing)
    write_scene_graph(later, itself)
    load_into(store, tmp_path / "scene_graphs")
    _, result = load_into(store, later)
    got = {r.record: (r.field, r.reason) for r in result.rejections}
    assert set(got) == {IMG[2], "dddddddd-1"}
    assert got[IMG[2]][0] == "relationships.object_id" and "of patient 20000088" in got[IMG[2]][1]
    assert "own study" in got["dddddddd-1"][1]
    assert store.read("MATCH (s:Study) WHERE s.study_id IN $ids RETURN count(s) AS n",
                      ids=[str(STUDY[2]), "50000882"])[0]["n"] == 0
    assert _checks(store)["cross_patient_links"] == 0


def test_stats_finds_duplicate_relationships_and_cross_patient_links(store, tmp_path):
    _study(tmp_path, 1)
    load_into(store, tmp_path)
    assert set(_checks(store).values()) == {0}
    with store.driver.session(database=store.database) as session:
        session.run("MATCH (s:Study)-[:HAS_IMAGE]->(i:Image) CREATE (s)-[:HAS_IMAGE]->(i)").consume()
        session.run("CREATE (:Patient {patient_id: 'intruder'})").consume()
        session.run("MATCH (p:Patient {patient_id: 'intruder'}), (s:Study) CREATE (p)-[:HAS_STUDY]->(s)").consume()
    checks = _checks(store)
    assert checks["duplicate_relationships"] == 2 and checks["cross_patient_links"] == 2, checks


BROKEN = {  # name -> bytes: files no parser can read; each must be one rejection naming the file
    "empty_SceneGraph.json": b"",
    "truncated_SceneGraph.json": b'{"image_id": "x", "objects": [',
    "utf16_SceneGraph.json": json.dumps({"image_id": "u"}).encode("utf-16"),
    "latin1_SceneGraph.json": '{"image_id": "caf\xe9"'.encode("latin-1"),
    "list_SceneGraph.json": b"[]",
    "empty.json": b"",
    "truncated.json": b'{"p10/p1/s1.txt": {"text": "x", "entities": {',
    "latin1.json": '{"p10/p1/s1.txt": {"text": "caf\xe9"'.encode("latin-1"),
    "number.json": b"42",
    "mimic-cxr-2.0.0-metadata.csv": b"",
    "latin1-metadata.csv": "dicom_id,subject_id,study_id,StudyDate,StudyTime\ncaf\xe9,1,2,21500101,0\n".encode("latin-1"),
}


def test_a_corpus_of_unreadable_files_is_one_rejection_each_and_the_rest_loads(store, tmp_path):
    good = _study(tmp_path, 1)
    bad = tmp_path / "bad"
    bad.mkdir()
    for name, content in BROKEN.items():
        (bad / name).write_bytes(content)
    plan, result = load_into(store, tmp_path)
    rejected = sorted(Path(r.file).name for r in result.rejections + plan.rejections)
    assert rejected == sorted(p.name for p in bad.iterdir()), [(r.file, r.reason) for r in result.rejections]
    assert all(r.reason for r in result.rejections + plan.rejections)
    assert store.read("MATCH (s:Study {study_id: $s}) RETURN count(s) AS n", s=str(STUDY[1]))[0]["n"] == 1
    assert [f.path for f in plan.load if f.path == str(good.resolve())]
