"""Lunguage in (``cxrkg ingest`` reads the CSV as a third source) and out (``cxrkg export lunguage``) against the
real graph, on made-up Lunguage files (graph.formats.lunguage.made_up_rows: invented ids and text)."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from flows.cli.export import export_lunguage
from graph.formats.lunguage import EXPORT_COLUMN, read_lunguage, write_made_up_cohort
from graph.longitudinal.episode_agreement import episode_agreement
from graph.store.queries import get_query, run_named
from tests.fixtures.loading import load_into


def _cohort(folder, patients=4, seed=3):
    """A made-up Lunguage file and the metadata CSV that dates its studies (Lunguage has only sequence)."""
    return write_made_up_cohort(folder, patients, seed)


def test_lunguage_in_then_out_gives_back_its_groups_and_episodes(store, tmp_path):
    rows, path = _cohort(tmp_path / "in")
    _, result = load_into(store, tmp_path / "in")
    assert result.rejections == []
    mapped = [r for r in rows if r.section != "hist" and r.cat != "patient info."]

    out = tmp_path / "out" / "export_lunguage.csv"
    out.parent.mkdir()
    assert export_lunguage(store, out) == len(mapped)
    back = read_lunguage(out)
    assert back.rejections == []
    groups = {r.key(): (r.gt_entity_group, r.gt_temporal_group, r.sequence, r.dx_status) for r in back.rows}
    assert groups == {r.key(): (r.gt_entity_group, r.gt_temporal_group, r.sequence, r.dx_status) for r in mapped}
    scores = episode_agreement(mapped, back.rows)
    assert scores.episode_pairs.f1 == scores.entity_pairs.f1 == scores.boundaries.f1 == 1.0

    # the temporal groups are stated episodes beside the derived ones; a recurrence is a second episode
    stated = {(r.subject_id, r.gt_entity_group, r.gt_temporal_group) for r in mapped if r.gt_temporal_group}
    q = get_query("finding_episodes")
    got = set()
    for subject in {r.subject_id for r in mapped}:
        for finding in {r.ent for r in mapped if r.subject_id == subject}:
            for e in run_named(store, q, q.bind({"patient_id": subject, "finding": finding})):
                if e["basis"] == "stated":
                    got.add((subject, e["entity_group"], e["temporal_group"]))
    assert got == stated
    again = next(r for r in mapped if r.gt_temporal_group.endswith(".2"))  # a recurrence: a second episode
    recurrent = get_query("recurrent_findings")
    rows = run_named(store, recurrent, recurrent.bind({"finding": again.ent, "basis": "stated"}))
    assert again.subject_id in {r["patient_id"] for r in rows}


def test_export_of_another_source_and_the_cli(store, tmp_path):
    from flows.cli import app
    from graph.synth import write_cohort

    write_cohort(tmp_path / "synth", patients=3, seed=5)
    load_into(store, tmp_path / "synth")
    out = tmp_path / "synthetic_export.csv"
    result = CliRunner().invoke(app, ["export", "lunguage", "--out", str(out)])
    assert result.exit_code == 0, result.output
    back = read_lunguage(out)
    assert back.rejections == [] and back.rows
    assert {r.dx_status for r in back.rows} == {"positive", "negative"}
    assert all(r.gt_temporal_group == "" for r in back.rows if r.dx_status == "negative")
    assert any(r.gt_temporal_group for r in back.rows)
    missing = CliRunner().invoke(app, ["export", "lunguage", "--out", str(tmp_path / "nowhere" / "x.csv")])
    assert missing.exit_code == 1 and "does not exist" in missing.output

    # the export left in an ingest folder beside a genuine Lunguage file: refused with one line, the rest loads
    folder = tmp_path / "again"
    rows, _ = write_made_up_cohort(folder, patients=2, seed=4)
    shutil.copy(out, folder / "lunguage_from_the_graph.csv")
    _, result = load_into(store, folder)
    assert [(Path(r.file).name, r.field) for r in result.rejections] == [("lunguage_from_the_graph.csv",
                                                                          EXPORT_COLUMN)]
    assert "cxrkg export lunguage" in result.rejections[0].reason
    assert result.patients == {r.subject_id for r in rows}  # the genuine file's patients only
