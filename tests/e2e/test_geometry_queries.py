"""The geometry queries of the catalogue on the real Neo4j (issue 54 step 3): a patient's measurements over
time, the studies where the anatomy boxes and the reports disagree, rotated and cut-off films, and rises of the
cardiothoracic ratio, each answer known by hand from the boxes chosen in :mod:`tests.fixtures.geometry_cohort`."""

from __future__ import annotations

import pytest

from graph.store.queries import get_query, run_named
from tests.fixtures.geometry_cohort import IMAGE, PATIENT, UNBOXED, study_id, write_geometry_cohort
from tests.fixtures.loading import load_into


@pytest.fixture
def cohort(store, tmp_path):
    load_into(store, write_geometry_cohort(tmp_path / "cohort"))
    return store


def _run(store, name: str, **params) -> list[dict]:
    q = get_query(name)
    return run_named(store, q, q.bind({k: str(v) for k, v in params.items()}))


def test_a_patients_measurements_over_time(cohort):
    rows = _run(cohort, "patient_measurements", patient_id=PATIENT["A"])
    assert [(r["study_order"], r["study_id"], r["study_datetime"][:10], r["image_id"], r["view"]) for r in rows] == [
        (1, study_id("A1"), "2150-01-01", IMAGE["A1"], "PA"), (2, study_id("A2"), "2150-03-02", IMAGE["A2"], "PA"),
        (3, study_id("A3"), "2150-07-01", IMAGE["A3"], "PA"), (4, study_id("A4"), "2151-06-01", IMAGE["A4"], "PA")]
    assert [(r["cardiothoracic_ratio"], r["cardiomegaly"]) for r in rows] == [
        (0.45, "no"), (0.47, "no"), (0.53, "yes"), (0.56, "yes")]
    assert {(r["mediastinal_width_ratio"], r["mediastinal_widening"], r["rotation_ratio"], r["rotated"],
             r["inclusion"], tuple(r["reasons"])) for r in rows} == {(0.21, "no", 0.8, "no", "complete", ())}
    b = _run(cohort, "patient_measurements", patient_id=PATIENT["B"])
    assert [(r["view"], r["cardiothoracic_ratio"], r["cardiomegaly"], r["mediastinal_widening"], r["rotated"],
             r["inclusion"]) for r in b] == [("PA", 0.44, "no", "yes", "yes", "complete"),
                                             ("AP", 0.52, "no", "no", "no", "complete"),  # AP: 0.55
                                             ("AP", 0.53, "no", "no", "no", "cut off")]


def test_a_missing_box_gives_reasons_and_an_image_without_boxes_no_row(cohort):
    [row] = _run(cohort, "patient_measurements", patient_id=PATIENT["C"])
    assert row["image_id"] == IMAGE["C1"] != UNBOXED
    assert (row["cardiothoracic_ratio"], row["cardiomegaly"], row["rotation_ratio"], row["inclusion"]) == (
        None, None, 0.8, None)
    assert {"cardiothoracic_ratio: box missing", "mediastinal_width_ratio: box missing",
            "inclusion_side_left: box missing", "inclusion: box missing"} <= set(row["reasons"])
    assert not any(r.startswith("rotation_ratio") for r in row["reasons"])


@pytest.mark.parametrize(("task", "stated", "expected"), [
    ("heart", "no", [("A", "A3", 0.53, 0.5, "present", "absent", ["chest_imagenome"])]),
    ("heart", "yes", [("B", "B2", 0.52, 0.55, "absent", "present", ["chest_imagenome"])]),
    ("mediastinum", "no", [("B", "B1", 0.3, 0.25, "present", "not_mentioned", [])]),
    ("mediastinum", "yes", [("B", "B3", 0.21, 0.33, "absent", "present", ["chest_imagenome"])]),
])
def test_geometry_against_the_reports(cohort, task, stated, expected):
    rows = _run(cohort, "geometry_vs_reports", task=task, stated=stated, patient_id="")
    assert [(r["patient_id"], r["study_id"], r["value"], r["threshold"], r["geometry"], r["report_state"], r["sources"])
            for r in rows] == [(PATIENT[p], study_id(s), *rest) for p, s, *rest in expected]
    assert {r["image_id"] for r in rows} == {IMAGE[s] for _, s, *_ in expected}
    patient = expected[0][0]
    assert _run(cohort, "geometry_vs_reports", task=task, stated=stated, patient_id=PATIENT[patient]) == rows
    others = [p for p in PATIENT if p != patient]
    assert all(_run(cohort, "geometry_vs_reports", task=task, stated=stated, patient_id=PATIENT[p]) == []
               for p in others)


def test_a_stated_finding_the_geometry_confirms_is_no_disagreement(cohort):
    rows = _run(cohort, "geometry_vs_reports", task="heart", stated="no", patient_id=PATIENT["A"])
    assert study_id("A4") not in {r["study_id"] for r in rows}  # 0.56 and stated present
    assert [(r["view"], r["measurement"]) for r in rows] == [("PA", "cardiothoracic_ratio")]


def test_rotated_cut_off_images(cohort):
    rows = _run(cohort, "rotated_cut_off_images", patient_id="")
    assert [(r["patient_id"], r["study_id"], r["image_id"], r["view"], r["rotated"], r["rotation_ratio"], r["cut_off"],
             r["cut_off_parts"]) for r in rows] == [
        (PATIENT["B"], study_id("B1"), IMAGE["B1"], "PA", True, 0.2, False, []),
        (PATIENT["B"], study_id("B3"), IMAGE["B3"], "AP", False, 0.8, True, ["apex_right"])]
    assert _run(cohort, "rotated_cut_off_images", patient_id=PATIENT["B"]) == rows
    assert _run(cohort, "rotated_cut_off_images", patient_id=PATIENT["A"]) == []


def _rises(store, **params) -> list[tuple]:
    return [(r["patient_id"], r["prior_study_id"], r["study_id"], r["days"], r["views"], r["prior_ratio"], r["ratio"],
             r["rise"], r["prior_state"], r["state"], r["pairs"]) for r in _run(store, "cardiothoracic_rise",
                                                                                 **params)]


def test_cardiothoracic_ratio_rise_within_an_interval(cohort):
    a, b = PATIENT["A"], PATIENT["B"]
    # A: 0.45 0.47 0.53 0.56 on days 0, 60, 181, 516; within a year A1 -> A3 (+0.08) and A2 -> A3 (+0.06) rise 0.05
    assert _rises(cohort) == [
        (a, study_id("A1"), study_id("A3"), 181, "PA -> PA", 0.45, 0.53, 0.08, "absent", "present", 2)]
    assert _rises(cohort, max_days=730) == [  # A1 -> A4, A2 -> A4 (+0.09, 456 days) as well
        (a, study_id("A1"), study_id("A4"), 516, "PA -> PA", 0.45, 0.56, 0.11, "absent", "present", 4)]
    assert _rises(cohort, max_days=120) == []  # A2 -> A3 is 121 days
    assert _rises(cohort, min_rise=0.1) == []
    # B's PA 0.44 then AP 0.52, 0.53: a rise only when an AP film may be compared with a PA one
    assert _rises(cohort, views="any") == [
        (b, study_id("B1"), study_id("B3"), 60, "PA -> AP", 0.44, 0.53, 0.09, "absent", "absent", 2),
        (a, study_id("A1"), study_id("A3"), 181, "PA -> PA", 0.45, 0.53, 0.08, "absent", "present", 2)]
