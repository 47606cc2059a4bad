"""The demo's CXRTrek section on an NIH ChestX-ray14 slice: one study's stages 1, 2, 5 and 6 with the gold
answers, each stage 6 answer beside that of a graph forecaster the demo trains on the other patients, valid
choices of their questions that follow the forecaster's probability from the studies up to the shown one;
without torch, one line says why instead."""

from __future__ import annotations

import io
import re
import sys

import pytest

from tests.fixtures.loading import load_into

pytestmark = pytest.mark.network  # the NIH tables come from the torchxrayvision wheel on PyPI

PATIENTS = 40
STAGE6 = re.compile(r"  stage 6 \(Future_Trend_Analysis\): (.+) -> gold (.+) \| forecaster (.+) \(p ([0-9.]+)\)$")


@pytest.fixture
def nih(store, tmp_path):
    from graph.datasets.nih.convert import convert_nih

    convert_nih(tmp_path / "nih", limit_patients=PATIENTS)
    load_into(store, tmp_path / "nih")
    return tmp_path / "nih"


def _shown(store):
    """The first patient (by id) whose shown sample has stage 6 questions, and that sample."""
    from flows.demo.answers import shown_sample
    from graph.cxrtrek.facts import all_patient_ids

    for patient in all_patient_ids(store):
        sample = shown_sample(store, patient)
        if sample and any(c["stage"] == 6 for c in sample["data_dict"]["cxrtrek_data"]["content"]):
            return patient, sample
    raise AssertionError("no patient of the slice has a study with a prior and a next study")


def _section(patient, nih) -> list[str]:
    from rich.console import Console

    from flows.demo.answers import cxrtrek_section

    out = io.StringIO()
    cxrtrek_section(Console(file=out, width=10_000), patient, nih)
    return out.getvalue().splitlines()


def test_the_forecasters_stage_6_answers_stand_beside_the_gold_ones(store, nih):
    patient, sample = _shown(store)
    lines = _section(patient, nih)
    items = {c["question"]: c for c in sample["data_dict"]["cxrtrek_data"]["content"] if c["stage"] == 6}
    assert {int(m.group(1)) for line in lines if (m := re.match(r"  stage (\d) ", line))} == {1, 2, 5, 6}
    shown = [STAGE6.match(line) for line in lines if line.startswith("  stage 6 ")]
    assert shown and all(shown), lines
    for m in shown:
        question, gold, said, p = m.group(1), m.group(2), m.group(3), float(m.group(4))
        item = items[question]
        assert gold == item["answer"]
        if item["qtype"] == "yes_no":
            assert said == ("Yes." if p >= 0.5 else "No.")
        else:
            assert said in item["option_list"] and said.endswith("Still present." if p >= 0.5 else "Resolved.")
    trained = r"trained here on \d+ other NIH patients in [0-9.]+ s \(reading [0-9.]+, training [0-9.]+,"
    assert re.search(trained, lines[-1]), lines[-1]


def test_the_forecaster_never_sees_the_shown_patient_and_reads_only_studies_up_to_the_shown_one(store, nih):
    import pandas as pd

    from flows.demo.forecast import stage6_forecasts, train_forecaster, training_patients
    from gnn.forecast.compare import patient_tables
    from gnn.forecast.rows import build_forecast_table

    patient, sample = _shown(store)
    data = sample["data_dict"]["cxrtrek_data"]
    patients = training_patients(nih, patient)
    every = pd.read_csv(nih / "metadata.csv", dtype=str)["subject_id"].value_counts()
    assert patient not in patients and set(patients) == set(every.index[every >= 2]) - {patient}
    trained = train_forecaster(store, patients, epochs=2)
    assert patient not in trained.patients
    forecasts = stage6_forecasts(store, sample, trained.forecaster)

    # the same forecaster on a graph that ends at the next study: the later studies change no answer
    studies, states = patient_tables(store, [patient])
    order = dict(zip(studies["study_id"], studies["study_order"], strict=True))
    cut = studies[studies["study_order"] <= order[data["pos_study_id"]]]
    table = build_forecast_table(cut, states, findings=trained.forecaster.findings)
    mask = (table.rows["prior_study_id"] == data["study_id"]).to_numpy()
    expected = dict(zip(table.rows.loc[mask, "finding"], trained.forecaster(table.x[mask]).tolist(), strict=True))
    questions = [c for c in data["content"] if c["stage"] == 6]
    assert questions and set(forecasts) == {(c["target"], c["qtype"]) for c in questions}
    for c in questions:
        p = expected[c["target"][len("next_["):-1]]
        answer = forecasts[(c["target"], c["qtype"])]
        assert answer["graph_basis"]["probability"] == pytest.approx(p, abs=1e-4)
        valid = ["Yes.", "No."] if c["qtype"] == "yes_no" else c["option_list"]
        assert answer["answer"] in valid


def test_without_torch_one_line_says_why(store, nih, monkeypatch):
    patient, _ = _shown(store)
    monkeypatch.setitem(sys.modules, "torch", None)  # what `import torch` finds where it is not installed
    for name in [m for m in sys.modules if m.startswith(("gnn.", "flows.demo.forecast"))]:
        monkeypatch.delitem(sys.modules, name)
    lines = _section(patient, nih)
    assert [line for line in lines if line.startswith("  stage 6 ")]  # the gold answers, still shown
    assert not any("forecaster" in line for line in lines[:-1])
    assert lines[-1] == "  stage 6 forecaster: not shown (torch is not installed: pip install 'cxrkg[gnn]')"
