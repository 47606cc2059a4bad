"""The geometry link step's rows (graph.measurements.trends) and the Measurement rows both loaders write
(graph.measurements.rows), on records built here."""

import pytest

from graph.measurements.rows import anatomy_boxes, measurement_rows
from graph.measurements.trends import TOLERANCE, MeasuredStudy, change, geometry_rows
from graph.records import BoundingBoxRecord, ImageRecord, ParsedFile
from graph.schema import SchemaError


def _study(sid, prior, *measurements, patient="p1"):
    return MeasuredStudy(sid, patient, f"2150-01-0{sid[-1]}T00:00:00", prior, tuple(measurements))


def _ctr(image, value, decision="yes"):
    return (image, "cardiothoracic_ratio", value, 0.5, decision)


def test_a_study_observes_from_its_first_deciding_image_and_never_from_an_undecided_one():
    observations, _ = geometry_rows([_study("s1", None, _ctr("b", 0.40, "no"), _ctr("a", 0.55),
                                            ("a", "inclusion", None, None, "mixed"),
                                            ("b", "inclusion", None, None, "cut off"))])
    [ctr] = [o for o in observations if o["measurement"] == "cardiothoracic_ratio"]
    assert (ctr["image_id"], ctr["state"], ctr["value"], ctr["finding"]) == ("a", "present", 0.55,
                                                                           "enlarged cardiac silhouette")
    assert ctr["measurement_id"] == "a|cardiothoracic_ratio" and ctr["source"] == "geometry"
    # image a decides inclusion "mixed", which has no state: b's "cut off" does not replace it
    assert [o for o in observations if o["measurement"] == "inclusion"] == []


@pytest.mark.parametrize(("before", "after", "expected"), [
    (("no", 0.45), ("yes", 0.52), "new"),
    (("yes", 0.55), ("no", 0.48), "resolved"),
    (("yes", 0.52), ("yes", 0.52 + TOLERANCE), "no change"),  # at the tolerance: unchanged
    (("yes", 0.52), ("yes", 0.55), "worsened"),
    (("yes", 0.58), ("yes", 0.55), "improved"),
    (("no", 0.40), ("no", 0.48), None),
])
def test_the_change_of_a_graded_finding(before, after, expected):
    prior = {"state": "present" if before[0] == "yes" else "absent", "value": before[1]}
    current = {"state": "present" if after[0] == "yes" else "absent", "value": round(after[1], 2)}
    assert change(prior, current) == expected


def test_progression_joins_a_study_to_its_prior_for_graded_findings_only():
    studies = [_study("s1", None, _ctr("i1", 0.52), ("i1", "rotation_ratio", 0.2, 0.4, "yes")),
               _study("s2", "s1", _ctr("i2", 0.58), ("i2", "rotation_ratio", 0.9, 0.4, "no")),
               _study("s3", "s2")]  # no measurement: no edge to or from it
    observations, edges = geometry_rows(studies)
    assert {(o["study_id"], o["finding"], o["state"]) for o in observations} == {
        ("s1", "enlarged cardiac silhouette", "present"), ("s1", "rotated", "present"),
        ("s2", "enlarged cardiac silhouette", "present"), ("s2", "rotated", "absent")}
    [edge] = edges  # rotation went from present to absent, but a film's rotation is no progression
    assert (edge["current"], edge["prior"]) == ("s2|enlarged cardiac silhouette", "s1|enlarged cardiac silhouette")
    assert edge["props"] | {"progression_id": None} == {
        "progression_id": None, "change": "worsened", "basis": "derived", "source": "geometry",
        "rule": "measurement_change", "prior_state": "present", "current_state": "present"}


def _box(image, i, region, x1, y1, x2, y2, finding=None):
    return BoundingBoxRecord(f"{image}|{i}", image, region, 0, 0, 1, 1, original_x1=x1, original_y1=y1,
                             original_x2=x2, original_y2=y2, finding_label=finding)


def test_measurement_rows_measure_anatomy_boxes_and_never_a_finding_s_box():
    heart = _box("a", 0, "cardiac silhouette", 380, 500, 660, 800)
    lungs = (_box("a", 1, "right lung", 100, 100, 480, 900), _box("a", 2, "left lung", 520, 100, 900, 900))
    nih = ImageRecord("n", "s2", "PA", objects=(_box("n", 0, "cardiac silhouette", 300, 400, 700, 800,
                                                     finding="Cardiomegaly"),))
    pf = ParsedFile("a.json", images=[ImageRecord("a", "s1", "PA", objects=(heart, *lungs), rows=1000,
                                                  columns=1000), nih, ImageRecord("x", "s2", "PA")])
    rows = measurement_rows([pf], {"s1": "p1", "s2": "p2"})
    assert {r["image_id"] for r in rows} == {"a"} and len(rows) == 12 and anatomy_boxes(nih) is None
    ctr = next(r for r in rows if r["name"] == "cardiothoracic_ratio")
    assert (ctr["value"], ctr["decision"], ctr["patient_id"], ctr["measurement_id"]) == (0.35, "no", "p1",
                                                                                       "a|cardiothoracic_ratio")
    side = next(r for r in rows if r["name"] == "inclusion_side_right")
    assert side["value"] == 0.1 and side["reason"] is None  # the metadata's size reaches inclusion
    assert next(r for r in rows if r["name"] == "rotation_ratio")["reason"] == "box missing"


def test_a_measurement_row_the_schema_refuses_is_an_error(monkeypatch):
    import graph.measurements.rows as rows

    pf = ParsedFile("a.json", images=[ImageRecord("a", "s1", "PA", objects=(_box("a", 0, "spine", 1, 1, 2, 2),))])
    monkeypatch.setattr(rows, "measurement_row", lambda m, *a: {"measurement_id": m.name, "method": "mask"})
    with pytest.raises(SchemaError, match="method"):
        rows.measurement_rows([pf], {"s1": "p1"})
