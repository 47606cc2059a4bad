"""Big RadGraph files are streamed: parsed with ijson (JSON) or by line (JSONL) in chunks that hold exactly the
whole file's records (no Neo4j; tests/e2e/test_radgraph_streaming.py writes them). Synthetic documents only."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from graph.formats.radgraph import check_json_stream, parse_radgraph, parse_radgraph_chunks, read_doc_mapping
from graph.records import InputError
from graph.vocabulary import vocabulary
from tests.fixtures.inputs import radgraph_doc
from tests.fixtures.radgraph_cohort import CLEAR, cohort, doc_key, jsonl_line, write_mapping

V = vocabulary()
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
