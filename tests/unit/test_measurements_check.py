"""benchmarks/measurements_check.py's own computation, on scene graphs written here with figures worked by hand
(docs/measurements.md's formula table), and its comparison finding a stored value that differs or a value
missing without a reason. The check against the graph is tests/e2e/test_measurements_check.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from measurements_check import Expected, compare, expected_image  # noqa: E402

SIZE = (1000, 1000)  # Rows, Columns


def box(name: str, ox1: int, oy1: int, ox2: int, oy2: int, **extra) -> dict:
    """A box in original pixels, with 224-frame corners inside the frame (``extra`` replaces fields)."""
    return {"bbox_name": name, "x1": 10, "y1": 10, "x2": 20, "y2": 20, "original_x1": ox1, "original_y1": oy1,
            "original_x2": ox2, "original_y2": oy2, **extra}


def film(**replaced) -> list[dict]:
    """A PA film's boxes: thorax 100..900 (800 wide), spine centre 500."""
    boxes = {
        "right lung": box("right lung", 100, 100, 480, 800), "left lung": box("left lung", 520, 100, 900, 800),
        "cardiac silhouette": box("cardiac silhouette", 300, 500, 716, 800),  # 416 / 800 = 0.52
        "upper mediastinum": box("upper mediastinum", 400, 150, 600, 400),  # 200 / 800 = 0.25
        "spine": box("spine", 480, 100, 520, 900),  # centre 500
        "trachea": box("trachea", 470, 120, 510, 400),  # crosses the centre: 10 / 30
        "aortic arch": box("aortic arch", 500, 300, 620, 360),  # (620 - 510) / 40 = 2.75
        "right clavicle": box("right clavicle", 150, 120, 450, 160),  # 50 from the centre
        "left clavicle": box("left clavicle", 520, 120, 850, 160),  # 20: 20 / 50 = 0.4
        "right apical zone": box("right apical zone", 120, 5, 400, 200),  # 0.005: excluded
        "left apical zone": box("left apical zone", 600, 50, 880, 200),
        "right costophrenic angle": box("right costophrenic angle", 100, 700, 200, 950),  # 0.05: mixed
        "left costophrenic angle": box("left costophrenic angle", 800, 700, 900, 900),
    }
    boxes.update(replaced)
    return [b for b in boxes.values() if b is not None]


def measured(objects, view="PA", size=SIZE):
    return expected_image({"image_id": "i", "viewpoint": view, "objects": objects}, size)


def test_each_formula_threshold_and_decision_as_the_table_gives_them():
    m = measured(film())
    assert m["cardiothoracic_ratio"] == Expected(0.52, 0.5, "yes")
    assert m["mediastinal_width_ratio"] == Expected(0.25, 0.25, "yes")
    assert m["tracheal_deviation"] == Expected(0.33, None, "no")
    assert m["aortic_knob_ratio"] == Expected(2.75, 2.5, "yes")
    assert m["rotation_ratio"] == Expected(0.4, 0.4, "no")  # rotated only below 0.4
    assert m["inclusion_apex_right"] == Expected(0.005, 0.01, "excluded")
    assert m["inclusion_side_left"] == Expected(0.1, 0.005, "included")
    assert m["inclusion_bottom_right"] == Expected(0.05, 0.03, "mixed")
    assert m["inclusion"] == Expected(decision="cut off")
    assert len(m) == 12


def test_ap_thresholds_other_views_and_a_deviated_trachea():
    ap = measured(film(trachea=box("trachea", 505, 120, 525, 400)), view=" ap ")
    assert ap["cardiothoracic_ratio"] == Expected(0.52, 0.55, "no")
    assert ap["tracheal_deviation"] == Expected(0.2, None, "yes", "left")  # (505 - 500) / (525 - 500)
    lateral = measured(film(), view="LATERAL")
    assert lateral["cardiothoracic_ratio"] == Expected(0.52)
    assert lateral["inclusion"] == Expected()


@pytest.mark.parametrize(("replaced", "name", "reason"), [
    ({"cardiac silhouette": None}, "cardiothoracic_ratio", "box missing"),
    ({"spine": box("spine", 480, 100, 480, 900)}, "tracheal_deviation", "zero-area box"),
    ({"right lung": box("right lung", 100, 100, 480, 800, original_x1=None)}, "cardiothoracic_ratio",
     "no original-pixel box"),
    ({"left lung": box("left lung", 520, 100, 1001, 800)}, "inclusion_side_left", "box past the image"),
    ({"trachea": box("trachea", 470, 120, 510, 400, x2=230)}, "aortic_knob_ratio", "box past the image"),
    ({"left clavicle": box("left clavicle", 490, 120, 850, 160)}, "rotation_ratio", "formula undefined"),
    ({"aortic arch": box("aortic arch", 400, 300, 500, 360)}, "aortic_knob_ratio", "formula undefined"),
    ({"spine": box("spine", -1, 100, 520, 900)}, "rotation_ratio", "box missing"),  # refused on its own
])
def test_a_measurement_without_a_value_names_its_reason(replaced, name, reason):
    m = measured(film(**replaced))
    assert m[name] == Expected(reason=reason)


def test_the_first_reason_in_the_pages_order_and_the_size():
    # two regions faulty: the first the formula reads (the right lung before the left) names the reason
    m = measured(film(**{"right lung": box("right lung", 100, 100, 100, 800), "left lung": None}))
    assert m["cardiothoracic_ratio"].reason == "zero-area box"
    # one box's reasons in the page's order: a zero-area box past the image is zero-area
    assert measured(film(spine=box("spine", 480, 100, 480, 1200)))["rotation_ratio"].reason == "zero-area box"
    repeated = film() + [box("cardiac silhouette", 300, 500, 700, 800)]
    assert measured(repeated)["cardiothoracic_ratio"].reason == "box repeated"
    unsized = measured(film(), size=None)
    assert unsized["inclusion_apex_left"].reason == "image size unknown"
    assert unsized["inclusion"].reason == "image size unknown"
    assert unsized["cardiothoracic_ratio"].value == 0.52
    assert measured([box("left lung", 1, 1, 5, 5, finding_label="Mass")]) == {}  # a finding's box


def test_the_comparison_lists_a_difference_and_a_value_missing_without_reason():
    files = {"a": measured(film()), "b": measured(film(**{"cardiac silhouette": None})), "c": {}}
    graph = {"a": dict(files["a"]), "b": dict(files["b"]), "c": {}}
    assert compare(files, graph).ok and compare(files, graph).equal == 24
    graph["a"]["cardiothoracic_ratio"] = Expected(0.53, 0.5, "yes")
    graph["b"]["cardiothoracic_ratio"] = Expected()
    c = compare(files, graph)
    assert [(i, n) for i, n, _, _ in c.differing] == [("a", "cardiothoracic_ratio"), ("b", "cardiothoracic_ratio")]
    assert c.unnamed == [("b", "cardiothoracic_ratio")]
    assert c.by_reason[("cardiothoracic_ratio", "box missing")] == 1 and c.no_boxes == 1
    assert not compare(files, {"a": graph["a"]}).ok  # an image missing from the graph
