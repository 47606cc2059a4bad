"""CXReasonBench-style items (graph.cxreasonbench) built from graph.measurements' own measurements of the
made-up films of tests/fixtures/films.py (2000 x 2500 pixels; each value worked out there): every stage's
answer agrees with the measurement it names, the layout is the evaluation's, and an image a task cannot ask
gets no item and names its reason."""

from __future__ import annotations

import json
import random
import re

import pytest

from graph.cxreasonbench import templates as t
from graph.cxreasonbench.facts import from_records
from graph.cxreasonbench.generate import TaskSelectionError, parse_tasks, write_items
from graph.cxreasonbench.items import build_item, value_ranges
from graph.measurements import measure_image
from tests.fixtures.films import NORMAL, SIZE, image

STAGES = ["init", "criteria", "bodypart", "measurement", "final"]


def _img(view="PA", size=SIZE, image_id="i", **changes):
    rec = image(view, **changes)
    return from_records(type(rec)(image_id, rec.study_id, rec.view, objects=rec.objects), "p1", size)


def _range(text: str) -> tuple[float, float]:
    low, high = re.findall(r"\d+\.\d+", text)
    return float(low), float(high)


@pytest.mark.parametrize("task", list(t.TASKS))
def test_every_stage_answers_from_the_measurement(task):
    img = _img("AP")
    item = build_item(img, task, seed=1)
    m = img.measurements[t.TASKS[task].measurement]
    assert list(item["path1"]) == STAGES and item["dicom"] == "i" and item["task"] == task
    for stage in ("init", "measurement", "final"):
        s = item["path1"][stage]
        assert all(a in s["options"] for a in s["answer"].split(", ")) and s["question"].endswith(".")
        assert all(o in s["question"] for o in s["options"])
    for stage in ("criteria", "bodypart"):
        s = item["path1"][stage]
        assert len(s["question"]) == len(s["options"]) == len(s["answer"])
        assert all(a in o for a, o in zip(s["answer"], s["options"], strict=True))
    assert item["path1"]["init"]["answer"] == item["path1"]["final"]["answer"]
    assert t.TASKS[task].criterion in item["path1"]["criteria"]["answer"][0]
    assert [q.split("outlines the ")[1].split("?")[0] for q in item["path1"]["bodypart"]["question"]] == list(m.regions)
    assert [a.split(") ", 1)[1] for a in item["path1"]["bodypart"]["answer"]] == [
        "({}, {}, {}, {})".format(*NORMAL[r]) for r in m.regions]
    assert len(item["path1"]["bodypart"]["img_path"]) == len(m.regions)
    basis = item["basis"]
    assert (basis["measurement_id"], basis["value"], basis["threshold"], basis["decision"]) == (
        f"i|{m.name}", m.value, m.threshold, m.decision)
    assert basis["regions"] == list(m.regions) and basis["method"] == "box" and basis["view"] == "AP"
    json.dumps(item)  # plain JSON


def test_the_measurement_range_holds_the_value_on_the_decisions_side():
    # 728 / 1400 = 0.52 on PA: cardiomegaly (>= 0.5), its range 0.50 - 0.54
    item = build_item(_img("PA", cardiac_silhouette=(800, 1200, 1528, 1900)), "cardiomegaly")
    assert _range(item["path1"]["measurement"]["answer"]) == (0.5, 0.54)
    assert item["path1"]["final"]["answer"] == "(a) Yes" and item["basis"]["value"] == 0.52
    assert item["path1"]["criteria"]["answer"][1].endswith("at least 0.50")
    # rotated: the left clavicle 30 px from the centre line, the right 100: 0.3, below 0.4
    rot = build_item(_img("PA", left_clavicle=(1030, 450, 1600, 600)), "rotation")
    assert _range(rot["path1"]["measurement"]["answer"]) == (0.3, 0.39) and rot["path1"]["final"]["answer"] == "(a) Yes"
    assert rot["path1"]["criteria"]["answer"][1].endswith("below 0.40")


@pytest.mark.parametrize("value, threshold, width, right", [
    (0.5, 0.5, 5, (0.5, 0.54)), (0.49, 0.5, 5, (0.45, 0.49)), (0.33, 0.33, 4, (0.33, 0.36)),
    (0.32, 0.33, 4, (0.29, 0.32)), (2.5, 2.5, 50, (2.5, 2.99)), (0.0, 0.4, 10, (0.0, 0.09)), (1.0, 0.4, 10, (1.0, 1.09)),
])
def test_value_ranges_put_the_threshold_on_an_edge(value, threshold, width, right):
    for draw in range(8):
        texts, k = value_ranges(value, threshold, width, random.Random(draw))
        assert len(texts) == 4 and _range(texts[k]) == right
        lows = [_range(x)[0] for x in texts]
        assert lows == sorted(lows) and min(lows) >= 0


def test_trachea_and_inclusion_measurements():
    # the trachea box wholly right of the spine's centre (x = 1000) on the image: the patient's left
    dev = build_item(_img("PA", trachea=(1010, 300, 1060, 900), aortic_arch=(1000, 700, 1200, 850)),
                     "trachea_deviation")
    assert dev["path1"]["measurement"]["answer"].endswith(t.TRACHEA_OPTIONS["left"])
    assert dev["path1"]["final"]["answer"] == "(a) Yes" and dev["basis"]["direction"] == "left"
    # the right apex's top at row 10: 0.004 < 0.01, cut off
    cut = build_item(_img("PA", right_apical_zone=(400, 10, 900, 600)), "inclusion")
    assert cut["path1"]["measurement"]["answer"] == "(a) The right lung apex"
    assert cut["path1"]["final"]["answer"].endswith(t.INCLUSION_DECISIONS["cut off"])
    assert [p["decision"] for p in cut["basis"]["parts"]][:2] == ["excluded", "included"]
    whole = build_item(_img("PA"), "inclusion")
    assert whole["path1"]["measurement"]["answer"].endswith(t.NONE_OF_THEM)


def test_no_item_without_a_decision():
    assert build_item(_img("PA", cardiac_silhouette=None), "cardiomegaly") is None  # box missing
    assert build_item(_img("LATERAL"), "cardiomegaly") is None  # no threshold for the view
    assert build_item(_img("PA", size=None), "inclusion") is None  # image size unknown
    assert build_item(_img("PA", size=None), "cardiomegaly") is not None
    with pytest.raises(KeyError):
        build_item(_img(), "carina_angle")


def test_the_same_seed_gives_the_same_item_whatever_else_is_written():
    a, b = build_item(_img(image_id="x"), "cardiomegaly", 3), build_item(_img(image_id="x"), "cardiomegaly", 3)
    assert a == b
    draws = {json.dumps(build_item(_img(image_id="x"), "cardiomegaly", s)["path1"]) for s in range(6)}
    assert len(draws) > 1  # the seed draws the option order


def test_write_items_counts_what_it_leaves_out(tmp_path):
    images = [_img("PA", image_id="a"), _img("PA", image_id="b", size=None, right_clavicle=None),
              _img("LATERAL", image_id="c")]
    summary = write_items(images, tmp_path / "items.jsonl", seed=0)
    lines = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert [(x["dicom"], x["task"]) for x in lines][:6] == [("a", task) for task in t.TASKS]
    assert summary.images == 3 and summary.items["cardiomegaly"] == 2 and summary.items["inclusion"] == 1
    assert summary.left_out[("rotation", "box missing")] == 1
    assert summary.left_out[("inclusion", "image size unknown")] == 1
    assert summary.left_out[("cardiomegaly", "no threshold for the view")] == 1
    assert len(lines) == sum(summary.items.values())


def test_from_records_keys_as_the_loaders_do():
    img = _img()
    assert list(img.measurements) == [m.name for m in measure_image(image(), SIZE)]
    assert img.measurements["inclusion"].measurement_id == "i|inclusion" and set(img.boxes) == set(NORMAL)


def test_parse_tasks():
    assert parse_tasks("rotation, cardiomegaly") == ("cardiomegaly", "rotation")
    for bad in ("", "carina_angle", "cardiomegaly,projection"):
        with pytest.raises(TaskSelectionError):
            parse_tasks(bad)
