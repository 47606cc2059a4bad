"""Bad input against the real Neo4j: every rejection names file, record and field, the valid rest of the
batch loads, and nothing already stored is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import load_into, radgraph_doc, scene_graph, write_radgraph, write_scene_graph

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
