"""Where the commands write their rejection reports by default (graph.records): one folder, CXRKG_HOME/rejected;
one report per run named by the command and the UTC time, never over an earlier one; one per drop folder for
serve; the load's report beside the extraction's."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from graph.records import (
    Rejection,
    companion_report,
    drop_folder_report_path,
    rejected_folder,
    rejected_report_path,
    write_rejections,
)

NOW = datetime(2026, 1, 5, 11, 15, 2, tzinfo=timezone(timedelta(hours=1)))


def test_a_report_is_named_by_the_command_and_the_utc_time_and_never_overwrites(tmp_path):
    first = rejected_report_path("eval-reports", NOW, tmp_path)
    assert first == tmp_path / "rejected" / "eval-reports-20260105T101502Z.json"  # 11:15 at UTC+1
    write_rejections(first, [Rejection("a.csv", "row 2", "study_id", "not in the graph")])
    second = rejected_report_path("eval-reports", NOW, tmp_path)
    assert second.name == "eval-reports-20260105T101502Z-2.json"
    write_rejections(second, [])
    assert rejected_report_path("eval-reports", NOW, tmp_path).name == "eval-reports-20260105T101502Z-3.json"
    assert not rejected_report_path("ingest", NOW, tmp_path).exists()  # nothing written by naming it


def test_the_folder_is_cxrkg_home_s(tmp_path, monkeypatch):
    monkeypatch.setenv("CXRKG_HOME", str(tmp_path / "home"))
    assert rejected_folder() == (tmp_path / "home").resolve() / "rejected"
    assert rejected_report_path("ingest", NOW).parent == rejected_folder()


def test_each_drop_folder_keeps_one_report(tmp_path):
    a, b = tmp_path / "a" / "incoming", tmp_path / "b" / "incoming"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    ra, rb = drop_folder_report_path(a, tmp_path), drop_folder_report_path(b, tmp_path)
    assert ra != rb and ra.parent == rb.parent == tmp_path / "rejected"
    assert ra.name.startswith("serve-incoming-") and len(ra.stem) == len("serve-incoming-") + 8
    assert drop_folder_report_path(a / ".." / "incoming", tmp_path) == ra  # the folder, however it is named


def test_a_second_stage_s_report_sits_beside_the_first():
    assert companion_report(Path("/r/extract-20260105T101502Z.json"), "ingest") == Path(
        "/r/extract-20260105T101502Z-ingest.json")
