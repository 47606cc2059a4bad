"""The ingest flow under Prefect's test harness, and the command line, against the real Neo4j."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.fixtures.effusion import LCA, PID, STUDY, effusion_study, report
from tests.fixtures.loading import load_into

runner = CliRunner()


def test_flow_summary_and_rejected_report(store, prefect_harness, tmp_path):
    from flows.ingest_flow import ingest_flow

    inputs = tmp_path / "in"
    effusion_study(inputs, 1, severity="small")
    effusion_study(inputs, 2, severity="large", compare="worsened")
    report(inputs, 2, "CHAN-CON-WOR")
    bad = effusion_study(inputs, 3)
    bad.write_text("{")
    rejected = inputs / "rejected.json"  # inside the input folder: the run must not read its own report
    summary = ingest_flow([str(inputs)], rejected_report=str(rejected))
    assert (summary.files_seen, summary.files_loaded, summary.files_rejected) == (4, 3, 1)
    # study 2 against 1, at anatomy and at study level: derived persistent, stated worsened x 2 sources
    assert (summary.studies, summary.progression_edges) == (2, 6)
    assert not summary.ok
    assert [r["file"] for r in json.loads(rejected.read_text())] == [str(bad.resolve())]
    again = ingest_flow([str(inputs)], rejected_report=str(rejected))
    assert (again.files_loaded, again.files_unchanged, again.elements_created) == (0, 3, 0)


def test_unreadable_metadata_rows_are_rejected_once_and_the_rest_loads(store, prefect_harness, tmp_path):
    from flows.ingest_flow import ingest_flow

    effusion_study(tmp_path, 1, severity="small")
    (tmp_path / "mimic-cxr-2.0.0-metadata.csv").write_text(
        "dicom_id,subject_id,study_id,ViewPosition,StudyDate,StudyTime\n"
        f"x1,{PID},{STUDY[1]},PA,21500110,080000\nx2,{PID},{STUDY[2]},PA,2150-01-99,1\n")
    summary = ingest_flow([str(tmp_path)], batch_files=1, rejected_report=str(tmp_path / "r.json"))
    assert [(r.record, r.field) for r in summary.rejections] == [("line 3 (dicom x2)", "StudyDate")]
    assert [r["record"] for r in json.loads((tmp_path / "r.json").read_text())] == ["line 3 (dicom x2)"]
    assert summary.files_loaded == 1 and summary.studies == 1 and not summary.ok


def test_cli_ingest_query_and_stats(store, prefect_harness, tmp_path):
    effusion_study(tmp_path, 1, severity="small")
    effusion_study(tmp_path, 2, severity="large", compare="worsened")
    result = runner.invoke(app, ["ingest", str(tmp_path), "--rejected", str(tmp_path / "r.json"), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "files loaded" in result.output
    from flows.cli.common import library_log

    assert f"library log (Prefect, warnings): {library_log()}" in result.output.replace("\n", "")
    assert "prefect" in library_log().read_text().lower()  # Prefect's run logs went to the file, not the terminal

    result = runner.invoke(app, ["query", "worsening_findings", "-p", f"patient_id={PID}", "-p", "finding=pleural fluid",
                                 "-p", "level=anatomy", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [(r["study_id"], r["anatomy"]) for r in rows] == [(str(STUDY[2]), LCA)]
    result = runner.invoke(app, ["query", "worsening_findings", "-p", f"patient_id={PID}", "-p", "finding=effusion",
                                 "-p", "level=region"])
    assert result.exit_code == 1 and "must be one of study," in result.output

    result = runner.invoke(app, ["query", "worsening_findings", "-p", f"patient_id={PID}", "-p", "finding=unicorns"])
    assert result.exit_code == 1 and "not in the vocabulary" in result.output

    result = runner.invoke(app, ["query", "patient_studies", "-p", f"patient_id={PID}", "--format", "csv"])
    assert result.output.splitlines()[0].startswith("study_order,study_id,study_datetime,prior_study_id,days")

    result = runner.invoke(app, ["stats", "--format", "json"])
    stats = json.loads(result.output)
    assert stats["nodes"]["Study"] == 2 and stats["relationships"]["PRIOR"] == 1 and stats["orphans"] == {}

    bad = effusion_study(tmp_path, 3)
    bad.write_text("[]")
    result = runner.invoke(app, ["ingest", str(tmp_path), "--rejected", str(tmp_path / "r.json"), "--no-progress"])
    assert result.exit_code == 6 and "rejected" in result.output
    assert [r["file"] for r in json.loads((tmp_path / "r.json").read_text())] == [str(bad.resolve())]


@pytest.mark.extract
def test_cli_extract_writes_radgraph_that_ingest_reads(tmp_path):
    from graph.formats.radgraph import parse_radgraph, read_doc_mapping
    from graph.vocabulary import vocabulary

    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "r1.txt").write_text("FINDINGS: Moderate left pleural effusion has increased. No pneumothorax.")
    (reports / "r2.txt").write_text("IMPRESSION: The heart is enlarged.")
    result = runner.invoke(app, ["extract", str(reports), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    mapping = read_doc_mapping(tmp_path / "out" / "doc_mapping.csv")
    parts = sorted((tmp_path / "out" / "radgraph").glob("part-*.json"))
    assert parts
    parsed = [parse_radgraph(p, vocabulary(), mapping) for p in parts]
    assert [r for pf in parsed for r in pf.rejections] == []
    got = {(m.record, m.finding, m.polarity, m.change) for pf in parsed for m in pf.mentions}
    assert ("r1", "pleural effusion", "present", "worsened") in got
    assert ("r1", "pneumothorax", "absent", None) in got
    assert ("r2", "enlarged cardiac silhouette", "present", None) in got


def test_cli_query_says_when_a_patient_or_study_is_not_in_the_graph(store, tmp_path):
    effusion_study(tmp_path, 1)
    load_into(store, tmp_path)
    result = runner.invoke(app, ["query", "patient_studies", "-p", "patient_id=99999999"])
    assert result.exit_code == 1 and "no patient 99999999 in the graph" in result.output
    result = runner.invoke(app, ["query", "changes_between_studies", "-p", f"current_study_id={STUDY[1]}",
                                 "-p", "prior_study_id=404"])
    assert result.exit_code == 1 and "no study 404 in the graph" in result.output
    result = runner.invoke(app, ["query", "source_disagreements", "-p", "patient_id="])  # "" means all: no check
    assert result.exit_code == 0, result.output
