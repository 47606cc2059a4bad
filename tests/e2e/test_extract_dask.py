"""The extraction flow on Prefect's Dask task runner (a local cluster of two worker processes) writes the
same bytes as the serial run: shards, doc mapping and rejections, in the same order. Report text here is
synthetic."""

from __future__ import annotations

import csv
import filecmp

import pytest

pytestmark = pytest.mark.extract  # medspaCy and prefect-dask

SENTENCES = ["The left pleural effusion has increased.", "No pneumothorax.", "Heart size is normal.",
             "Right lower lobe consolidation, new since the prior study.", "Stable mild cardiomegaly.",
             "Possible small right effusion.", "Interval resolution of the left basilar atelectasis."]


def _reports_csv(path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["report_id", "text"])
        for n in range(23):
            out.writerow([f"r{n}", " ".join(SENTENCES[(n + k) % len(SENTENCES)] for k in range(1 + n % 4))])
        out.writerow(["r5", "A second report under an id already used."])  # rejected: duplicate doc_key
        out.writerow(["r-empty", ""])  # rejected: empty report


def _same_tree(a, b) -> bool:
    cmp = filecmp.dircmp(a, b)
    files = [p.relative_to(a) for p in a.rglob("*") if p.is_file()]
    return (not cmp.left_only and not cmp.right_only
            and all(filecmp.cmp(a / f, b / f, shallow=False) for f in files) and len(files) > 3)


def test_dask_extraction_is_byte_identical_to_serial(tmp_path, prefect_harness):
    from flows.extract_flow import extract_flow

    src = tmp_path / "reports.csv"
    _reports_csv(src)
    serial = extract_flow(str(src), str(tmp_path / "serial"), ingest=False, shard_size=4)
    parallel = extract_flow(str(src), str(tmp_path / "dask"), ingest=False, shard_size=4, workers=2)
    assert (serial.extraction.documents, len(serial.extraction.shards)) == (23, 6)
    assert [r.record for r in serial.extraction.rejections] == ["line 25 (r5)", "line 26 (r-empty)"]
    assert (parallel.extraction.documents, parallel.extraction.reports_seen, parallel.extraction.entities) == (
        serial.extraction.documents, serial.extraction.reports_seen, serial.extraction.entities)
    assert [r.record for r in parallel.extraction.rejections] == ["line 25 (r5)", "line 26 (r-empty)"]
    assert _same_tree(tmp_path / "serial", tmp_path / "dask")
