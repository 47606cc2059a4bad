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
from tests.helpers import radgraph_doc

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
