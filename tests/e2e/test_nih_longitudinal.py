"""The NIH ChestX-ray14 cohort end to end on a slice of real patients: converted, ingested, and every
study-level count and new_finding_patients answer equal to the plain-pandas reference (0 mismatches)."""

from __future__ import annotations

import json

import pytest

from graph.store.queries import get_query, run_named
from tests.helpers import load_into

PATIENTS = 250  # the first text-mined vs adjudicated disagreement is patient 218


@pytest.fixture(scope="module")
def nih_slice(tmp_path_factory):
    from graph.datasets.nih import DatasetUnavailable, convert_nih
    from graph.datasets.nih_reference import load_tables
    from graph.extract.iu import IUUnavailable

    out = tmp_path_factory.mktemp("nih")
    try:
        summary = convert_nih(out, limit_patients=PATIENTS)
        tables = load_tables(limit_patients=PATIENTS)
    except (DatasetUnavailable, IUUnavailable) as exc:
        pytest.skip(f"NIH tables unavailable here: {exc}")
    return out, summary, tables


def test_graph_answers_equal_the_reference(store, nih_slice):
    from graph.datasets.nih_check import check_nih, graph_counts, nih_patient_ids

    out, summary, tables = nih_slice
    _, result = load_into(store, out)
    assert result.rejections == [] and result.files_loaded == summary.images
    report = check_nih(store, tables)
    assert report.mismatches == []
    assert report.count_cells > 100 and report.patient_sets > 50
    counts = graph_counts(store, nih_patient_ids(tables))
    # the case the old presence rule missed is there, and is most of the onsets
    assert counts["onset_after_unmentioned"].sum() > counts["onset_after_absent"].sum() > 0
    assert counts["resolution"].sum() > 0 and counts["no_longer_mentioned"].sum() > 0


def test_timeline_and_disagreements_on_real_patients(store, nih_slice):
    out, _, _ = nih_slice
    load_into(store, out)
    q = get_query("finding_timeline")
    rows = run_named(store, q, q.bind({"patient_id": "1", "finding": "enlarged cardiac silhouette"}))
    assert [r["state"] for r in rows][:3] == ["present", "present", "present"]  # NIH patient 1: Cardiomegaly x3
    dis = get_query("source_disagreements")
    rows = run_named(store, dis, dis.bind({"patient_id": ""}))
    assert rows and {r["kind"] for r in rows} == {"polarity"}
    assert all(any("nih_google2019" in c for c in r["changes"]) for r in rows)


def test_forecast_targets_on_real_patients_equal_the_reference_events(store, nih_slice, tmp_path):
    """The next-study forecasting rows, built from the exported graph, hold exactly the reference's
    study-level onsets, resolutions (stated or no longer mentioned) and persistence per finding; the
    baselines then score on them."""
    from graph.datasets.nih_reference import reference_counts
    from gnn.export import export_snapshot
    from gnn.forecast import CLASSES, forecast_table
    from gnn.forecast_gnn import GRAPH_FORECASTER
    from gnn.forecast_report import evaluate_forecasters

    out, _, tables = nih_slice
    load_into(store, out)
    export_snapshot(store, tmp_path / "snapshot")
    table = forecast_table(tmp_path / "snapshot")
    reference = reference_counts(tables).groupby("finding").sum(numeric_only=True)
    got = table.rows.assign(cls=table.rows["target"].map(dict(enumerate(CLASSES))))
    per_finding = got.groupby(["finding", "cls"]).size().unstack(fill_value=0)
    stated = got.groupby("finding")["resolved_stated"].sum()
    compared = 0
    for finding, ref in reference.iterrows():
        if ref["present"] == 0:
            continue  # never present in the slice: not a forecast finding
        row = per_finding.loc[finding]
        assert row.get("onset", 0) == ref["onset"], finding
        assert row.get("persistence", 0) == ref["persistence"], finding
        assert row.get("resolution", 0) == ref["resolution"] + ref["no_longer_mentioned"], finding
        assert stated[finding] == ref["resolution"], finding
        compared += 1
    assert compared >= 10
    report = evaluate_forecasters(table, bootstrap=5)
    trees = report.scores["gradient-boosted trees"]["test"].point
    assert 0.0 <= trees["macro_f1"] <= 1.0 and 0.0 <= trees["onset_auroc"] <= 1.0
    from typer.testing import CliRunner

    from flows.cli import app

    result = CliRunner().invoke(app, ["forecast", "--snapshot", str(tmp_path / "snapshot"), "--bootstrap", "3",
                                      "--out", str(tmp_path / "forecast.json")])
    assert result.exit_code == 0, result.output
    assert "onset_auroc" in result.output and "8 row(s)" in result.output  # 3 baselines and the graph x 2 splits
    assert "epoch 1: validation onset AUROC" in result.output
    saved = json.loads((tmp_path / "forecast.json").read_text())
    assert set(saved["models"]) == {"carry-forward", "rate by age and sex", "gradient-boosted trees", GRAPH_FORECASTER}
    assert saved["models"]["carry-forward"]["test"]["point"]["onset_auroc"] == pytest.approx(0.5)
    result = CliRunner().invoke(app, ["forecast", "--snapshot", str(tmp_path)])
    assert result.exit_code == 1 and "not a cxrkg snapshot" in " ".join(result.output.split())  # lines wrap
