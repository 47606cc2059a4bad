"""A measurement that cannot be given names its reason, never a guessed value (graph.measurements): a box
missing, repeated, without original corners, reversed, of zero area or past the image, an unknown image size,
and geometry the formula has no value for. Only the measurements that read the faulty box lose their value."""

from __future__ import annotations

import pytest

from graph.measurements import ImageSize, measure_image
from graph.records import BoundingBoxRecord, ImageRecord
from tests.fixtures.films import NORMAL, box, image, measured


def _without_value(m):
    return {name for name, x in m.items() if x.value is None and name != "inclusion"}


def test_a_missing_box_takes_only_the_measurements_that_read_it():
    m = measured(image(cardiac_silhouette=None))
    assert _without_value(m) == {"cardiothoracic_ratio"}
    ctr = m["cardiothoracic_ratio"]
    assert (ctr.reason, ctr.note, ctr.threshold, ctr.decision) == ("box missing", "no cardiac silhouette box", None, None)
    assert m["inclusion"].decision == "complete"


def test_a_missing_lung_takes_every_ratio_over_the_thoracic_width_and_its_side():
    m = measured(image(left_lung=None))
    assert _without_value(m) == {"cardiothoracic_ratio", "mediastinal_width_ratio", "inclusion_side_left"}
    assert {m[n].reason for n in _without_value(m)} == {"box missing"}
    assert (m["inclusion"].reason, m["inclusion"].decision) == ("box missing", None)
    assert m["inclusion"].note == "inclusion_side_left: no left lung box"


def test_a_missing_spine_takes_deviation_and_rotation():
    m = measured(image(spine=None))
    assert _without_value(m) == {"tracheal_deviation", "rotation_ratio"}


def test_a_zero_area_box_is_a_reason():
    for corners in [(800, 1200, 800, 1900), (800, 1200, 1460, 1200)]:  # no width; no height
        ctr = measured(image(cardiac_silhouette=corners))["cardiothoracic_ratio"]
        assert (ctr.value, ctr.reason) == (None, "zero-area box")
        assert "cardiac silhouette" in ctr.note


def test_a_reversed_box_is_a_reason():
    """The loader rejects a reversed box; a record handed over directly still gets a reason, not a value."""
    m = measured(image(trachea=(1030, 300, 960, 900)))
    assert m["tracheal_deviation"].reason == m["aortic_knob_ratio"].reason == "reversed box"
    assert m["tracheal_deviation"].note == "the trachea box is reversed: (1030, 300) to (960, 900)"
    assert measured(image(trachea=(960, 900, 1030, 300)))["tracheal_deviation"].reason == "reversed box"


@pytest.mark.parametrize("changes, lost", [
    ({"left_lung": (1050, 400, 2001, 2000)}, {"cardiothoracic_ratio", "mediastinal_width_ratio",
                                              "inclusion_side_left"}),  # past Columns 2000
    ({"left_costophrenic_angle": (1500, 1850, 1700, 2560)}, {"inclusion_bottom_left"}),  # past Rows 2500
    ({"right_lung": (-5, 400, 950, 2000)}, {"cardiothoracic_ratio", "mediastinal_width_ratio",
                                            "inclusion_side_right"}),  # a negative corner
])
def test_a_box_past_the_image_is_a_reason(changes, lost):
    m = measured(image(**changes))
    assert _without_value(m) == lost
    assert {m[n].reason for n in lost} == {"box past the image"} and m["inclusion"].reason == "box past the image"


def test_the_border_itself_is_inside_the_image():
    m = measured(image(left_lung=(1050, 400, 2000, 2000)))
    assert (m["inclusion_side_left"].value, m["inclusion_side_left"].decision) == (0.0, "excluded")
    assert m["inclusion"].decision == "cut off"


def test_without_the_image_size_inclusion_has_a_reason_and_the_ratios_stay():
    m = measured(image(), size=None)
    parts = {n for n in m if n.startswith("inclusion")}
    assert _without_value(m) == parts - {"inclusion"}
    assert {m[n].reason for n in parts} == {"image size unknown"}
    assert m["cardiothoracic_ratio"].value == 0.47


def test_without_the_size_a_box_outside_the_224_frame_is_past_the_image():
    """Columns unknown, original_x2 cannot be checked; a 224-frame corner beyond 224 still shows the fault."""
    faulty = BoundingBoxRecord("i|0", "i", "left lung", 120, 36, 230, 179, original_x1=1050, original_y1=400,
                               original_x2=2100, original_y2=2000)
    others = tuple(box(k, r, c) for k, (r, c) in enumerate(NORMAL.items(), start=1) if r != "left lung")
    m = {x.name: x for x in measure_image(ImageRecord("i", "s", "PA", objects=(faulty, *others)))}
    assert m["cardiothoracic_ratio"].reason == "box past the image"
    assert "outside the 224 x 224 frame" in m["cardiothoracic_ratio"].note


def test_a_box_without_original_corners_is_a_reason_not_a_224_frame_fall_back():
    only_224 = BoundingBoxRecord("i|99", "i", "trachea", 100, 10, 110, 60)
    m = measured(ImageRecord("i", "s", "PA", objects=(*image(trachea=None).objects, only_224)))
    assert m["tracheal_deviation"].reason == "no original-pixel box"
    assert m["aortic_knob_ratio"].value is None and m["cardiothoracic_ratio"].value == 0.47


def test_two_boxes_of_one_region_is_a_reason():
    img = image()
    twice = ImageRecord("i", "s", "PA", objects=(*img.objects, box(99, "spine", (900, 300, 1100, 2300))))
    assert measured(twice)["rotation_ratio"].reason == "box repeated"


@pytest.mark.parametrize("changes, name, words", [
    ({"left_lung": (100, 400, 250, 2000)}, "cardiothoracic_ratio", "thoracic width"),  # left lung x2 < right x1
    ({"aortic_arch": (900, 700, 1030, 850)}, "aortic_knob_ratio", "aortic knob width"),  # ends with the trachea
    ({"right_clavicle": (400, 450, 1010, 600)}, "rotation_ratio", "past the spine's centre"),
    ({"right_clavicle": (400, 450, 1000, 600), "left_clavicle": (1000, 450, 1600, 600)}, "rotation_ratio",
     "both clavicles"),
])
def test_geometry_without_a_value_is_a_reason(changes, name, words):
    m = measured(image(**changes))[name]
    assert (m.value, m.decision, m.reason) == (None, None, "formula undefined") and words in m.note


def test_an_image_without_boxes_names_a_reason_for_every_measurement():
    got = measure_image(ImageRecord("i", "s", "AP"), ImageSize(2500, 2000))
    assert len(got) == 12 and {m.reason for m in got} == {"box missing"} and {m.value for m in got} == {None}
