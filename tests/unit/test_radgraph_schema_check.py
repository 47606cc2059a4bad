"""RadGraph's schema checked on what cxrkg writes and reads: relations outside it counted and named, the real
RadGraph-XL sample passing. Documents here are made up for these tests, except the RadGraph-XL sample."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from graph.extract.pipeline import run_extraction
from graph.extract.inputs import ReportInput
from graph.formats.radgraph import DocStudy, iter_documents, parse_radgraph
from graph.formats.radgraph.schema import drop_out_of_schema, label_kind, schema_violations, written_violations
from graph.ingest.load import BatchResult
from graph.vocabulary import vocabulary

SAMPLE = Path(__file__).resolve().parents[2] / "graph" / "samples" / "radgraph_xl" / "expected_processed_annotations.json"


def _ent(tokens, label, start, relations=()):
    return {"tokens": tokens, "label": label, "start_ix": start, "end_ix": start + len(tokens.split()) - 1,
            "relations": [list(r) for r in relations]}


#: "Small left effusion , no pneumothorax ." with the side written the old way (left modify effusion) and an
#: observation located at an observation
LEGACY = {"text": "Small left effusion , no pneumothorax .", "entities": {
    "1": _ent("Small", "OBS-DP", 0, [("modify", "3")]),
    "2": _ent("left", "ANAT-DP", 1, [("modify", "3")]),
    "3": _ent("effusion", "OBS-DP", 2, [("located_at", "5")]),
    "5": _ent("pneumothorax", "OBS-DA", 5)}}


def test_each_relation_outside_the_schema_is_counted_by_its_kinds():
    assert schema_violations(LEGACY["entities"]) == Counter({"ANAT modify OBS": 1, "OBS located_at OBS": 1})
    fine = {"1": _ent("left", "ANAT-DP", 0, [("modify", "2")]), "2": _ent("base", "ANAT-DP", 1),
            "3": _ent("opacity", "Observation::definitely present", 2, [("located_at", "2"), ("suggestive_of", "4")]),
            "4": _ent("pneumonia", "OBS-U", 4), "5": _ent("increased", "CHAN-CON-WOR", 5, [("modify", "3")])}
    assert schema_violations(fine) == Counter()
    assert schema_violations({"1": _ent("x", "OBS-DP", 0, [("modify", "9")])}) == Counter({"OBS modify ?": 1})


def test_written_documents_spell_labels_as_radgraph_does():
    doc = {"entities": {"1": _ent("worse", "CHAN-WOR", 0), "2": _ent("lung", "Anatomy::definitely present", 1),
                        "3": _ent("oops", "FINDING", 2)}}
    assert written_violations(doc) == Counter({"label 'CHAN-WOR'": 1, "label 'Anatomy::definitely present'": 1,
                                               "label 'FINDING'": 1})
    assert [label_kind(x) for x in ("OBS-U", "Observation::measurement::uncertain", "CHAN-NC", "X")] == [
        "OBS", "OBS", "CHAN", None]


def test_a_schema_following_reader_drops_what_the_schema_lacks():
    kept = drop_out_of_schema(LEGACY["entities"])
    assert kept["2"]["relations"] == [] and kept["3"]["relations"] == [] and kept["1"]["relations"] == [["modify", "3"]]
    assert LEGACY["entities"]["2"]["relations"] == [["modify", "3"]]  # the input is left as it was


def test_the_real_radgraph_xl_sample_follows_the_schema():
    docs = list(iter_documents(SAMPLE, "sample"))
    assert len(docs) == 5 and all(isinstance(d, dict) for _, d in docs)
    assert sum((schema_violations(d["entities"]) for _, d in docs), Counter()) == Counter()
    parsed = parse_radgraph(SAMPLE, vocabulary(), {str(k): DocStudy("p", f"s{k}") for k in range(1, 6)})
    assert not parsed.rejections and parsed.mentions and parsed.out_of_schema == {}


def test_the_loader_names_out_of_schema_relations_and_still_reads_the_side(tmp_path):
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps({"r1": LEGACY}))
    parsed = parse_radgraph(path, vocabulary(), {"r1": DocStudy("p1", "s1")})
    assert parsed.out_of_schema == {"ANAT modify OBS": 1, "OBS located_at OBS": 1}
    assert {(m.finding, m.side) for m in parsed.mentions if m.polarity == "present"} == {("pleural effusion", "left")}


def test_the_ingest_summary_adds_the_counts_of_each_batch():
    from flows.ingest_flow import IngestSummary

    summary = IngestSummary()
    summary.add_batch(BatchResult(out_of_schema=Counter({"ANAT modify OBS": 2})))
    summary.add_batch(BatchResult(out_of_schema=Counter({"ANAT modify OBS": 1, "OBS located_at OBS": 4})))
    assert summary.out_of_schema == {"ANAT modify OBS": 3, "OBS located_at OBS": 4}


def test_the_extraction_summary_names_what_an_extractor_writes_outside_the_schema(tmp_path):
    def extractor(items):
        for key, _ in items:
            yield key, LEGACY

    inputs = [ReportInput(f"r{i}", "Small left effusion.", "p1", f"s{i}", "2150-01-01", "f.csv") for i in range(3)]
    summary = run_extraction(inputs, tmp_path / "out", extractor, shard_size=2)
    assert summary.documents == 3
    assert dict(summary.out_of_schema) == {"ANAT modify OBS": 3, "OBS located_at OBS": 3}
