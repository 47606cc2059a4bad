"""CXRTrek stage 6 answered by a saved next-study forecaster (`cxrkg cxrtrek answer --forecaster`) on an NIH
ChestX-ray14 slice: `cxrkg forecast --save-model` prints the always-absent baseline beside the others and the
stage 6 rule's validation figures beside the most common answer; each answer follows the saved rule applied
to the forecaster's presence and mention probabilities for that study pair and finding, the carry-forward
baseline says "still present" everywhere, and `cxrkg cxrtrek score` scores both against the graph's gold
answers."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.loading import load_into

pytestmark = pytest.mark.network  # the NIH tables come from the torchxrayvision wheel on PyPI

PATIENTS = 40


def test_the_forecaster_and_the_carry_forward_baseline_answer_stage_6_and_are_scored(store, tmp_path):
    from typer.testing import CliRunner

    from flows.cli import app
    from gnn.export import export_snapshot
    from gnn.forecast.model import load_forecaster
    from gnn.forecast.rows import forecast_table
    from graph.cxrtrek.templates import NEXT_OPTIONS
    from graph.datasets.nih.convert import convert_nih

    convert_nih(tmp_path / "nih", limit_patients=PATIENTS)
    load_into(store, tmp_path / "nih")
    export_snapshot(store, tmp_path / "snapshot")
    config, model = tmp_path / "forecast.yaml", tmp_path / "forecaster.pt"
    config.write_text("hidden: 16\nepochs: 2\n")
    runner = CliRunner()
    done = runner.invoke(app, ["forecast", "--snapshot", str(tmp_path / "snapshot"), "--bootstrap", "0",
                               "--config", str(config), "--save-model", str(model)])
    assert done.exit_code == 0, done.output
    assert "always absent" in done.output and "carry-forward" in done.output
    assert "CXRTrek stage 6 on the validation patients" in done.output and "most common answer" in done.output
    gold, forecast, carried = tmp_path / "gold.json", tmp_path / "forecast.json", tmp_path / "carried.json"
    for args in (["generate", "--out", str(gold), "--stages", "2,6"],
                 ["answer", str(gold), "--forecaster", str(model), "--out", str(forecast)],
                 ["answer", str(gold), "--carry-forward", "--out", str(carried)]):
        done = runner.invoke(app, ["cxrtrek", *args])
        assert done.exit_code == 0, done.output

    forecaster, table = load_forecaster(model), forecast_table(tmp_path / "snapshot")
    assert forecaster.mention is not None and forecaster.stage6 is not None
    rule, p_all, m_all = forecaster.stage6, forecaster(table.x), forecaster.mention(table.x)
    keys = list(zip(table.rows["prior_study_id"], table.rows["finding"], strict=True))
    expected = dict(zip(keys, zip(p_all.tolist(), m_all.tolist(), rule.yes(p_all), rule.choice(p_all, m_all),
                                  strict=True), strict=True))
    items = [(s["data_dict"]["cxrtrek_data"]["study_id"], c) for s in json.loads(forecast.read_text())
             for c in s["data_dict"]["cxrtrek_data"]["content"]]
    assert len(items) >= 20 and {c["stage"] for _, c in items} == {6}
    for study, c in items:
        p, m, yes, outcome = expected[(study, c["target"][len("next_["):-1])]
        assert c["graph_basis"]["probability"] == pytest.approx(p, abs=1e-4)
        assert c["graph_basis"]["mention_probability"] == pytest.approx(m, abs=1e-4)
        if c["qtype"] == "yes_no":
            assert c["answer"] == ("Yes." if yes else "No.")
        else:
            assert c["answer"].endswith(" " + NEXT_OPTIONS[outcome])
    carried_answers = {c["answer"] for s in json.loads(carried.read_text()) for c in s["data_dict"]["cxrtrek_data"]["content"]}
    assert carried_answers == {"Yes.", "A. Still present."}

    gold_yes = [c["answer"] == "Yes." for s in json.loads(gold.read_text())
                for c in s["data_dict"]["cxrtrek_data"]["content"] if c["stage"] == 6 and c["qtype"] == "yes_no"]
    done = runner.invoke(app, ["cxrtrek", "score", str(gold), str(carried), "--format", "json", "--bootstrap", "20"])
    assert done.exit_code == 0, done.output
    scores = {(r["stage"], r["qtype"]): r for r in json.loads(done.output)}
    assert set(scores) == {(6, "yes_no"), (6, "single-choice")}
    assert scores[(6, "yes_no")]["score"] == pytest.approx(sum(gold_yes) / len(gold_yes), abs=1e-4)
    assert scores[(6, "yes_no")]["answered"] == scores[(6, "yes_no")]["questions"] == len(gold_yes)
