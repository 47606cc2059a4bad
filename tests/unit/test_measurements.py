"""CheXStruct-style measurements from anatomy boxes (graph.measurements): hand-computed values on made-up
boxes, each threshold and view, the rounding, and the formulas derived again in the test from their definition.

The films are tests/fixtures/films.py's (2000 columns by 2500 rows); every expected number below is worked out
in its comment or beside the boxes there.
"""

from __future__ import annotations

import random

import pytest

from graph.measurements import ImageSize, measure_image
from graph.measurements import thresholds as th
from graph.measurements.boxes import REGIONS
from graph.records import ImageRecord
from graph.vocabulary import vocabulary
from tests.fixtures.films import NORMAL, SIZE, bare, image, measured

def test_a_normal_pa_film_measured_by_hand():
    m = measured(image())
    assert [x.name for x in measure_image(image(), SIZE)] == [
        "cardiothoracic_ratio", "mediastinal_width_ratio", "tracheal_deviation", "aortic_knob_ratio",
        "rotation_ratio", "inclusion_apex_right", "inclusion_apex_left", "inclusion_side_right",
        "inclusion_side_left", "inclusion_bottom_right", "inclusion_bottom_left", "inclusion"]
    got = {name: (x.value, x.threshold, x.decision) for name, x in m.items()}
    assert got == {
        "cardiothoracic_ratio": (0.47, 0.5, "no"), "mediastinal_width_ratio": (0.21, 0.25, "no"),
        "tracheal_deviation": (0.75, None, "no"), "aortic_knob_ratio": (2.14, 2.5, "no"),
        "rotation_ratio": (0.8, 0.4, "no"),
        "inclusion_apex_right": (0.16, 0.01, "included"), "inclusion_apex_left": (0.164, 0.01, "included"),
        "inclusion_side_right": (0.15, 0.005, "included"), "inclusion_side_left": (0.15, 0.005, "included"),
        "inclusion_bottom_right": (0.2, 0.03, "included"), "inclusion_bottom_left": (0.2, 0.03, "included"),
        "inclusion": (None, None, "complete")}
    assert all(x.method == "box" and x.reason is None for x in m.values())
    assert m["tracheal_deviation"].direction is None
    assert m["cardiothoracic_ratio"].regions == ("cardiac silhouette", "right lung", "left lung")
    assert m["cardiothoracic_ratio"].task == "cardiomegaly" and m["rotation_ratio"].task == "rotation"


def test_the_thresholds_are_chexstructs():
    """MD_RANGES of CheXStruct/utils/constants.py, as the issue quotes them."""
    assert th.CARDIOMEGALY == {"PA": 0.5, "AP": 0.55} and th.MEDIASTINAL_WIDENING == {"PA": 0.25, "AP": 0.33}
    assert (th.AORTIC_KNOB_ENLARGEMENT, th.ROTATION) == (2.5, 0.4)
    assert (th.INCLUSION_APEX, th.INCLUSION_SIDE) == (0.01, 0.005)
    assert (th.INCLUSION_BOTTOM_EXCLUDED_BELOW, th.INCLUSION_BOTTOM_INCLUDED_FROM) == (0.03, 0.09)


@pytest.mark.parametrize("heart_width, view, value, decision", [
    (728, "PA", 0.52, "yes"),   # 728 / 1400 = 0.52: above PA's 0.5
    (728, "AP", 0.52, "no"),    # below AP's 0.55
    (784, "AP", 0.56, "yes"),   # 784 / 1400 = 0.56
    (700, "PA", 0.5, "yes"),    # exactly the threshold: at least is enough
    (770, "AP", 0.55, "yes"),
    (694, "PA", 0.5, "yes"),    # 694 / 1400 = 0.4957, rounded to 0.5 before the comparison (as CheXStruct)
    (692, "PA", 0.49, "no"),    # 692 / 1400 = 0.4943 -> 0.49
])
def test_cardiomegaly_threshold_per_view(heart_width, view, value, decision):
    m = measured(image(view, cardiac_silhouette=(800, 1200, 800 + heart_width, 1900)))["cardiothoracic_ratio"]
    assert (m.value, m.threshold, m.decision) == (value, th.CARDIOMEGALY[view], decision)


@pytest.mark.parametrize("width, view, value, decision", [
    (364, "PA", 0.26, "yes"),  # 364 / 1400 = 0.26 >= 0.25
    (364, "AP", 0.26, "no"),   # < 0.33
    (476, "AP", 0.34, "yes"),  # 476 / 1400 = 0.34
    (350, "PA", 0.25, "yes"),  # exactly 0.25
    (462, "AP", 0.33, "yes"),  # exactly 0.33
])
def test_mediastinal_widening_threshold_per_view(width, view, value, decision):
    m = measured(image(view, upper_mediastinum=(850, 500, 850 + width, 1000)))["mediastinal_width_ratio"]
    assert (m.value, m.threshold, m.decision) == (value, th.MEDIASTINAL_WIDENING[view], decision)


@pytest.mark.parametrize("view", ["LATERAL", "LL", None, ""])
def test_other_views_get_values_without_thresholds(view):
    m = measured(image(view))
    assert m["cardiothoracic_ratio"].value == 0.47 and m["inclusion_apex_right"].value == 0.16
    assert all(x.threshold is None and x.decision is None and x.reason is None for x in m.values())
    assert f"no threshold for the view {view!r}" == m["rotation_ratio"].note


def test_views_are_read_without_case_or_spaces():
    assert measured(image(" ap "))["cardiothoracic_ratio"].threshold == 0.55


@pytest.mark.parametrize("trachea, value, decision, direction", [
    ((1010, 300, 1080, 900), 0.12, "yes", "left"),   # wholly right of x = 1000 on the image: (1010 - 1000) /
                                                     # (1080 - 1000) = 0.125, rounded half to even -> 0.12
    ((1020, 300, 1100, 900), 0.2, "yes", "left"),    # 20 / 100
    ((900, 300, 980, 900), 0.2, "yes", "right"),     # wholly left: (1000 - 980) / (1000 - 900)
    ((1000, 300, 1070, 900), 0.0, "no", None),       # its edge on the line is not a deviation: 0 / 70
    ((965, 300, 1035, 900), 1.0, "no", None),        # centred: 35 / 35
])
def test_tracheal_deviation_against_the_spine_centre(trachea, value, decision, direction):
    m = measured(image(trachea=trachea, aortic_arch=(1000, 700, 1300, 850)))["tracheal_deviation"]
    assert (m.value, m.threshold, m.decision, m.direction) == (value, None, decision, direction)


@pytest.mark.parametrize("arch_x2, value, decision", [
    (1205, 2.5, "yes"),   # (1205 - 1030) / 70 = 2.5
    (1204, 2.49, "no"),   # 174 / 70 = 2.4857
    (1240, 3.0, "yes"),   # 210 / 70
])
def test_aortic_knob_enlargement(arch_x2, value, decision):
    m = measured(image("AP", aortic_arch=(1000, 700, arch_x2, 850)))["aortic_knob_ratio"]
    assert (m.value, m.threshold, m.decision) == (value, 2.5, decision)


@pytest.mark.parametrize("left_x1, value, decision", [
    (1039, 0.39, "yes"),  # 39 / 100: rotated
    (1040, 0.4, "no"),    # 40 / 100: the threshold itself is not rotated
    (1100, 1.0, "no"),    # 100 / 100
    (1200, 0.5, "no"),    # the larger distance is the left one: 100 / 200
    (1020, 0.2, "yes"),
])
def test_rotation(left_x1, value, decision):
    m = measured(image(left_clavicle=(left_x1, 450, 1600, 600)))["rotation_ratio"]
    assert (m.value, m.threshold, m.decision) == (value, 0.4, decision)


@pytest.mark.parametrize("changes, part, value, decision, summary", [
    ({"right_apical_zone": (400, 20, 900, 600)}, "apex_right", 0.008, "excluded", "cut off"),  # 20 / 2500
    ({"right_apical_zone": (400, 25, 900, 600)}, "apex_right", 0.01, "included", "complete"),  # 25 / 2500
    ({"right_lung": (8, 400, 950, 2000)}, "side_right", 0.004, "excluded", "cut off"),        # 8 / 2000
    ({"right_lung": (10, 400, 950, 2000)}, "side_right", 0.005, "included", "complete"),      # 10 / 2000
    ({"left_lung": (1050, 400, 1992, 2000)}, "side_left", 0.004, "excluded", "cut off"),      # 8 / 2000
    ({"left_costophrenic_angle": (1500, 1850, 1700, 2450)}, "bottom_left", 0.02, "excluded", "cut off"),
    ({"left_costophrenic_angle": (1500, 1850, 1700, 2425)}, "bottom_left", 0.03, "mixed", "mixed"),  # 75 / 2500
    ({"left_costophrenic_angle": (1500, 1850, 1700, 2400)}, "bottom_left", 0.04, "mixed", "mixed"),
    ({"left_costophrenic_angle": (1500, 1850, 1700, 2275)}, "bottom_left", 0.09, "included", "complete"),
    ({"right_costophrenic_angle": (300, 1850, 500, 2425), "right_apical_zone": (400, 20, 900, 600)},
     "bottom_right", 0.03, "mixed", "cut off"),  # an excluded part outweighs a mixed one
])
def test_inclusion_margins_and_summary(changes, part, value, decision, summary):
    m = measured(image(**changes))
    assert (m[f"inclusion_{part}"].value, m[f"inclusion_{part}"].decision) == (value, decision)
    assert m["inclusion"].decision == summary and m["inclusion"].value is None


def test_the_same_decisions_for_the_same_film_on_any_scale():
    """Ratios do not depend on the pixel size: the film scaled by 3 measures the same."""
    big = ImageRecord("i", "s", "PA", objects=tuple(
        bare(k, r, tuple(3 * c for c in corners)) for k, (r, corners) in enumerate(NORMAL.items())))
    assert ([(x.value, x.decision) for x in measure_image(big, ImageSize(7500, 6000))]
            == [(x.value, x.decision) for x in measure_image(image(), SIZE)])


def test_every_region_read_is_a_chest_imagenome_box_region():
    regions = vocabulary().regions
    assert all(r in regions and regions[r].has_bbox for r in REGIONS)


def _random_film(rng: random.Random) -> dict[str, tuple[int, int, int, int]]:
    """Boxes drawn around a random midline, in the layout of a frontal film (right lung on the viewer's left)."""
    mid, w = rng.randint(900, 1100), rng.randint(500, 750)
    trachea_x1 = mid + rng.randint(-150, 40)

    def at(x1, x2, y1=400, y2=1800):
        return (x1, y1, x2, y2)
    return {
        "right lung": at(mid - w, mid - rng.randint(20, 80)), "left lung": at(mid + rng.randint(20, 80), mid + w),
        "cardiac silhouette": at(mid - rng.randint(150, 350), mid + rng.randint(150, 400)),
        "upper mediastinum": at(mid - rng.randint(80, 200), mid + rng.randint(80, 200)),
        "spine": at(mid - 60 + rng.randint(-30, 30), mid + 60 + rng.randint(-30, 30)),
        "trachea": at(trachea_x1, trachea_x1 + rng.randint(40, 90)),
        "aortic arch": at(mid - 100, mid + rng.randint(0, 350)),
        "right clavicle": at(mid - w + 50, mid - rng.randint(-40, 150)),
        "left clavicle": at(mid + rng.randint(40, 150), mid + w - 50),
    }


def test_formulas_derived_again_from_their_definitions():
    """On random films, each value is the definition worked out here (no code of the package): widths of
    boxes, the spine box's centre, distances to it, CheXStruct's rounding to 2 decimals."""
    rng = random.Random(7)
    for _ in range(200):
        film = _random_film(rng)
        img = ImageRecord("i", "s", "AP", objects=tuple(bare(k, r, c) for k, (r, c) in enumerate(film.items())))
        m = {x.name: x for x in measure_image(img)}
        (rl, _, _, _), (_, _, ll, _) = film["right lung"], film["left lung"]
        thorax = ll - rl
        heart = film["cardiac silhouette"][2] - film["cardiac silhouette"][0]
        ctr = round(heart / thorax, 2)
        assert (m["cardiothoracic_ratio"].value, m["cardiothoracic_ratio"].decision) == (ctr, "yes" if ctr >= .55 else "no")
        medi = film["upper mediastinum"][2] - film["upper mediastinum"][0]
        assert m["mediastinal_width_ratio"].value == round(medi / thorax, 2)
        centre = (film["spine"][0] + film["spine"][2]) / 2
        t1, t2 = film["trachea"][0], film["trachea"][2]
        if t1 > centre:
            expect = ((t1 - centre) / (t2 - centre), "left")
        elif t2 < centre:
            expect = ((centre - t2) / (centre - t1), "right")
        else:
            expect = (min(centre - t1, t2 - centre) / max(centre - t1, t2 - centre), None)
        assert (m["tracheal_deviation"].value, m["tracheal_deviation"].direction) == (round(expect[0], 2), expect[1])
        knob = film["aortic arch"][2] - t2
        if knob > 0:
            assert m["aortic_knob_ratio"].value == round(knob / (t2 - t1), 2)
        else:
            assert m["aortic_knob_ratio"].reason == "formula undefined"
        d_right, d_left = centre - film["right clavicle"][2], film["left clavicle"][0] - centre
        if d_right >= 0 and d_left >= 0:
            rot = round(min(d_right, d_left) / max(d_right, d_left), 2)
            assert (m["rotation_ratio"].value, m["rotation_ratio"].decision) == (rot, "yes" if rot < 0.4 else "no")
        else:
            assert m["rotation_ratio"].reason == "formula undefined"
