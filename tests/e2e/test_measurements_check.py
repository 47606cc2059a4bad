"""Issue 54's figures on a small synthetic cohort loaded into the real Neo4j: every stored Measurement equals
benchmarks/measurements_check.py's plain-JSON computation from the files, every value missing names its reason,
and the geometry's cardiomegaly agrees with the planted truth better than the reports and the trivial answers
(graph.checks.geometry_agreement; the demo's cohort is benchmarks/geometry_agreement.py's)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.fixtures.loading import load_into

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from measurements_check import STORED, compare, expected_measurements, stored_measurements  # noqa: E402

PATIENTS, SEED = 40, 5


@pytest.fixture()
def loaded(store, tmp_path):
    from graph.synth import write_cohort

    write_cohort(tmp_path / "cohort", patients=PATIENTS, seed=SEED)
    load_into(store, tmp_path / "cohort")
    return store, tmp_path / "cohort"


def test_every_stored_measurement_equals_the_files_and_names_its_reason(loaded):
    store, cohort = loaded
    expected = expected_measurements(cohort)
    result = compare(expected, stored_measurements(store.read(STORED)))

    assert result.ok, (result.differing[:5], result.unnamed[:5], result.missing_images[:5])
    assert result.compared == result.equal == 12 * len(expected) > 0
    assert result.no_boxes == 0
    # the cohort's faulty boxes (0.5 % of boxes, 3 % of films missing one) leave some values without one
    assert sum(result.by_reason.values()) > 0
    assert {reason for _, reason in result.by_reason} <= {"box missing", "zero-area box", "box past the image"}


def test_the_geometry_finds_the_planted_cardiomegaly_and_the_trivial_answers_are_the_prevalence(loaded):
    from graph.checks.geometry_agreement import ALWAYS_YES, CARDIOMEGALY, GEOMETRY, PREVALENCE, REPORTS, agreement

    store, cohort = loaded
    rows = {r.answer: r for r in agreement(cohort, store, (CARDIOMEGALY,), draws=200)}
    truth = pd.read_parquet(cohort / "geometry_truth.parquet").drop_duplicates("study_id")

    assert rows[GEOMETRY].studies == len(truth) and rows[GEOMETRY].positives == truth["cardiomegaly"].sum()
    geometry = rows[GEOMETRY]
    assert geometry.precision >= 0.95 and geometry.recall >= 0.95, geometry
    low, high = geometry.recall_interval
    assert low <= geometry.recall <= high and high - low < 0.2
    prevalence = truth["cardiomegaly"].mean()
    assert np.isclose(rows[ALWAYS_YES].precision, prevalence) and rows[ALWAYS_YES].recall == 1
    assert np.isclose(rows[PREVALENCE].recall, prevalence)
    # the reports leave out some of the findings (recall below the geometry's), stated ones are true
    assert rows[REPORTS].recall < geometry.recall and rows[REPORTS].precision >= 0.9
