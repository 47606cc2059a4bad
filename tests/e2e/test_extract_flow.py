"""Extract then ingest (Prefect flow) into a real Neo4j: the output is read by `cxrkg ingest` with the same
parser as real RadGraph files; a report that compares with an unseen prior keeps its stated change on the
Observation without a prior study being invented. Report text here is synthetic."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from flows.cli import app

pytestmark = pytest.mark.extract

IU_LIKE = """<?xml version="1.0" encoding="utf-8"?><eCitation><MedlineCitation><Article><Abstract>
<AbstractText Label="COMPARISON">Chest radiograph XXXX.</AbstractText><AbstractText Label="INDICATION">Dyspnea.</AbstractText>
<AbstractText Label="FINDINGS">The left pleural effusion has increased compared to the prior exam. No pneumothorax.</AbstractText>
<AbstractText Label="IMPRESSION">Increased left pleural effusion.</AbstractText>
</Abstract></Article></MedlineCitation><MeSH><major>Pleural Effusion/left</major></MeSH></eCitation>"""


def test_extract_then_ingest_roundtrip(tmp_path, store, prefect_harness):
    from flows.extract_flow import extract_flow

    src = tmp_path / "ecgen"
    src.mkdir()
    (src / "7.xml").write_text(IU_LIKE)
    (src / "8.xml").write_text("<not xml")
    result = extract_flow(str(src), str(tmp_path / "out"))
    assert result.extraction.documents == 1 and len(result.extraction.rejections) == 1
    assert result.ingestion is not None and result.ingestion.ok and not result.ok
    rows = store.read("""
        MATCH (p:Patient)-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)-[:OF_FINDING]->(f:Finding)
        RETURN p.patient_id AS patient, s.study_id AS study, o.anatomy AS anatomy, f.name AS finding,
               o.polarity AS polarity, o.stated_changes AS changes,
               COUNT { (s)-[:PRIOR]->() } AS priors, COUNT { (o)-[:PROGRESSION]->() } AS progressions
        ORDER BY finding, anatomy""")
    assert {(r["patient"], r["study"]) for r in rows} == {("IU-7", "IU-7")}
    effusion = [r for r in rows if r["finding"] == "pleural effusion"]
    assert [(r["anatomy"], r["polarity"], r["changes"]) for r in effusion] == [
        ("left costophrenic angle", "present", ["worsened"])]
    assert all(r["priors"] == 0 and r["progressions"] == 0 for r in rows)
    assert store.read("MATCH (s:Study) RETURN count(s) AS n")[0]["n"] == 1
    assert {r["finding"] for r in rows if r["polarity"] == "absent"} == {"pneumothorax"}


def test_cli_extract_output_ingests_with_same_parser(tmp_path, store, prefect_harness):
    src = tmp_path / "txt"
    src.mkdir()
    (src / "a.txt").write_text("FINDINGS: Stable mild cardiomegaly. New right upper lobe consolidation.")
    out = tmp_path / "out"
    runner = CliRunner()
    res = runner.invoke(app, ["extract", str(src), "--out", str(out)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["ingest", str(out / "radgraph"), "--doc-mapping", str(out / "doc_mapping.csv"),
                              "--rejected", str(tmp_path / "rej.json"), "--no-progress"])
    assert res.exit_code == 0, res.output
    rows = store.read("""MATCH (o:Observation) RETURN o.finding AS f, o.anatomy AS a, o.stated_changes AS c
                         ORDER BY f, a""")
    assert {(r["f"], r["a"], tuple(r["c"])) for r in rows} == {
        ("enlarged cardiac silhouette", "cardiac silhouette", ("no change",)),
        ("consolidation", "right upper lung zone", ("new",))}
