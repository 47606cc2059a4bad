"""The synthetic cohort's planted geometry (graph/synth/geometry.py) measured back: the project's scene-graph
reader and graph.measurements, on a written cohort, decide what geometry_truth.parquet says was planted.

Tolerances (docs/measurements.md, "The synthetic cohort's geometry"): every decision equals the truth on at
least 98 % of the films that have a value (the planted values keep a margin from each threshold larger than
the boxes' jitter, so it is 100 % for this seed), the measured ratios lie within 0.02 of the planted ones (the
cardiothoracic and mediastinal ratios) and 0.35 (the aortic knob and rotation, whose denominators are small
boxes), each measurement has a value on at least 95 % of the films, and a value is missing only for a faulty
or missing box.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from graph.formats.scene_graph import parse_scene_graph
from graph.measurements import ImageSize, measure_image
from graph.synth import GEOMETRY_TRUTH, GROUND_TRUTH, METADATA_CSV, write_cohort
from graph.vocabulary import vocabulary

PATIENTS = 100
SEED = 5
AGREEMENT = 0.98
BOX_FAULTS = {"box missing", "zero-area box", "box past the image"}
COLUMNS = ["image_id", "patient_id", "study_id", "view", "rows", "columns", "cardiothoracic_ratio", "cardiomegaly",
           "mediastinal_width_ratio", "mediastinal_widening", "trachea_deviation", "trachea_direction",
           "aortic_knob_ratio", "aortic_knob_enlargement", "rotation_ratio", "rotated", "cut_off", "cut_off_part"]


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    out = tmp_path_factory.mktemp("geometry")
    write_cohort(out, patients=PATIENTS, seed=SEED)
    return out


@pytest.fixture(scope="module")
def truth(cohort):
    return pd.read_parquet(cohort / GEOMETRY_TRUTH)


@pytest.fixture(scope="module")
def measured(cohort):
    """image_id -> {measurement name: Measurement}, from the project's reader and the metadata's Rows, Columns."""
    v = vocabulary()
    meta = pd.read_csv(cohort / METADATA_CSV, dtype={"dicom_id": str}).set_index("dicom_id")
    out = {}
    for path in sorted((cohort / "scene_graphs").rglob("*_SceneGraph.json")):
        parsed = parse_scene_graph(path, v)
        assert not parsed.rejections, path  # no box is negative or reversed
        for image in parsed.images:
            row = meta.loc[image.image_id]
            out[image.image_id] = {m.name: m for m in measure_image(image, ImageSize(int(row.Rows), int(row.Columns)))}
    return out


def test_the_truth_has_one_row_per_scene_graph_with_its_size_and_view(cohort, truth):
    assert list(truth.columns) == COLUMNS
    graphs = {p.name.removesuffix("_SceneGraph.json"): json.loads(p.read_text())
              for p in (cohort / "scene_graphs").rglob("*_SceneGraph.json")}
    assert truth.image_id.is_unique and set(truth.image_id) == set(graphs)
    meta = pd.read_csv(cohort / METADATA_CSV, dtype={"dicom_id": str, "subject_id": str, "study_id": str})
    joined = truth.merge(meta, left_on="image_id", right_on="dicom_id", validate="one_to_one")
    assert (joined["rows"] == joined.Rows).all() and (joined["columns"] == joined.Columns).all()
    assert (joined.view == joined.ViewPosition).all() and (joined.study_id_x == joined.study_id_y).all()
    assert (joined.patient_id == joined.subject_id).all()
    assert (truth.trachea_deviation == truth.trachea_direction.notna()).all()
    assert set(truth.trachea_direction.dropna()) == {"left", "right"}
    assert (truth.cut_off == truth.cut_off_part.notna()).all()
    assert set(truth.cut_off_part.dropna()) == {"apex_right", "apex_left", "bottom_right", "bottom_left"}


def test_cardiomegaly_is_the_studys_true_enlarged_cardiac_silhouette(cohort, truth):
    gt = pd.read_parquet(cohort / GROUND_TRUTH)
    heart = gt[(gt.finding == "enlarged cardiac silhouette") & (gt.anatomy == "cardiac silhouette")]
    joined = truth.merge(heart, on="study_id")
    assert len(joined) > 100
    assert (joined.cardiomegaly == (joined.severity_current > 0)).all()


def test_each_state_is_planted_on_both_sides(truth):
    """Both answers of each decision occur, enough of them for agreement to mean something."""
    counts = {flag: int(truth[flag].sum()) for flag in ("cardiomegaly", "mediastinal_widening", "trachea_deviation",
                                                         "aortic_knob_enlargement", "rotated", "cut_off")}
    assert counts["cardiomegaly"] >= 100 and len(truth) - counts["cardiomegaly"] >= 100, counts
    assert all(5 <= n <= len(truth) / 4 for flag, n in counts.items() if flag != "cardiomegaly"), counts
    assert set(truth.view) == {"AP", "PA"}


def _agreement(truth, measured, name, planted) -> tuple[float, int]:
    """(share of films with a value whose decision is ``yes`` exactly where ``planted`` is true, films)."""
    pairs = [(measured[r.image_id][name].decision == "yes", bool(getattr(r, planted))) for r in truth.itertuples()
             if measured[r.image_id][name].value is not None]
    return sum(a == b for a, b in pairs) / len(pairs), len(pairs)


@pytest.mark.parametrize("name, planted", [
    ("cardiothoracic_ratio", "cardiomegaly"), ("mediastinal_width_ratio", "mediastinal_widening"),
    ("tracheal_deviation", "trachea_deviation"), ("aortic_knob_ratio", "aortic_knob_enlargement"),
    ("rotation_ratio", "rotated")])
def test_each_decision_agrees_with_the_planted_state(truth, measured, name, planted):
    agree, films = _agreement(truth, measured, name, planted)
    assert films >= 0.95 * len(truth) and agree >= AGREEMENT, (name, agree, films)


def test_a_deviated_trachea_lies_on_the_planted_side(truth, measured):
    deviated = [(measured[r.image_id]["tracheal_deviation"].direction, r.trachea_direction)
                for r in truth.itertuples() if r.trachea_deviation
                and measured[r.image_id]["tracheal_deviation"].value is not None]
    assert deviated and sum(a == b for a, b in deviated) >= AGREEMENT * len(deviated)


def test_cut_off_films_measure_as_cut_off_and_the_others_complete(truth, measured):
    pairs = [(measured[r.image_id]["inclusion"].decision, r.cut_off, r.cut_off_part) for r in truth.itertuples()
             if measured[r.image_id]["inclusion"].decision is not None]
    assert len(pairs) >= 0.95 * len(truth)
    assert sum((d == "cut off") == cut for d, cut, _ in pairs) >= AGREEMENT * len(pairs)
    assert sum(d == "complete" for d, cut, _ in pairs if not cut) >= AGREEMENT * sum(not cut for _, cut, _ in pairs)
    # the planted part is the one the margins exclude
    for r in truth[truth.cut_off].itertuples():
        part = measured[r.image_id][f"inclusion_{r.cut_off_part}"]
        assert part.value is None or part.decision == "excluded", (r.image_id, r.cut_off_part, part)


@pytest.mark.parametrize("name, tolerance", [("cardiothoracic_ratio", 0.02), ("mediastinal_width_ratio", 0.02),
                                             ("aortic_knob_ratio", 0.35), ("rotation_ratio", 0.35)])
def test_measured_ratios_lie_near_the_planted_ones(truth, measured, name, tolerance):
    errors = [abs(measured[r.image_id][name].value - getattr(r, name)) for r in truth.itertuples()
              if measured[r.image_id][name].value is not None]
    assert max(errors) <= tolerance, (name, max(errors))


def test_a_film_without_a_value_names_a_faulty_or_missing_box(truth, measured):
    without = [m for r in truth.itertuples() for m in measured[r.image_id].values() if m.value is None
               and m.name != "inclusion"]
    assert without and {m.reason for m in without} <= BOX_FAULTS
    films = {m.image_id for m in without}
    # 3 % of the films miss boxes and each box is faulty at 0.5 %: of the 13 regions measured, about 9.5 %
    assert len(films) <= 0.12 * len(truth)


def test_the_224_frame_is_the_original_resized_and_padded(cohort, truth):
    """Each box's 224 corners are its original corners scaled by 224 / the longer side and centred, as Chest
    ImaGenome's (docs/formats.md §1.3), to the pixel."""
    size = truth.set_index("image_id")[["rows", "columns"]]
    for path in (cohort / "scene_graphs").rglob("*_SceneGraph.json"):
        g = json.loads(path.read_text())
        rows, cols = size.loc[g["image_id"]]
        ratio = 224 / max(rows, cols)
        left, top = (224 - cols * ratio) / 2, (224 - rows * ratio) / 2
        for o in g["objects"]:
            for corner, offset in (("x1", left), ("x2", left), ("y1", top), ("y2", top)):
                assert abs(o[corner] - (o[f"original_{corner}"] * ratio + offset)) <= 0.5, (path.name, o)
            assert 0 <= o["original_x1"] <= o["original_x2"] and 0 <= o["original_y1"] <= o["original_y2"]
