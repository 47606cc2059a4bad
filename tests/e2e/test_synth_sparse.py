"""A sparse synthetic cohort (findings stated only when present, as in real reports): the graph's
study-level onsets, persistence and "no longer mentioned" equal its ground truth, event for event."""

from __future__ import annotations

import pandas as pd

from graph.checks.synthetic import check_sparse_cohort, truth_episodes, truth_events
from graph.synth import GROUND_TRUTH, write_cohort
from tests.fixtures.loading import load_into


def test_sparse_cohort_events_equal_ground_truth(store, tmp_path):
    cohort = tmp_path / "sparse"
    write_cohort(cohort, patients=40, seed=11, sparse=True)
    load_into(store, cohort)
    report = check_sparse_cohort(store, cohort)
    truth = truth_events(cohort)
    assert {"new", "persistent", "no longer mentioned"} <= set(truth["change"])
    assert report.events >= len(truth) > 50 and report.patient_sets > 5
    assert report.episodes == len(truth_episodes(cohort)) > 50
    assert report.mismatches == []
    # the reports' noisy comparisons imply presence where the finding was truly absent: both readings differ
    assert not truth_events(cohort).equals(truth_events(cohort, implied=False))


def test_a_missing_event_is_reported(store, tmp_path):
    cohort = tmp_path / "sparse"
    write_cohort(cohort, patients=10, seed=4, sparse=True)
    load_into(store, cohort)
    gt = pd.read_parquet(cohort / GROUND_TRUTH)
    onset = gt[(gt["severity_prior"] == 0) & (gt["severity_current"] > 0)].iloc[0]
    with store.driver.session(database=store.database) as session:
        session.run("MATCH (n:StudyFinding {study_id: $s, finding: $f})-[r:PROGRESSION]->() DELETE r",
                    s=onset["study_id"], f=onset["finding"]).consume()
    assert any(onset["study_id"] in line for line in check_sparse_cohort(store, cohort).mismatches)
