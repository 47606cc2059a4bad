"""Questions from the stored measurements on the real graph of a small synthetic cohort (20 patients, seed 5):
the CXReasonBench-style items exist for every image whose Measurement decides a task, each answer agreeing
with the node it names (read here with plain Cypher), and CXRTrek's stage 1 asks every image with boxes about
its quality, saying rotated or cut off where geometry_truth.parquet planted it (graph.synth)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from graph.synth import GEOMETRY_TRUTH, METADATA_CSV, SCENE_GRAPH_DIR, write_cohort
from tests.fixtures.loading import load_into

PATIENTS, SEED = 20, 5
AGREEMENT = 0.98
"""The share of films whose decision equals the planted state (tests/unit/test_synth_geometry.py)."""
DECIDING = {"cardiomegaly": "cardiothoracic_ratio", "mediastinal_widening": "mediastinal_width_ratio",
            "trachea_deviation": "tracheal_deviation", "aortic_knob_enlargement": "aortic_knob_ratio",
            "rotation": "rotation_ratio", "inclusion": "inclusion"}
MEASUREMENTS = """
MATCH (i:Image)-[:HAS_MEASUREMENT]->(m:Measurement)
RETURN i.image_id AS image_id, m.measurement_id AS measurement_id, m.name AS name, m.value AS value,
       m.threshold AS threshold, m.decision AS decision
"""


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synth")
    write_cohort(folder, patients=PATIENTS, seed=SEED)
    return folder


@pytest.fixture
def loaded(store, cohort):
    _, result = load_into(store, cohort / SCENE_GRAPH_DIR, cohort / METADATA_CSV)
    assert not result.rejections
    rows = store.read(MEASUREMENTS)
    assert rows, "the loaders wrote no Measurement node"
    return {(r["image_id"], r["name"]): r for r in rows}


def _agree(pairs: list[tuple[bool, bool]]) -> float:
    return sum(a == b for a, b in pairs) / len(pairs)


def test_cxreasonbench_items_for_every_decided_measurement(store, cohort, loaded, tmp_path):
    from typer.testing import CliRunner

    from flows.cli import app
    from graph.cxreasonbench.generate import generate

    summary = generate(store, tmp_path / "items.jsonl", seed=2)
    items = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
    decided = {(image, task) for (image, name), r in loaded.items() for task, deciding in DECIDING.items()
               if name == deciding and r["decision"] is not None}
    assert {(x["dicom"], x["task"]) for x in items} == decided and len(items) == len(decided)
    assert summary.images == len({image for image, _ in loaded})
    assert all(summary.items[task] > 0 for task in DECIDING)
    for x in items:
        node = loaded[(x["dicom"], DECIDING[x["task"]])]
        assert (x["basis"]["measurement_id"], x["basis"]["value"], x["basis"]["threshold"], x["basis"]["decision"]) == (
            node["measurement_id"], node["value"], node["threshold"], node["decision"])
        if x["task"] in ("cardiomegaly", "mediastinal_widening", "aortic_knob_enlargement", "rotation"):
            low, high = (float(v) for v in x["path1"]["measurement"]["answer"].split(") ", 1)[1].split(" - "))
            assert low <= node["value"] <= high
    truth = pd.read_parquet(cohort / GEOMETRY_TRUTH).set_index("image_id")
    final = {(x["dicom"], x["task"]): x["path1"]["final"]["answer"] == "(a) Yes" for x in items}
    for task, planted in (("cardiomegaly", "cardiomegaly"), ("rotation", "rotated")):
        pairs = [(yes, bool(truth.loc[image, planted])) for (image, t), yes in final.items() if t == task]
        assert len(pairs) > 20 and _agree(pairs) >= AGREEMENT
    again, runner = tmp_path / "again.jsonl", CliRunner()  # the command writes the same bytes
    done = runner.invoke(app, ["cxreasonbench", "generate", "--out", str(again), "--seed", "2"])
    assert done.exit_code == 0, done.output
    assert f"{len(items):,} items (cardiomegaly {summary.items['cardiomegaly']:,}" in done.output
    assert again.read_bytes() == (tmp_path / "items.jsonl").read_bytes()
    bad = runner.invoke(app, ["cxreasonbench", "generate", "--out", str(again), "--tasks", "carina_angle"])
    assert bad.exit_code == 1 and "choose among cardiomegaly" in bad.output


def test_cxrtrek_stage1_asks_every_image_with_boxes_about_its_quality(store, cohort, loaded, tmp_path):
    from graph.cxrtrek import templates as t
    from graph.formats.cxrtrek import read_samples
    from graph.cxrtrek.generate import generate

    generate(store, tmp_path / "q.json", seed=0, stages=(1,))
    result = read_samples(tmp_path / "q.json")
    assert result.rejections == []
    quality = {c["graph_basis"]["image_id"]: c for s in result.samples for c in s.row["data_dict"]["cxrtrek_data"][
        "content"] if c["task_type"] == "Quality_Assessment"}
    assert set(quality) == {image for image, _ in loaded}
    truth = pd.read_parquet(cohort / GEOMETRY_TRUTH).set_index("image_id")
    rotated = [(t.ROTATED in quality[i]["answer"], bool(truth.loc[i, "rotated"])) for i in quality
               if loaded[(i, "rotation_ratio")]["decision"] is not None]
    cut = [("not being included on the film" in quality[i]["answer"], bool(truth.loc[i, "cut_off"])) for i in quality
           if loaded[(i, "inclusion")]["decision"] is not None]
    assert len(rotated) > 20 and _agree(rotated) >= AGREEMENT and any(r for r, _ in rotated)
    assert len(cut) > 20 and _agree(cut) >= AGREEMENT and any(c for c, _ in cut)
    assert all(c["graph_basis"]["basis"] in ("measured", "measured and stated", "not measured")
               for c in quality.values())
