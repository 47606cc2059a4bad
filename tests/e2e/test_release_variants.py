"""What a public release adds, loaded into the real Neo4j: the RadGraph spellings of the releases' own files
(a list of the ``radgraph`` package's per-call outputs, DyGIE prediction lines) load like RadGraph JSON, and
the ingest summary counts each variant by name. Synthetic documents written here in those layouts."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from flows.cli import app
from tests.fixtures.inputs import radgraph_doc

PID = "10000088"


def test_variant_spellings_load_and_are_counted_in_the_summary(store, prefect_harness, tmp_path):
    store.clear()
    folder = tmp_path / "radgraph"
    folder.mkdir()
    effusion = radgraph_doc("Small left effusion .", [
        ("Small", "Observation::definitely present", 0, [("modify", 3)]),
        ("left", "Anatomy::definitely present", 1, []),
        ("effusion", "Observation::definitely present", 2, [("located_at", 2)])])
    (folder / "outputs.json").write_text(json.dumps([{"0": effusion}]))
    line = {"doc_key": "p10/p10000088/s50000882.txt", "sentences": [["No", "effusion", "."]],
            "predicted_ner": [[[1, 1, "Observation::definitely absent", 2.5, 0.93]]], "predicted_relations": [[]]}
    (folder / "pred.jsonl").write_text(json.dumps(line) + "\n")
    mapping = tmp_path / "mapping.csv"
    mapping.write_text(f"doc_key,patient_id,study_id,study_datetime\n0,{PID},50000881,2150-01-01 08:00:00\n"
                       f"p10/p10000088/s50000882.txt,{PID},50000882,2150-01-11 08:00:00\n")
    res = CliRunner().invoke(app, ["ingest", str(folder), "--doc-mapping", str(mapping), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "release variants kept: radgraph package: list of per-call outputs (1), radgraph-xl DyGIE: " \
           "predicted_ner / predicted_relations read (1)" in " ".join(res.output.split())
    rows = store.read("""MATCH (s:Study)-[:HAS_OBSERVATION]->(o:Observation)-[:OF_FINDING]->(f:Finding)
                         WHERE f.name = 'pleural effusion' RETURN s.study_id AS study, o.polarity AS polarity""")
    assert sorted({(r["study"], r["polarity"]) for r in rows}) == [("50000881", "present"), ("50000882", "absent")]
