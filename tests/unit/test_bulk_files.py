"""The bulk load's import files and command, without Neo4j: value formats the importer reads back as
written, the command's Neo4j 5.26 syntax, and the same rows whether patients are derived batch by batch
or parked and derived at the end."""

from __future__ import annotations

import csv
import hashlib
import json
from datetime import datetime
from pathlib import Path

import pytest

from graph.ingest import discover, plan_ingest
from graph.ingest import load as ingest_load, plan as ingest_plan
from graph.ingest.bulk import BulkInputError, BulkSink, write_part
from graph.ingest.import_files import ImportFileError, ImportFiles, import_arguments
from graph.synth import write_cohort
from graph.vocabulary import vocabulary
from tests.fixtures.bulk import write_import_files


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_values_are_written_as_the_importer_reads_them(tmp_path):
    files = ImportFiles(tmp_path)
    report = files.node_file("Report")
    report.write({"report_id": "r1", "study_id": "s1", "text": 'FINDINGS: "small" effusion.\nIMPRESSION: none',
                  "source": "radgraph", "unmapped_terms": ["haze", "a;b"]})
    report.write({"report_id": "r2", "study_id": "s1", "text": "", "source": "radgraph"})
    prior = files.relationship_file("PRIOR", "Study", "Study")
    prior.write({"start": "s2", "end": "s1", "days": 91})
    files.close()

    header, first, second = _rows(report.path)
    assert header == ["report_id:ID(Report)", "study_id:string", "text:string", "source:string", "unmapped_terms:string[]",
                      "file:string"]
    assert first[2] == 'FINDINGS: "small" effusion.\nIMPRESSION: none' and first[4] == "haze\x1fa;b"
    lines = report.path.read_text().splitlines()
    assert lines[-1] == '"r2","s1","","radgraph",,'  # empty text quoted (kept), missing list unquoted (unset)
    assert report.multiline and not prior.multiline
    assert _rows(prior.path) == [[":START_ID(Study)", ":END_ID(Study)", "days:long"], ["s2", "s1", "91"]]


@pytest.mark.parametrize("row, problem", [
    ({"study_id": "s1", "study_order": "3"}, "expected an integer"),
    ({"study_id": "s1", "study_order": True}, "expected an integer"),
    ({"study_id": "s1", "unknown": 1}, "no column for ['unknown']"),
])
def test_a_row_the_importer_would_misread_is_an_error(tmp_path, row, problem):
    files = ImportFiles(tmp_path)
    with pytest.raises(ImportFileError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        files.node_file("Study").write(row)
    files.close()


def test_lists_are_never_empty_and_never_hold_the_delimiter(tmp_path):
    files = ImportFiles(tmp_path)
    for bad in ([], ["a\x1fb"]):
        with pytest.raises(ImportFileError):
            files.node_file("Report").write({"report_id": "r", "unmapped_terms": bad})
    files.close()


def test_import_command_names_every_written_file_once(tmp_path):
    files = ImportFiles(tmp_path)
    files.node_file("Study").write({"study_id": "s1"})
    files.node_file("Report").write({"report_id": "r1", "text": "two\nlines"})
    files.node_file("Patient")  # opened, never written: left out
    files.relationship_file("OF_FINDING", "Observation", "Finding").write({"start": "o", "end": "f"})
    files.relationship_file("OF_FINDING", "StudyFinding", "Finding").write({"start": "n", "end": "f"})
    files.close()
    more = ImportFiles(tmp_path / "part1")
    more.node_file("Study").write({"study_id": "s2"})
    more.close()
    cmd = import_arguments("neo4j", files.listing() + more.listing(), tmp_path / "r.txt", threads=4)

    assert cmd[:4] == ["database", "import", "full", "neo4j"] and "--threads=4" in cmd
    assert "--overwrite-destination=true" in cmd and "--array-delimiter=U+001F" in cmd
    assert f"--nodes=Study={tmp_path / 'nodes_Study.csv'},{tmp_path / 'part1' / 'nodes_Study.csv'}" in cmd
    assert "--auto-skip-subsequent-headers=true" in cmd  # each file of a group starts with the header
    assert not any("Patient" in a for a in cmd)
    assert sum(a.startswith("--relationships=OF_FINDING=") for a in cmd) == 2
    assert cmd[-2:] == ["--multiline-fields-format=v2", f"--multiline-fields={tmp_path / 'nodes_Report.csv'}"]


def _write(cohort: Path, out: Path, mode: str, batch_files: int = 40,
           rejections: list | None = None) -> dict[str, list[str]]:
    """Import files of a cohort written batch by batch (``by_batch``), with every patient parked
    (``parked``), or by write_part and absorb (``parts``) (:func:`tests.fixtures.bulk.write_import_files`); returns each group's sorted data lines and adds
    the rejections to ``rejections``."""
    groups: dict[str, list[str]] = {}
    for f in write_import_files(cohort, out, mode, batch_files, rejections):
        groups.setdefault(f.path.stem, []).extend(f.path.read_text(encoding="utf-8").splitlines()[1:])
    return {group: sorted(lines) for group, lines in groups.items()}


def test_every_way_of_writing_gives_the_same_rows(tmp_path):
    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=6, seed=11)
    by_batch = _write(cohort, tmp_path / "by_batch", "by_batch")
    assert _write(cohort, tmp_path / "parked", "parked") == by_batch
    assert _write(cohort, tmp_path / "parts", "parts") == by_batch
    assert len(by_batch["nodes_Observation"]) > 100 and len(by_batch["rels_PROGRESSION_StudyFinding_StudyFinding"]) > 10
    assert all(len(line.split(",")[1]) == 66 for line in by_batch["nodes_SourceFile"])  # quoted sha256, filled in
    assert not list(tmp_path.rglob("parked_*"))  # buckets are deleted once derived


def test_the_same_image_in_two_files_is_rejected_in_one_writer_and_stops_the_bulk_load_across_parts(tmp_path):
    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=2, seed=3)
    graph = next((cohort / "scene_graphs").rglob("*_SceneGraph.json"))
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / graph.name).write_text(graph.read_text())
    image = graph.name.removesuffix('_SceneGraph.json')
    rejections: list = []
    _write(tmp_path, tmp_path / "out", "parked", rejections=rejections)
    assert [(r.record, r.field) for r in rejections] == [(image, "image_id")]
    assert "already stored from" in rejections[0].reason and graph.name in rejections[0].reason
    with pytest.raises(BulkInputError, match=f"image {image} is in both"):
        _write(tmp_path, tmp_path / "out2", "parts", batch_files=1)


@pytest.mark.parametrize("mode", ["by_batch", "parts"])
def test_a_streamed_file_has_one_complete_source_file_row(tmp_path, monkeypatch, mode):
    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=3, seed=5)
    docs: dict = {}
    for path in sorted((cohort / "radgraph").rglob("*.json")):
        docs.update(json.loads(path.read_text()))
        path.unlink()
    merged = cohort / "radgraph" / "all_reports.json"
    merged.write_text(json.dumps(docs))
    monkeypatch.setattr(ingest_plan, "STREAM_THRESHOLD_BYTES", 0)
    monkeypatch.setattr(ingest_load, "STREAM_CHUNK_DOCS", 2)  # the first chunk's row is marked incomplete
    assert len(docs) > 4

    rows = _write(cohort, tmp_path / "out", mode)["nodes_SourceFile"]

    paths = [line.split(",")[0] for line in rows]
    assert len(paths) == len(set(paths))
    [merged_row] = [line for line in rows if line.startswith(f'"{merged}"')]
    assert merged_row.split(",")[1] == f'"{hashlib.sha256(merged.read_bytes()).hexdigest()}"'
    assert f",{len(docs)},0," in merged_row  # records, rejected


def test_a_record_is_written_as_its_row_and_a_wrong_one_is_an_error(tmp_path):
    from dataclasses import dataclass

    from graph.records import BoundingBoxRecord

    files = ImportFiles(tmp_path)
    box = BoundingBoxRecord("i1|0", "i1", "left lung", 1, 2, 30, 40, finding_label="nodule")
    files.node_file("BoundingBox").write_record(box)
    files.node_file("BoundingBox").write({k: v for k, v in vars(box).items() if v is not None})
    with pytest.raises(ImportFileError, match="expected an integer"):
        files.node_file("BoundingBox").write_record(BoundingBoxRecord("i1|1", "i1", "left lung", 1, 2, 30, "40"))

    @dataclass
    class Extra:
        study_id: str
        unknown: int

    with pytest.raises(ImportFileError, match=r"no column for \['unknown'\]"):
        files.node_file("Study").write_record(Extra("s1", 1))
    files.close()
    header, by_record, by_dict = files.node_file("BoundingBox").path.read_text().splitlines()
    assert by_record == by_dict == '"i1|0","i1","left lung",1,2,30,40,,,,,,,,,"nodule"'


def test_parts_absorbed_out_of_the_order_a_worker_wrote_them_keep_its_files_whole(tmp_path):
    """A Dask worker may write batch 2 after batch 3: its files' listing then grows in the other order."""
    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=4, seed=11)
    v = vocabulary()
    plan = plan_ingest(discover([cohort], fingerprints=False), {}, v.version)
    batches = plan.batches(15)
    assert len(batches) >= 2
    parts = [write_part(b, None, plan.metadata, plan.patients_within(b), tmp_path / "parts", k, datetime(2026, 1, 1))
             for k, b in enumerate(batches)]  # one worker (this process), in batch order: its files grow
    sink = BulkSink(ImportFiles(tmp_path / "out"), v, datetime(2026, 1, 1))
    for part in [parts[-1], *parts[:-1]]:  # absorbed with the last (largest) listing first
        sink.absorb(part)
    rows = {f.path: f.rows for f in sink.listing()}
    assert rows == {f.path: f.rows for f in parts[-1].files} and sum(rows.values()) > 100
    assert all(rows[p] == len(p.read_text().splitlines()) - 1 for p in rows)


def test_a_batch_of_rows_is_written_as_row_by_row_and_a_bad_row_stops_it_where_it_is(tmp_path):
    from graph.records import BoundingBoxRecord

    one, many = ImportFiles(tmp_path / "one"), ImportFiles(tmp_path / "many")
    rows = [{"report_id": f"r{n}", "study_id": "s1", "text": f'line {n} "quoted"', "source": "mimic",
             "unmapped_terms": ["a", 'b"c'] if n % 2 else None, "file": "x.json"} for n in range(4)]
    rows[2]["text"] = "two\nlines"
    boxes = [BoundingBoxRecord(f"i1|{n}", "i1", "left lung", n, 2, 30, 40) for n in range(3)]
    pairs = [("s1", "r0"), ('s"2', "r1")]
    for row in rows:
        one.node_file("Report").write(row)
    for box in boxes:
        one.node_file("BoundingBox").write_record(box)
    for start, end in pairs:
        one.relationship_file("HAS_REPORT", "Study", "Report").write_pair(start, end)
    many.node_rows("Report", rows)
    many.node_records("BoundingBox", boxes)
    many.relationship_pairs("HAS_REPORT", "Study", "Report", pairs)
    many.node_rows("Image", [])  # nothing to write: no file
    for files in (one, many):
        files.close()
    assert [(f.group, f.path.name, f.rows, f.multiline) for f in one.listing()] == \
        [(f.group, f.path.name, f.rows, f.multiline) for f in many.listing()]
    assert [f.multiline for f in many.listing()] == [True, False, False]
    for f in one.listing():
        assert (tmp_path / "many" / f.path.name).read_bytes() == f.path.read_bytes()
    assert not (tmp_path / "many" / "nodes_Image.csv").exists()

    bad = ImportFiles(tmp_path / "bad")
    with pytest.raises(ImportFileError, match=r"row \{'report_id': 'r9'.*expected a non-empty list of texts"):
        bad.node_rows("Report", [rows[0], {**rows[1], "report_id": "r9", "unmapped_terms": [1]}, rows[3]])
    with pytest.raises(ImportFileError, match=r"no column for \['colour'\]"):
        bad.node_rows("Report", [rows[0], {**rows[1], "colour": "red"}])
    with pytest.raises(ImportFileError, match="expected an integer"):
        bad.node_records("BoundingBox", [boxes[0], BoundingBoxRecord("i1|9", "i1", "left lung", 1, 2, 30, "40")])
    bad.close()
    # the rows before the bad one are written, as they were one by one
    assert [r[0] for r in _rows(bad.node_file("Report").path)[1:]] == ["r0", "r0"]
    assert [r[0] for r in _rows(bad.node_file("BoundingBox").path)[1:]] == ["i1|0"]


def test_the_collector_is_paused_while_a_batch_is_written_and_resumed_after():
    import gc

    from graph.records import cyclic_gc_paused

    seen = cyclic_gc_paused()(gc.isenabled)  # as bulk.py decorates its batch writer and derivation
    assert gc.isenabled()
    assert seen() is False and gc.isenabled()
    gc.disable()
    try:
        assert seen() is False and not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_a_batch_without_quotes_takes_the_plain_formatter_and_writes_what_rows_one_by_one_write(tmp_path):
    # quotes are counted per batch (issue 36): a batch whose texts hold none is quoted without escaping,
    # integers, booleans and date-times go into the lines as they are; a record batch with a quote anywhere
    # is made again, escaped
    from graph.records import BoundingBoxRecord

    one, many = ImportFiles(tmp_path / "one"), ImportFiles(tmp_path / "many")
    rows = [{"episode_id": f"e{n}", "patient_id": "p1", "level": "study", "finding": "", "number": n,
             "first_datetime": "2020-01-02T03:04:05" if n else None, "closed": n % 2 == 0,
             "study_ids": ["s1", "s2"][: n % 2 + 1], "duration_days": None if n == 1 else -n} for n in range(4)]
    boxes = [BoundingBoxRecord(f"i1|{n}", "i1", "left lung", n, 2, 30, 40, finding_label='a "b"' if n else None)
             for n in range(3)]
    for row in rows:
        one.node_file("Episode").write(row)
    for box in boxes:
        one.node_file("BoundingBox").write_record(box)
    many.node_rows("Episode", rows)
    many.node_records("BoundingBox", boxes)
    for files in (one, many):
        files.close()
    for f in one.listing():
        assert (tmp_path / "many" / f.path.name).read_bytes() == f.path.read_bytes()
    lines = (tmp_path / "many" / "nodes_Episode.csv").read_text().splitlines()
    assert lines[1].startswith('"e0","p1","study",,"",0,') and ",true," in lines[1] and ",false," in lines[2]
    assert _rows(tmp_path / "many" / "nodes_BoundingBox.csv")[2][-1] == 'a "b"'


def test_doubles_are_written_bare_their_arrays_joined_and_a_value_the_importer_would_misread_refused(tmp_path):
    import yaml

    from graph.schema import SCHEMA_FILE, load_schema

    data = yaml.safe_load(SCHEMA_FILE.read_text(encoding="utf-8"))
    data["nodes"]["Study"]["properties"] = {"score": {"type": "double", "description": "a double"},
                                            "scores": {"type": "double[]", "description": "doubles"},
                                            "rank": {"type": "long", "description": "a long"}}
    data["nodes"]["Study"].pop("indexes")
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    files = ImportFiles(tmp_path / "files", schema=load_schema(tmp_path / "schema.yaml"))
    study = files.node_file("Study")
    study.write_rows([{"study_id": "s1", "score": 2.5, "scores": [0.5, 1.0, 3], "rank": 2},
                      {"study_id": "s2", "score": 1}])
    for row, problem in [({"study_id": "s3", "rank": 1.5}, "expected an integer, got 1.5"),
                         ({"study_id": "s4", "score": float("nan")}, "expected a finite number"),
                         ({"study_id": "s5", "scores": [0.5, float("inf")]}, "expected finite numbers"),
                         ({"study_id": "s6", "scores": ["1"]}, "expected a non-empty list of numbers")]:
        with pytest.raises(ImportFileError, match=rf"nodes_Study.csv: row .*'{row['study_id']}'.*{problem}"):
            study.write_rows([{"study_id": "ok"}, row])
    files.close()
    lines = study.path.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["study_id:ID(Study),score:double,scores:double[],rank:long",
                         '"s1",2.5,"0.5\x1f1\x1f3",2', '"s2",1,,']
    assert lines[3:] == ['"ok",,,'] * 4  # the rows before a refused one are written
