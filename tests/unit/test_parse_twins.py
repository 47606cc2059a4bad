"""The parse's fast paths give what the checked paths give: a RadGraph file read whole as streamed, the
records made by ``record_maker``, the release's date layout, the GC pause of a batch. Synthetic values only."""

from __future__ import annotations

import gc
import json
import pickle
from datetime import datetime

import pytest

from graph.formats.radgraph import parse_radgraph, parse_radgraph_chunks
from graph.formats.scene_graph import parse_datetime
from graph.records import BoundingBoxRecord, ParsedFile, cyclic_gc_paused, record_maker
from graph.vocabulary import vocabulary
from tests.fixtures.inputs import radgraph_doc, write_radgraph
from tests.fixtures.radgraph_cohort import ATELECTASIS, CLEAR, WORSE

V = vocabulary()


def _checked(path) -> ParsedFile:
    """The file read by the streaming reader (ijson, one document at a time)."""
    chunks = list(parse_radgraph_chunks(path, V, docs_per_chunk=10_000))
    assert len(chunks) == 1
    return chunks[0]


def _key(k: int) -> str:
    return f"p10/p10000001/s5000000{k}.txt"


def test_documents_and_their_faults_read_whole_as_streamed(tmp_path):
    good = [radgraph_doc(*t) for t in (WORSE, ATELECTASIS, CLEAR)]
    out_of_schema = radgraph_doc("Left effusion .", [("Left", "ANAT-DP", 0, [("modify", 2)]),
                                                     ("effusion", "OBS-DP", 1, [])])  # ANAT modify OBS
    xl = radgraph_doc("No effusion .", [("effusion", "Observation::definitely absent", 1, [])])
    docs = {_key(1): good[0], _key(2): good[1], _key(3): good[2], _key(4): out_of_schema, _key(5): xl,
            _key(6): radgraph_doc("No effusion .", [("effusion", "OBS-MAYBE", 1, [])]),
            _key(7): radgraph_doc("No effusion .", [("effusion", "OBS-DA", 1, [("located_at", 7)])]),
            _key(8): radgraph_doc("No effusion .", [("effusion", "OBS-DA", 5, [])]),
            "no-mimic-key": good[2]}
    path = write_radgraph(tmp_path / "r.json", docs)
    pf = parse_radgraph(path, V)
    assert pf == _checked(path)
    assert len(pf.reports) == 5 and pf.out_of_schema == {"ANAT modify OBS": 1}
    assert {r.record: r.field for r in pf.rejections} == {
        _key(6): "entities.1.label", _key(7): "entities.1.relations", _key(8): "entities.1.end_ix",
        "no-mimic-key": "doc_key"}


@pytest.mark.parametrize("change, field", [
    (lambda e: e.update(start_ix=True), None),  # a boolean is an int to the checks (True == 1): accepted
    (lambda e: e.update(start_ix=1.0), "entities.1.start_ix"),
    (lambda e: e.update(relations=None), "entities.1.relations"),
    (lambda e: e.update(tokens=7), "entities.1.tokens"),
    (lambda e: e.update(label=None), "entities.1.label"),
    (lambda e: e.update(relations=[["modify"]]), "entities.1.relations"),
])
def test_a_document_off_the_shape_is_rejected_whole_as_streamed(tmp_path, change, field):
    bad = radgraph_doc("No effusion .", [("effusion", "OBS-DA", 1, [])])
    change(bad["entities"]["1"])
    path = tmp_path / "r.json"
    path.write_text(json.dumps({_key(1): radgraph_doc(*CLEAR), _key(2): bad}))
    pf = parse_radgraph(path, V)
    assert pf == _checked(path)
    assert [(r.record, r.field) for r in pf.rejections] == ([(_key(2), field)] if field else [])
    assert len(pf.reports) == (1 if field else 2)


def test_a_file_with_json_nan_is_read_as_json_reads_it(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(b'{"' + _key(1).encode() + b'": {"text": "No effusion .", "entities": {}, "score": NaN}}')
    pf = parse_radgraph(path, V)
    assert pf.rejections == [] and len(pf.reports) == 1  # Python's json reads NaN, in a key nothing reads


def test_record_maker_makes_the_same_record():
    values = ("i|0", "i", "left lung", 1, 2, 3, 4, None, 6, 7, 8, 9, 10, 11, 12, "nodule")
    made, built = record_maker(BoundingBoxRecord)(*values), BoundingBoxRecord(*values)
    assert made == built and hash(made) == hash(built) and list(vars(made).items()) == list(vars(built).items())
    assert pickle.loads(pickle.dumps(made)) == built and repr(made) == repr(built)
    with pytest.raises(ValueError):
        record_maker(BoundingBoxRecord)(*values[:-1])
    with pytest.raises(TypeError):
        record_maker(int)


@pytest.mark.parametrize("text", ["2150-03-04 10:22:31", " 2150-03-04 10:22:31 ", "2150-03-04 10:22:31.5",
                                  "2150-3-4 10:22:31", "2150-03-04T10:22:31", "2150-03-04"])
def test_the_release_date_layout_reads_as_strptime_reads_it(text):
    layouts = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")
    expected = next(d for f in layouts if (d := _strptime(text.strip(), f)) is not None)
    assert parse_datetime(text) == expected


@pytest.mark.parametrize("text", ["2150-02-30 10:22:31", "2150-01-01 23:59:60", "2150-03-04 24:00:00",
                                  "0000-01-01 00:00:00", "2150-03-04 10:22"])
def test_an_impossible_date_in_the_release_layout_is_still_rejected(text):
    with pytest.raises(ValueError, match="unrecognised datetime"):
        parse_datetime(text)


def _strptime(text: str, layout: str) -> datetime | None:
    try:
        return datetime.strptime(text, layout)
    except ValueError:
        return None


def test_the_gc_pause_restores_what_it_found():
    assert gc.isenabled()
    with cyclic_gc_paused():
        assert not gc.isenabled()
        with cyclic_gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block found it paused: the outer one resumes it
    assert gc.isenabled()
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()  # paused by someone else: left paused
    finally:
        gc.enable()
