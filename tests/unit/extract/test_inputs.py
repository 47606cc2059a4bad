"""Extraction inputs and bad input: real malformed files written here, each rejected with a clear error
naming file / record / field, the others extracted, and a non-zero exit code from the command line.
All report text here is synthetic, written for these tests."""

from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from flows.cli import app
from graph.extract.inputs import MAX_REPORT_BYTES, CsvColumns, iter_inputs
from graph.extract.pipeline import run_extraction
from graph.formats.radgraph import parse_radgraph, read_doc_mapping
from graph.records import Rejection
from graph.vocabulary import vocabulary

pytestmark = pytest.mark.extract

GOOD = "FINDINGS: Small left pleural effusion, increased. IMPRESSION: No pneumothorax."
XML = """<?xml version="1.0" encoding="utf-8"?><eCitation><MedlineCitation><Article><Abstract>
<AbstractText Label="COMPARISON">{cmp}</AbstractText><AbstractText Label="INDICATION">Cough.</AbstractText>
<AbstractText Label="FINDINGS">{findings}</AbstractText><AbstractText Label="IMPRESSION">{impression}</AbstractText>
</Abstract></Article></MedlineCitation><MeSH><major>Pleural Effusion/left</major></MeSH></eCitation>"""


def _reasons(rejections):
    return {(r.file.split("/")[-1], r.field): r.reason for r in rejections}


def test_text_folder_with_bad_files(tmp_path):
    src = tmp_path / "reports"
    src.mkdir()
    (src / "good.txt").write_text(GOOD)
    (src / "empty.txt").write_text("   \n")
    (src / "huge.txt").write_text("Small effusion. " * (1 << 16))  # ~1 MB
    (src / "latin1.txt").write_bytes("Small effusion, r\xe9sum\xe9.".encode("latin-1"))
    items = list(iter_inputs(src))
    bad = [x for x in items if isinstance(x, Rejection)]
    assert [x.doc_key for x in items if not isinstance(x, Rejection)] == ["good"]
    reasons = _reasons(bad)
    assert reasons[("empty.txt", None)] == "empty report (no text)"
    assert "over the 100,000-byte limit" in reasons[("huge.txt", None)] and (src / "huge.txt").stat().st_size > MAX_REPORT_BYTES
    assert reasons[("latin1.txt", None)].startswith("not UTF-8: byte 0xe9 at offset")
    assert {r.record for r in bad} == {"empty", "huge", "latin1"}


def test_csv_rows_and_missing_columns(tmp_path):
    path = tmp_path / "reports.csv"
    rows = ["rid,patient,when,report",
            f'r1,P1,2020-01-02,"{GOOD}"',
            'r2,P1,2020-03-04,"The left pleural effusion has resolved."',
            ',P2,2020-01-01,"No effusion."',
            'r4,P2,not a date,"No effusion."',
            'r5,P3,2020-01-01,""',
            'r1,P3,2020-01-01,"Duplicate id."']
    data = ("\n".join(rows) + "\n").encode() + b'r7,P4,2020-01-01,"bad \xff byte"\n'
    path.write_bytes(data)
    cols = CsvColumns("rid", "report", "patient", "when")
    items = list(iter_inputs(path, cols))
    good = [x for x in items if not isinstance(x, Rejection)]
    assert [(g.doc_key, g.patient_id, g.study_datetime) for g in good] == [
        ("r1", "P1", "2020-01-02 00:00:00"), ("r2", "P1", "2020-03-04 00:00:00")]
    bad = {r.record: (r.field, r.reason) for r in items if isinstance(r, Rejection)}
    assert bad["line 4"] == ("rid", "empty report id")
    assert bad["line 5 (r4)"][0] == "when" and "unreadable study date" in bad["line 5 (r4)"][1]
    assert bad["line 6 (r5)"] == ("report", "empty report (no text)")
    assert bad["line 7 (r1)"] == ("rid", "duplicate report id 'r1'")
    assert bad["line 8 (r7)"][0] == "report" and bad["line 8 (r7)"][1].startswith("not UTF-8: byte 0xff")
    # a missing column rejects the file, naming the column
    missing = list(iter_inputs(path, CsvColumns("rid", "findings_text")))
    assert len(missing) == 1 and missing[0].field == "findings_text" and "missing column" in missing[0].reason


def test_csv_with_byte_order_mark_and_crlf_is_read_streamed(tmp_path):
    """A spreadsheet's export: a UTF-8 byte-order mark before the header, CRLF line ends, a quoted line
    break inside a report; line numbers count physical lines as before (the file is streamed)."""
    path = tmp_path / "export.csv"
    path.write_bytes(b'\xef\xbb\xbfreport_id,text\r\nr1,"No effusion.\r\nStable."\r\nr2,\r\nr3,"Clear \xc3\xa9."\r\n')
    items = list(iter_inputs(path))
    assert [(x.doc_key, x.report) for x in items if not isinstance(x, Rejection)] == [
        ("r1", "No effusion.\r\nStable."), ("r3", "Clear \u00e9.")]
    assert [(r.record, r.field) for r in items if isinstance(r, Rejection)] == [("line 4 (r2)", "text")]


def test_open_i_xml_folder(tmp_path):
    src = tmp_path / "ecgen-radiology"
    src.mkdir()
    (src / "1.xml").write_text(XML.format(cmp="Chest radiograph of XXXX.", findings="Small left effusion, increased.",
                                          impression="Effusion."))
    (src / "2.xml").write_text("<eCitation><MedlineCitation><oops")
    (src / "3.xml").write_text(XML.format(cmp="", findings="", impression="").replace("Cough.", ""))
    (src / "4.xml").write_bytes(XML.format(cmp="", findings="Caf\xe9.", impression="").encode("latin-1"))
    items = list(iter_inputs(src))
    good = [x for x in items if not isinstance(x, Rejection)]
    assert [g.doc_key for g in good] == ["IU-1"] and set(good[0].report) == {"comparison", "indication", "findings",
                                                                            "impression"}
    reasons = _reasons([x for x in items if isinstance(x, Rejection)])
    assert reasons[("2.xml", None)].startswith("invalid XML")
    assert reasons[("3.xml", "AbstractText")].startswith("empty report")
    assert reasons[("4.xml", None)].startswith("not UTF-8")


def test_extraction_output_reads_back(tmp_path):
    src = tmp_path / "reports"
    src.mkdir()
    for n in range(5):
        (src / f"r{n}.txt").write_text(GOOD)
    (src / "bad.txt").write_bytes(b"\xff\xfe")
    summary = run_extraction(iter_inputs(src), tmp_path / "out", "rules", shard_size=2)
    assert (summary.documents, len(summary.shards), len(summary.rejections)) == (5, 3, 1)
    assert json.loads((tmp_path / "out" / "rejected.json").read_text())[0]["record"] == "bad"
    mapping = read_doc_mapping(tmp_path / "out" / "doc_mapping.csv")
    assert set(mapping) == {f"r{n}" for n in range(5)}
    parsed = [parse_radgraph(__import__("pathlib").Path(p), vocabulary(), mapping) for p in summary.shards]
    assert not any(p.rejections for p in parsed)
    mentions = [m for p in parsed for m in p.mentions]
    assert {(m.finding, m.polarity, m.change) for m in mentions} == {
        ("pleural effusion", "present", "worsened"), ("pneumothorax", "absent", None)}


def test_cli_exit_code_and_report(tmp_path, monkeypatch):
    monkeypatch.setenv("CXRKG_HOME", str(tmp_path / "home"))
    reports = tmp_path / "home" / "rejected"  # where every command's rejection reports go by default
    src = tmp_path / "reports"
    src.mkdir()
    (src / "good.txt").write_text(GOOD)
    (src / "empty.txt").write_text("")
    runner = CliRunner()
    res = runner.invoke(app, ["extract", str(src), "--out", str(tmp_path / "out")])
    assert res.exit_code == 6, res.output  # done, but a file was rejected
    [written] = reports.glob("extract-*.json")
    assert str(written) in res.output
    report = json.loads(written.read_text())
    assert report == [{"file": str(src / "empty.txt"), "record": "empty", "field": None,
                       "reason": "empty report (no text)"}]
    res = runner.invoke(app, ["extract", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o2")])
    assert res.exit_code == 1
    (src / "empty.txt").unlink()
    res = runner.invoke(app, ["extract", str(src), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert list(reports.glob("*.json")) == [written]  # nothing rejected, nothing written
    csv_path = tmp_path / "r.csv"
    csv_path.write_text("id,text\nx1,No effusion.\n")
    res = runner.invoke(app, ["extract", str(csv_path), "--out", str(tmp_path / "o3"), "--text-column", "body",
                              "--rejected", str(tmp_path / "o3.json")])
    assert res.exit_code == 6 and "missing column" in json.loads((tmp_path / "o3.json").read_text())[0]["reason"]


def test_a_batch_of_edge_inputs_extracts_the_rest(tmp_path):
    """An empty report, a 1 MB report, bytes that are not UTF-8 (rejections), a report without section
    headers (extracted whole, its mentions without a section) and a good report, in one batch."""
    src = tmp_path / "reports"
    src.mkdir()
    (src / "empty.txt").write_text("")
    (src / "huge.txt").write_text("Small effusion. " * (1 << 16))
    (src / "latin1.txt").write_bytes("Small effusion, r\xe9sum\xe9.".encode("latin-1"))
    (src / "plain.txt").write_text("Small left pleural effusion. No pneumothorax.")
    (src / "good.txt").write_text(GOOD)
    summary = run_extraction(iter_inputs(src), tmp_path / "out", "rules")
    assert summary.documents == 2 and {r.record for r in summary.rejections} == {"empty", "huge", "latin1"}
    mapping = read_doc_mapping(tmp_path / "out" / "doc_mapping.csv")
    mentions = [m for p in summary.shards for m in parse_radgraph(__import__("pathlib").Path(p), vocabulary(),
                                                                   mapping).mentions if m.record == "plain"]
    assert {(m.finding, m.polarity, m.side, m.section) for m in mentions} == {
        ("pleural effusion", "present", "left", None), ("pneumothorax", "absent", None, None)}
