"""The demo's worsening agreement on a tiny hand-made truth: the stated edges alone, and with a GNN's edges
added (which can only add recall, and here cost precision); the GNN's worsened pairs picked by finding, change
and patient."""

from __future__ import annotations

import pandas as pd
import pytest

from flows.demo.cohort import worsening_agreement
from flows.demo.gnn import precision_recall, worsened_pairs

TRUTH = pd.DataFrame([
    ("p1", "s2", "left lung", "worsened"),
    ("p1", "s3", "left lung", "new"),
    ("p1", "s3", "right lung", "worsened"),
    ("p1", "s4", "left lung", "no change"),
    ("p2", "s9", "right lung", "worsened"),
], columns=["patient_id", "study_id", "anatomy", "change"])
STATED = [{"study_id": "s2", "anatomy": "left lung"}]
# right, right for precision only (the truth says new), wrong
GNN = [{"study_id": "s3", "anatomy": "right lung"}, {"study_id": "s3", "anatomy": "left lung"},
       {"study_id": "s4", "anatomy": "left lung"}]


def test_stated_edges_alone():
    got, worse, up = worsening_agreement(STATED, TRUTH)
    assert worse == {("s2", "left lung"), ("s3", "right lung"), ("s9", "right lung")}
    assert up == worse | {("s3", "left lung")}
    assert precision_recall(got, worse, up) == (1.0, pytest.approx(1 / 3))


def test_a_gnns_edges_add_recall_and_here_cost_precision():
    got, worse, up = worsening_agreement(STATED + GNN, TRUTH)
    precision, recall = precision_recall(got, worse, up)
    assert precision == pytest.approx(3 / 4)  # s2 left, s3 right, s3 left (new) of four
    assert recall == pytest.approx(2 / 3)  # s2 left and s3 right of the three worsened


def test_empty_sets_have_no_figures():
    assert precision_recall(set(), set(), set()) == (None, None)


def test_the_gnns_worsened_pairs_of_one_finding_and_the_scored_patients():
    predictions = pd.DataFrame([
        ("p1", "s3", "right lung", "pleural effusion", "worsened"),
        ("p1", "s3", "left lung", "pleural effusion", "no change"),
        ("p1", "s4", "left lung", "atelectasis", "worsened"),
        ("p3", "s7", "left lung", "pleural effusion", "worsened"),
    ], columns=["patient_id", "study_id", "anatomy", "finding", "change"])
    assert worsened_pairs(predictions, "pleural effusion", {"p1", "p2"}) == {("s3", "right lung")}
