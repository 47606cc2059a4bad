"""Big RadGraph files are streamed: parsed with ijson (JSON) or by line (JSONL) and written in chunks of
documents, one transaction each, with the same graph as a whole-file load. Synthetic documents only."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import graph.ingest.load as ingest_load
import graph.ingest.plan as ingest_plan
from graph.formats.radgraph import check_json_stream, parse_radgraph, parse_radgraph_chunks, read_doc_mapping
from graph.ingest import discover, load_files, plan_ingest
from graph.records import InputError
from graph.vocabulary import vocabulary
from tests.helpers import graph_snapshot, radgraph_doc

V = vocabulary()
CHUNK = 4

# (text, entities as in tests.helpers.radgraph_doc)
WORSE = ("IMPRESSION : Left pleural effusion has increased .",
         [("Left", "ANAT-DP", 2, [("modify", 2)]), ("pleural", "ANAT-DP", 3, []),
          ("effusion", "OBS-DP", 4, [("located_at", 2)]), ("increased", "CHAN-CON-WOR", 6, [("modify", 3)])])
ATELECTASIS = ("FINDINGS : Mild left basal atelectasis . No pneumothorax .",
               [("left", "ANAT-DP", 3, []), ("basal", "ANAT-DP", 4, [("modify", 1)]),
                ("Mild", "OBS-DP", 2, [("modify", 4)]), ("atelectasis", "OBS-DP", 5, [("located_at", 2)]),
                ("pneumothorax", "OBS-DA", 8, [])])
CLEAR = ("IMPRESSION : No pleural effusion .",
         [("pleural", "ANAT-DP", 3, []), ("effusion", "OBS-DA", 4, [("located_at", 1)])])
BAD = ("No effusion .", [("effusion", "OBS-NOPE", 1, [])])
TEMPLATES = (WORSE, ATELECTASIS, CLEAR)


def doc_key(p: int, k: int) -> str:
    return f"p10/p1000000{p}/s5{p}00000{k}.txt"


def cohort(variant: int = 0, patients: int = 3, studies: int = 4) -> dict[str, dict]:
    """{doc_key: RadGraph v1 document}: one report per study, one malformed, one in the labeler_1 variant."""
    docs = {}
    for p in range(1, patients + 1):
        for k in range(1, studies + 1):
            text, ents = TEMPLATES[(p + k + variant) % len(TEMPLATES)]
            docs[doc_key(p, k)] = radgraph_doc(text, ents)
    docs[doc_key(2, 3)] = radgraph_doc(*BAD)
    labeled = docs[doc_key(1, 2)]
    docs[doc_key(1, 2)] = {"text": labeled["text"], "labeler_1": {"entities": labeled["entities"]},
                           "labeler_2": {"entities": {}}}
    return docs


def write_mapping(path: Path, patients: int = 3, studies: int = 4) -> str:
    rows = ["doc_key,patient_id,study_id,study_datetime"]
    rows += [f"{doc_key(p, k)},1000000{p},5{p}00000{k},2150-0{k}-01 08:00:00"
             for p in range(1, patients + 1) for k in range(1, studies + 1)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def jsonl_line(key: str, doc: dict) -> str:
    """The same document as a RadGraph-XL DyGIE JSONL line (document-level inclusive token offsets)."""
    ents = doc.get("entities") or doc["labeler_1"]["entities"]
    span = {eid: (e["start_ix"], e["end_ix"]) for eid, e in ents.items()}
    ner = [[s, e, ents[eid]["label"]] for eid, (s, e) in span.items()]
    rels = [[*span[eid], *span[target], rtype] for eid, e in ents.items() for rtype, target in e["relations"]]
    return json.dumps({"doc_key": key, "dataset": "synthetic", "sentences": [doc["text"].split(" ")],
                       "ner": [ner], "relations": [rels]})


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


# --- parser level (no graph) ----------------------------------------------------------------------

def _flat(chunks):
    out = [[], [], [], []]
    for c in chunks:
        for i, part in enumerate((c.studies, c.reports, c.mentions, c.rejections)):
            out[i] += part
    return out


@pytest.mark.parametrize("layout", ["object", "bom", "list", "jsonl"])
def test_chunks_hold_exactly_the_whole_file_records(tmp_path, layout):
    docs = cohort()
    path = tmp_path / ("r.jsonl" if layout == "jsonl" else "r.json")
    if layout == "jsonl":
        lines = [jsonl_line(k, d) for k, d in docs.items()]
        lines.insert(5, '{"doc_key": "broken", "sentences": [["No"')  # a bad line is a record of its own
        path.write_text("\n".join(lines) + "\n")
    elif layout == "list":
        path.write_text(json.dumps([{"report_id": k, "report_text": d["text"],
                                     "processed_annotations": {"radgraph_annotations": {"0": d}}}
                                    for k, d in docs.items() if "entities" in d] + [{"no": "report_id"}]))
    else:
        path.write_bytes((b"\xef\xbb\xbf" if layout == "bom" else b"") + json.dumps(docs, indent=1).encode())
    mapping = read_doc_mapping(Path(write_mapping(tmp_path / "map.csv")))
    whole = parse_radgraph(path, V, mapping)
    chunks = list(parse_radgraph_chunks(path, V, mapping, docs_per_chunk=5))
    n_docs = len(whole.studies) + len(whole.rejections)
    assert len(chunks) == math.ceil(n_docs / 5) > 1
    assert _flat(chunks) == [whole.studies, whole.reports, whole.mentions, whole.rejections]
    assert whole.mentions and whole.rejections
    check_json_stream(path)  # well-formed


def test_duplicate_doc_key_in_a_stream_is_rejected(tmp_path):
    text, ents = CLEAR
    doc = json.dumps(radgraph_doc(text, ents))
    path = tmp_path / "dup.json"
    path.write_text(f'{{"{doc_key(1, 1)}": {doc}, "{doc_key(1, 1)}": {doc}}}')
    [chunk] = parse_radgraph_chunks(path, V)
    assert len(chunk.reports) == 1
    assert [(r.record, r.field) for r in chunk.rejections] == [(doc_key(1, 1), "doc_key")]


@pytest.mark.parametrize("content, expected", [
    (b'{"a": {"text": "x"}, "b": {"text": "y"}, "c": {"te', r"in bytes 0-50 of 50 \(2 complete document\(s\) before them, the last 'b'\): parse error: premature EOF"),
    (b'{"a": {"text": "x"},, "b": 1}', r"in bytes 0-29 of 29 .*invalid object key"),
    (b'{"a": {"text": "x"}} trailing', r"trailing garbage"),
    (b'  "just text"', r"starts with b'\"'.*expected a UTF-8 JSON object or list"),
])
def test_a_broken_stream_names_file_and_position(tmp_path, content, expected):
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=expected) as err:
        check_json_stream(path)
    assert err.value.file == str(path) and err.value.record is None


# --- against Neo4j --------------------------------------------------------------------------------

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


def test_a_changed_big_file_replaces_its_old_content(store, writes, tmp_path, monkeypatch):
    path = tmp_path / "radgraph.json"
    mapping = write_mapping(tmp_path / "map.csv")
    old, new = cohort(variant=0), cohort(variant=1)
    del new[doc_key(3, 4)]
    # the reference: both versions loaded whole
    path.write_text(json.dumps(old))
    ingest(store, path, mapping)
    path.write_text(json.dumps(new))
    ingest(store, path, mapping)
    expected = graph_snapshot(store)

    fresh(store)
    stream_everything(monkeypatch)
    path.write_text(json.dumps(old))
    ingest(store, path, mapping)
    path.write_text(json.dumps(new))
    writes.clear()
    plan, _ = ingest(store, path, mapping)
    assert plan.changed == {str(path.resolve())}
    assert [b.retract for b in writes] == [[str(path.resolve())]] + [[]] * (len(writes) - 1)
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
    for content in (first, edited):  # the reference: the first version loaded whole, then the edited one
        path.write_text(json.dumps(content))
        ingest(store, path, mapping)
    expected = graph_snapshot(store)
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
