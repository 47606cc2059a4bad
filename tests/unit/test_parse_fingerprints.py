"""Files are fingerprinted from the bytes parsed (graph.ingest.parse.fingerprinted): the same SHA-256 as reading
each file on its own, for every input format and for files rejected whole; no Neo4j."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from graph.formats.files import sha256_of
from graph.formats.lunguage import made_up_rows, write_lunguage
from graph.ingest import discover, parse_files
from graph.ingest.parse import fingerprinted
from graph.vocabulary import vocabulary
from tests.fixtures.inputs import radgraph_doc, scene_graph, write_radgraph, write_scene_graph


@pytest.fixture
def inputs(tmp_path):
    """One file of every kind the parser reads, good and bad: (folder, {file name: read whole by parse?})."""
    write_scene_graph(tmp_path, scene_graph("img1", 1, 11, "2150-01-01T08:00:00", {"right lung": [["lung opacity"]]}))
    (tmp_path / "broken_SceneGraph.json").write_text('{"image_id": "broken", ')
    doc = radgraph_doc("Small effusion.", [("effusion", "OBS-DP", 1, [])])
    write_radgraph(tmp_path / "reports.json", {"p10/p1/s1.txt": doc})
    (tmp_path / "reports.jsonl").write_text(json.dumps({"doc_key": "p10/p1/s2.txt", **doc}) + "\n")
    write_lunguage(made_up_rows(2, seed=3), tmp_path / "made_up_lunguage.csv")
    (tmp_path / "not_json.json").write_bytes(b"\xff\xfe not json")
    return tmp_path, {"img1_SceneGraph.json": True, "broken_SceneGraph.json": True, "reports.json": True,
                      "reports.jsonl": False, "made_up_lunguage.csv": False, "not_json.json": True}


def test_fingerprints_are_the_files_own_whether_parse_read_them_or_not(inputs):
    folder, read_whole = inputs
    files = discover([folder], fingerprints=False)
    assert sorted(os.path.basename(f.path) for f in files) == sorted(read_whole)
    assert all(f.sha256 == "" for f in files)
    parsed = parse_files(files, vocabulary(), None)
    for f, pf in zip(files, parsed, strict=True):
        assert bool(pf.sha256) == read_whole[os.path.basename(f.path)], f.path
    assert any(pf.rejections for pf in parsed if pf.sha256)  # a file rejected whole keeps its fingerprint
    assert [f.sha256 for f in fingerprinted(files, parsed)] == [sha256_of(f.path) for f in files]


def test_known_fingerprints_are_kept_and_unreadable_files_stay_unfingerprinted(inputs):
    folder, _ = inputs
    files = discover([folder], fingerprints=False)
    files[0] = replace(files[0], sha256="a known one")
    gone = folder / "made_up_lunguage.csv"
    gone.unlink()
    parsed = parse_files(files, vocabulary(), None)
    out = fingerprinted(files, parsed)
    assert out[0].sha256 == "a known one"
    assert next(f for f in out if f.path == str(gone)).sha256 == ""
