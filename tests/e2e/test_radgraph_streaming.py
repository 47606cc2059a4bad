"""Big RadGraph files are written in chunks of documents, one transaction each, with the same graph as a
whole-file load; a changed, truncated or interrupted big file leaves no half-written state. Synthetic
documents only (their builders and the parser-level tests are in tests/unit/test_radgraph_streaming.py)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import graph.ingest.load as ingest_load
import graph.ingest.plan as ingest_plan
from graph.ingest import discover, load_files, plan_ingest
from graph.vocabulary import vocabulary
from tests.fixtures.loading import graph_snapshot
from tests.fixtures.radgraph_cohort import CHUNK, cohort, doc_key, jsonl_line, write_mapping

V = vocabulary()


def ingest(store, path: Path, mapping: str):
    files = discover([path])
    plan = plan_ingest(files, store.source_file_hashes(f.path for f in files), V.version)
    result = load_files(store, plan.load, V, plan.changed, plan.metadata, mapping)
    store.link_patients(result.patients)
    return plan, result


def source_file(store, path: Path) -> dict | None:
    rows = store.read("MATCH (f:SourceFile {path: $p}) RETURN f.sha256 AS sha256, f.records AS records, "
                      "f.rejected AS rejected, f.vocabulary_version AS vocabulary_version", p=str(path.resolve()))
    return rows[0] if rows else None


@pytest.fixture()
def writes(store, monkeypatch):
    """The batches store_files hands to the (real) write_batch, in order."""
    seen = []
    real = store.write_batch

    def spy(batch):
        seen.append(batch)
        return real(batch)

    monkeypatch.setattr(store, "write_batch", spy)
    return seen


def stream_everything(monkeypatch, chunk: int = CHUNK) -> None:
    monkeypatch.setattr(ingest_plan, "STREAM_THRESHOLD_BYTES", 0)
    monkeypatch.setattr(ingest_load, "STREAM_CHUNK_DOCS", chunk)


def fresh(store) -> None:
    store.clear()
    store.ensure_schema(V)


def summary(result) -> tuple:
    return (result.records, result.mentions, result.files_loaded, result.files_rejected,
            sorted((r.record or "", r.field or "", r.reason) for r in result.rejections),
            sorted(result.unmapped_terms.items()))


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_chunked_load_gives_the_same_graph_as_a_whole_file_load(store, writes, tmp_path, monkeypatch, suffix):
    docs = cohort()
    path = tmp_path / "in" / f"radgraph{suffix}"
    path.parent.mkdir()
    if suffix == ".jsonl":
        lines = [jsonl_line(k, d) for k, d in docs.items()]
        lines.insert(3, "{not json")
        path.write_text("\n".join(lines) + "\n")
    else:
        path.write_text(json.dumps(docs))
    mapping = write_mapping(tmp_path / "map.csv")

    _, whole = ingest(store, path, mapping)
    assert len(writes) == 1
    expected, expected_file = graph_snapshot(store), source_file(store, path)
    assert any(r[0] == "PROGRESSION" for r in expected[1])  # change entities and presence edges made it

    fresh(store)
    writes.clear()
    stream_everything(monkeypatch)
    _, streamed = ingest(store, path, mapping)
    n_docs = len(docs) + (suffix == ".jsonl")
    assert len(writes) == math.ceil(n_docs / CHUNK) >= 3
    assert [b.source_files[0]["sha256"] for b in writes if b.source_files] == [None, expected_file["sha256"]]
    assert graph_snapshot(store) == expected
    assert source_file(store, path) == expected_file
    assert summary(streamed) == summary(whole)
    assert streamed.patients == whole.patients

    writes.clear()
    plan, _ = ingest(store, path, mapping)  # unchanged: nothing to do
    assert plan.load == [] and writes == []


def loaded_whole(store, path, mapping, *versions) -> dict:
    """The reference graph: each version of the file loaded whole (not streamed), in turn."""
    for content in versions:
        path.write_text(json.dumps(content))
        ingest(store, path, mapping)
    return graph_snapshot(store)


def test_a_changed_big_file_replaces_its_old_content(store, writes, tmp_path, monkeypatch):
    path = tmp_path / "radgraph.json"
    mapping = write_mapping(tmp_path / "map.csv")
    old, new = cohort(variant=0), cohort(variant=1)
    del new[doc_key(3, 4)]
    expected = loaded_whole(store, path, mapping, old, new)

    fresh(store)
    stream_everything(monkeypatch)
    path.write_text(json.dumps(old))
    ingest(store, path, mapping)
    path.write_text(json.dumps(new))
    writes.clear()
    plan, _ = ingest(store, path, mapping)
    assert plan.changed == {str(path.resolve())}
    assert all(b.retract == [str(path.resolve())] for b in writes)  # each chunk replaces its own records
    assert all(b.merge for b in writes) and len(writes) == math.ceil(len(new) / CHUNK)
    assert graph_snapshot(store) == expected
    findings = {(r["record"], r["finding"]) for r in store.read(
        "MATCH (o:Observation)-[:HAS_MENTION]->(m) RETURN m.record AS record, o.finding AS finding")}
    assert not any(k == doc_key(3, 4) for k, _ in findings)  # the dropped document's mentions are gone


@pytest.mark.parametrize("loaded_before", [True, False])
def test_a_truncated_big_file_is_rejected_and_nothing_is_half_written(store, writes, tmp_path, monkeypatch,
                                                                      loaded_before):
    path = tmp_path / "radgraph.json"
    mapping = write_mapping(tmp_path / "map.csv")
    stream_everything(monkeypatch)
    if loaded_before:
        path.write_text(json.dumps(cohort(variant=0)))
        ingest(store, path, mapping)
    before, before_file = graph_snapshot(store), source_file(store, path)

    text = json.dumps(cohort(variant=1))
    path.write_text(text[:int(len(text) * 0.6)])  # cut inside a document, after several whole ones
    writes.clear()
    plan, result = ingest(store, path, mapping)
    assert len(plan.load) == 1 and result.files_rejected == 1 and result.files_loaded == 0
    [rejection] = result.rejections
    assert rejection.file == str(path.resolve()) and rejection.record is None
    size = path.stat().st_size
    assert re.search(rf"invalid JSON in bytes {size - size % 4096}-{size} of {size} "
                     rf"\(\d+ complete document\(s\) before them, the last 'p10/.*'\): parse error: premature EOF",
                     rejection.reason), rejection.reason
    assert writes == []  # rejected before the first transaction
    assert graph_snapshot(store) == before and source_file(store, path) == before_file


def test_an_interrupted_load_is_redone_in_full(store, writes, tmp_path, monkeypatch):
    path = tmp_path / "radgraph.json"
    mapping = write_mapping(tmp_path / "map.csv")
    first, edited = cohort(variant=0), cohort(variant=2)
    del edited[doc_key(1, 1)]  # a document of the first chunk: its report stays, as in any changed file
    expected = loaded_whole(store, path, mapping, first, edited)
    stream_everything(monkeypatch)

    fresh(store)
    path.write_text(json.dumps(first))
    writes.clear()
    real = store.write_batch

    def crash_on_second(batch):
        if len(writes) == 1:
            raise ConnectionError("server went away")
        return real(batch)

    monkeypatch.setattr(store, "write_batch", crash_on_second)
    with pytest.raises(ConnectionError):
        ingest(store, path, mapping)
    monkeypatch.undo()
    stream_everything(monkeypatch)
    # the first chunk is stored, marked incomplete: the next run sees the file as changed
    assert source_file(store, path) == {"sha256": None, "records": 0, "rejected": 0, "vocabulary_version": None}
    assert store.read("MATCH (m:Mention) RETURN count(m) AS n")[0]["n"] > 0

    path.write_text(json.dumps(edited))  # even edited in between, the file is reloaded in full
    plan, _ = ingest(store, path, mapping)
    assert plan.changed == {str(path.resolve())}
    assert graph_snapshot(store) == expected
    assert source_file(store, path)["sha256"] == discover([path])[0].sha256
