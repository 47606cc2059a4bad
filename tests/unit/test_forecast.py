"""The next-study forecasting task (gnn/forecast*.py) on hand-made snapshot tables: rows, targets,
history features, no input from the forecast study, baselines and the bootstrap-scored metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gnn.errors import GnnError
from gnn.forecast.rows import CLASSES, ONSET, PERSISTENCE, RESOLUTION, STAYS_ABSENT, build_forecast_table
from gnn.forecast.baselines import BASELINES
from gnn.forecast.evaluation import macro_f1, per_finding, score
from gnn.forecast.report import evaluate_forecasters, table_rows
from tests.fixtures.forecast import ATL, EFF, one_leads_to_another, studies_frame


@pytest.fixture()
def tables():
    studies = studies_frame([
        ("A", "a1", "2000-01-01T00:00:00", 1, None, None, "60-70", "F"),
        ("A", "a2", "2000-04-01T00:00:00", 2, "a1", 91, "60-70", "F"),
        ("A", "a3", "2000-07-01T00:00:00", 3, "a2", 91, "60-70", "F"),
        ("A", "a4", "2000-10-01T00:00:00", 4, "a3", 92, "70-80", "F"),
        ("B", "b1", "2001-01-01T00:00:00", 1, None, None, "30-40", "M"),
        ("C", "c1", "2001-01-01T00:00:00", 1, None, None, None, None),
        ("C", "c2", "2001-02-01T00:00:00", 2, "c1", 31, None, None),
    ])
    states = pd.DataFrame([
        ("a1", EFF, "present"), ("a1", ATL, "absent"),
        ("a2", ATL, "present"),                          # effusion not mentioned: resolution, not stated
        ("a3", EFF, "present"), ("a3", ATL, "absent"),   # effusion onset after silence; atelectasis stated gone
        ("a4", EFF, "present"),
        ("b1", EFF, "present"),
        ("c1", ATL, "uncertain"), ("c2", ATL, "present"),
    ], columns=["study_id", "finding", "state"])
    return studies, states


def _row(table, study, finding):
    hit = table.rows.index[(table.rows["study_id"] == study) & (table.rows["finding"] == finding)]
    assert len(hit) == 1
    return table.rows.loc[hit[0]], dict(zip(table.feature_names, table.x[hit[0]], strict=True))


def test_one_row_per_pair_and_finding_with_its_target(tables):
    t = build_forecast_table(*tables)
    assert t.findings == [ATL, EFF]
    assert len(t.rows) == 4 * 2  # pairs a1-a2, a2-a3, a3-a4, c1-c2; b has one study
    targets = {(r.study_id, r.finding): CLASSES[r.target] for r in t.rows.itertuples()}
    assert targets == {("a2", EFF): "resolution", ("a2", ATL): "onset", ("a3", EFF): "onset",
                       ("a3", ATL): "resolution", ("a4", EFF): "persistence", ("a4", ATL): "stays absent",
                       ("c2", ATL): "onset", ("c2", EFF): "stays absent"}  # uncertain is not present
    stated = {(r.study_id, r.finding) for r in t.rows.itertuples() if r.resolved_stated}
    assert stated == {("a3", ATL)}  # a2 says nothing of the effusion: a resolution, not a stated one


def test_history_features_count_only_studies_up_to_the_prior(tables):
    t = build_forecast_table(*tables)
    _, f = _row(t, "a4", EFF)  # history a1 present, a2 silent, a3 present
    assert f["state_present"] == 1 and f["n_present_before"] == 2 and f["n_studies"] == 3
    assert f["share_present"] == pytest.approx(2 / 3)
    assert f["steps_since_first_present"] == 2 and f["steps_since_last_present"] == 0
    assert f["interval_steps"] == 1 and f["age"] == 60 and f["sex_female"] == 1
    _, f = _row(t, "a3", EFF)  # history a1 present, a2 silent
    assert f["state_not_mentioned"] == 1 and f["steps_since_last_present"] == 1
    assert f["other_findings_present"] == 1  # atelectasis at a2
    _, f = _row(t, "a2", ATL)
    assert f["state_absent"] == 1 and f["n_absent_before"] == 1 and f["steps_since_first_present"] == -1
    _, f = _row(t, "c2", ATL)
    assert f["state_uncertain"] == 1 and np.isnan(f["age"]) and np.isnan(f["sex_female"])


def test_blanking_the_forecast_study_changes_no_input(tables):
    studies, states = tables
    before = build_forecast_table(studies, states)
    target = "a4"
    blanked = studies.copy()
    blanked.loc[blanked["study_id"] == target, ["study_datetime", "prior_days", "age_decile", "gender"]] = None
    moved = pd.concat([states[states["study_id"] != target],
                       pd.DataFrame([(target, ATL, "present"), (target, EFF, "absent")], columns=states.columns)])
    after = build_forecast_table(blanked, moved)
    assert np.array_equal(before.x, after.x, equal_nan=True)
    assert not before.rows["target"].equals(after.rows["target"])  # the targets did change


def test_nothing_to_forecast_and_unknown_states_are_errors(tables):
    studies, states = tables
    with pytest.raises(GnnError, match="nothing to forecast"):
        build_forecast_table(studies[studies["patient_id"] == "B"], states)
    with pytest.raises(GnnError, match="unknown state 'maybe'"):
        build_forecast_table(studies, states.assign(state=states["state"].replace("absent", "maybe")))


def _synthetic(n_patients=300, seed=1):
    """Patients whose finding, once present, tends to stay, and appears more often in older patients."""
    rng = np.random.default_rng(seed)
    studies, states = [], []
    for p in range(n_patients):
        age = int(rng.choice([30, 50, 70]))
        present = False
        for k in range(int(rng.integers(2, 6))):
            sid = f"{p}-{k}"
            studies.append((str(p), sid, None, k + 1, None, None, f"{age}-{age + 10}", "FM"[p % 2]))
            present = rng.random() < (0.8 if present else 0.05 + age / 400)
            if present:
                states.append((sid, EFF, "present"))
            elif rng.random() < 0.5:
                states.append((sid, EFF, "absent"))
    return studies_frame(studies), pd.DataFrame(states, columns=["study_id", "finding", "state"])


def test_baselines_fit_on_training_patients_and_are_scored_with_intervals():
    table = build_forecast_table(*_synthetic())
    report = evaluate_forecasters(table, bootstrap=15)
    assert set(report.scores) == set(BASELINES) and sum(report.rows.values()) == len(table.rows)
    carry = report.scores["carry-forward"]["test"]
    assert carry.point["onset_auroc"] == pytest.approx(0.5)  # it ranks no onset above another
    trees = report.scores["gradient-boosted trees"]["test"]
    assert trees.point["onset_auroc"] > 0.6  # age carries the onset signal here
    for s in (carry, trees):
        for metric, (low, high) in s.interval.items():
            assert low <= s.point[metric] + 1e-9 and s.point[metric] <= high + 1e-9
    rows = table_rows(report)
    assert len(rows) == 2 * len(BASELINES) and {r["split"] for r in rows} == {"val", "test"}
    assert all("[" in r["onset_auroc"] for r in rows if r["model"] != "carry-forward")


def test_metrics_match_hand_computation():
    rows = pd.DataFrame({"patient_id": list("abcdef"), "finding": [EFF] * 6,
                         "prior_present": [0, 0, 0, 1, 1, 1], "next_present": [1, 0, 0, 1, 0, 1],
                         "target": [ONSET, STAYS_ABSENT, STAYS_ABSENT, PERSISTENCE, RESOLUTION, PERSISTENCE]})
    p = np.array([0.9, 0.2, 0.6, 0.7, 0.8, 0.4])
    table = per_finding(rows, p)
    assert table.loc[0, "onset_auroc"] == pytest.approx(1.0)  # the onset (0.9) above both others
    # resolution scores 1 - p: the resolved row 0.2 below both persistent rows (0.3, 0.6)
    assert table.loc[0, "resolution_auroc"] == pytest.approx(0.0)
    # predicted: onset, stays, onset, persistence, persistence, resolution
    from sklearn.metrics import f1_score
    expected = f1_score(rows["target"], [ONSET, STAYS_ABSENT, ONSET, PERSISTENCE, PERSISTENCE, RESOLUTION],
                        labels=[0, 1, 2, 3], average="macro")
    assert macro_f1(rows, p) == pytest.approx(expected)
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        score(rows, p * 2, bootstrap=0)
    with pytest.raises(ValueError, match="5 probabilities for 6 rows"):
        score(rows, p[:5], bootstrap=0)


def test_the_graph_forecaster_learns_a_signal_across_findings():
    from gnn.forecast.model import ForecastGnnConfig, gnn_forecaster

    table = build_forecast_table(*one_leads_to_another())
    lines = []
    report = evaluate_forecasters(table, {"graph": gnn_forecaster(ForecastGnnConfig(hidden=16, epochs=8), lines.append)},
                                  bootstrap=0)
    per_finding = report.scores["graph"]["test"].per_finding.set_index("finding")
    assert len(lines) >= 2 and lines[0].startswith("epoch 1: validation onset AUROC")
    assert per_finding.loc[EFF, "onset_auroc"] > 0.75  # read from the other finding's node (seeds 0-3: 0.81-0.91)


def test_per_finding_intervals_bracket_each_findings_auroc():
    from gnn.forecast.evaluation import per_finding_intervals

    table = build_forecast_table(*one_leads_to_another(n_patients=120))
    rows = table.rows
    p = np.where(rows["next_present"] == 1, 0.6, 0.4) + np.random.default_rng(0).normal(0, 0.2, len(rows))
    p = np.clip(p, 0, 1)
    out = per_finding_intervals(rows, p, bootstrap=30)
    assert list(out["finding"]) == [ATL, EFF]
    for m in ("onset_auroc", "resolution_auroc"):
        assert (out[f"{m}_low"] <= out[m] + 1e-9).all() and (out[m] <= out[f"{m}_high"] + 1e-9).all()
        assert (out[f"{m}_high"] - out[f"{m}_low"] > 0).all()
    assert out[["onset_auroc", "resolution_auroc"]].equals(per_finding(rows, p)[["onset_auroc", "resolution_auroc"]])


def test_the_intervals_are_those_of_scikit_learn_on_each_resampled_table():
    """The batched draws (gnn.forecast.draw_metrics) against the plain way: the same draws of patients, each
    scored by scikit-learn with the rows weighted by their patient's count."""
    from sklearn.metrics import roc_auc_score

    from graph.bootstrap import cluster_bootstrap

    table = build_forecast_table(*_synthetic(n_patients=60))
    rows = table.rows[table.rows["split"] == "train"].reset_index(drop=True)
    p = np.random.default_rng(3).random(len(rows)).round(2)
    got = score(rows, p, bootstrap=40, seed=5)

    def plain(w):
        aurocs = []
        for _, idx in rows.groupby("finding").indices.items():
            onset = idx[(rows["prior_present"].to_numpy()[idx] == 0) & (w[idx] > 0)]
            y = rows["next_present"].to_numpy()[onset]
            if len(onset) and y.min() != y.max():
                aurocs.append(roc_auc_score(y, p[onset], sample_weight=w[onset]))
        return float(np.mean(aurocs))

    want = cluster_bootstrap(rows["patient_id"], plain, draws=40, seed=5).interval()
    assert got.interval["onset_auroc"] == pytest.approx(want, abs=1e-12)
    assert got.interval["onset_auroc"][0] < got.interval["onset_auroc"][1]
