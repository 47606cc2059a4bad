"""The bulk load's import files hold, byte for byte, what a short reference writer built on the ``csv``
module makes of the same rows: a synthetic cohort with bad records plus the RadGraph-XL sample through its
doc mapping (no patient hints: parked and derived at the end), written batch by batch and by worker parts.
The rows are those the sink hands each import file (recorded on their way in); the reference writes them
with the header graph/schema.yaml declares and the importer's conventions (Neo4j Operations Manual, "Import",
CSV header format, 5.26): texts, date-times and arrays quoted by the csv module (RFC 4180), arrays joined
with U+001F, numbers and booleans bare, an absent value an empty unquoted field. A failure names the file
and the row; a change of the model needs no re-recording."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import graph.ingest.import_files as import_files
from graph.schema import graph_schema
from graph.synth import write_cohort
from tests.fixtures.bulk import write_import_files

SAMPLE = Path(__file__).resolve().parents[2] / "graph" / "samples" / "radgraph_xl"


class RecordingCsvFile(import_files.CsvFile):
    """An import file that also keeps every row handed to it, as the tuple of its columns' values."""

    rows_by_path: dict[Path, list[tuple[Any, ...]]] = {}

    def _keep(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows_by_path.setdefault(self.path, []).extend(rows)

    def write_rows(self, rows):
        self._keep([tuple(row.get(k) for k in self._keys) for row in rows])
        super().write_rows(rows)

    def write_records(self, records):
        records = list(records)
        self._keep([tuple(getattr(r, k) for k in self._keys) for r in records])
        super().write_records(records)

    def write_pairs(self, pairs):
        self._keep([tuple(p) for p in pairs])
        super().write_pairs(pairs)


def _quoted(text: str) -> str:
    """One field as the csv module quotes it (RFC 4180: in double quotes, inner quotes doubled)."""
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="").writerow([text])
    return out.getvalue()


def _field(value: Any, kind: str) -> str:
    if value is None:
        return ""
    if kind in ("string[]", "double[]"):
        return _quoted("\x1f".join(_shortest(v) if kind == "double[]" else v for v in value))
    if kind in ("string", "localdatetime"):
        return _quoted(value)
    if kind == "double":
        return _shortest(value)
    if kind == "boolean":
        return "true" if value else "false"
    return str(value)  # long


def _shortest(number: float) -> str:
    """A double as its shortest text that reads back as the same number, without a trailing ``.0``."""
    text = repr(float(number))
    return text[:-2] if text.endswith(".0") else text


def _header(name: str) -> list[tuple[str, str]]:
    """(header field, type) of an import file, from its name and graph/schema.yaml alone."""
    schema = graph_schema()
    if name.startswith("nodes_"):
        label = name.removeprefix("nodes_").removesuffix(".csv")
        key = [(f"{schema.nodes[label].key}:ID({label})", "string")]
        return key + [(f"{p}:{t}", t) for p, t in schema.loaded_properties(label).items()]
    # the longest type the name starts with (HAS_STUDY_FINDING, not HAS_STUDY); labels hold no underscore
    rel_type = max((t for t in schema.relationships if name.startswith(f"rels_{t}_")), key=len)
    start, end = name.removeprefix(f"rels_{rel_type}_").removesuffix(".csv").split("_")
    return [(f":START_ID({start})", "string"), (f":END_ID({end})", "string")] + [
        (f"{p}:{t}", t) for p, t in schema.loaded_properties(rel_type).items()]


def _expected_lines(name: str, rows: list[tuple[Any, ...]]) -> list[str]:
    header = _header(name)
    return [",".join(h for h, _ in header) + "\n"] + [
        ",".join(_field(v, kind) for v, (_, kind) in zip(row, header, strict=True)) + "\n" for row in rows]


def _settled(folder: Path) -> None:
    """Every file's mtime fixed (SourceFile's mtime_ns), so the files do not depend on when they were copied."""
    for path in folder.rglob("*"):
        os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))


def _spoil(cohort: Path) -> None:
    """Bad input of every kind a batch must reject and go on from: truncated JSON, a wrong type, a
    negative box (a record-level rejection), a RadGraph document without its text."""
    graphs = sorted((cohort / "scene_graphs").rglob("*_SceneGraph.json"))
    reports = sorted((cohort / "radgraph").rglob("*.json"))
    graphs[0].write_bytes(graphs[0].read_bytes()[:200])
    sg = json.loads(graphs[1].read_text())
    sg["objects"][0]["x1"] = "12"
    graphs[1].write_text(json.dumps(sg))
    sg = json.loads(graphs[2].read_text())
    sg["objects"][1]["y1"] = -3
    graphs[2].write_text(json.dumps(sg))
    docs = json.loads(reports[0].read_text())
    for doc in docs.values():
        doc.pop("text", None)
    reports[0].write_text(json.dumps(docs))
    # a quote inside a text: the files' escaped path
    first = sorted((cohort / "radgraph").rglob("*.json"))[1]
    docs = json.loads(first.read_text())
    doc = next(iter(docs.values()))
    doc["text"] = doc["text"].replace(" ", ' "quoted" ', 1)
    first.write_text(json.dumps(docs))
    _settled(cohort)


@pytest.mark.parametrize("parts", [False, True], ids=["in_turn", "parts"])
def test_import_files_are_what_a_csv_module_writer_makes_of_their_rows(tmp_path, monkeypatch, parts):
    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=24, seed=11)
    _spoil(cohort)
    sample = tmp_path / "sample"
    shutil.copytree(SAMPLE, sample)
    _settled(sample)
    monkeypatch.setattr(import_files, "CsvFile", RecordingCsvFile)
    monkeypatch.setattr(RecordingCsvFile, "rows_by_path", {})
    rejections: list = []
    listing = write_import_files(cohort, tmp_path / "out", "parts" if parts else "by_batch", 30, rejections,
                                 also=(sample,), doc_mapping=str(sample / "doc_mapping.csv"))

    assert len(listing) > 20 and rejections
    recorded = RecordingCsvFile.rows_by_path
    assert {f.path for f in listing} == {p for p, rows in recorded.items() if rows}
    quoted_texts = 0
    for f in listing:
        got = f.path.read_text(encoding="utf-8")
        expected = _expected_lines(f.path.name, recorded[f.path])
        assert f.rows == len(expected) - 1, f"{f.path.name}: {f.rows} rows counted, {len(expected) - 1} written"
        at = 0
        for n, line in enumerate(expected):
            assert got.startswith(line, at), (f"{f.path.relative_to(tmp_path)}: row {n} (0: the header) is "
                                              f"{got[at:at + len(line) + 40]!r}, the reference writes {line!r}")
            at += len(line)
        assert at == len(got), f"{f.path.name}: text after its last row: {got[at:at + 80]!r}"
        quoted_texts += got.count('""quoted""')
    assert quoted_texts  # the escaped quote was written and compared
