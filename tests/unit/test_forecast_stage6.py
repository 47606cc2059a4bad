"""CXRTrek stage 6 from the next-study forecasts (gnn/forecast/stage6.py): the yes/no threshold and the
three-outcome choice chosen on validation rows where the right rule is known, the fall-back to the most
common answer, the gold outcomes read from the rows, the figures beside the most common answer, the
always-absent baseline, and a saved forecaster carrying its mention model and rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gnn.forecast.baselines import BASELINES
from gnn.forecast.report import evaluate_forecasters
from gnn.forecast.rows import build_forecast_table
from gnn.forecast.stage6 import (ABOVE_ALL, NOT_MENTIONED, OUTCOMES, RESOLVED, STILL_PRESENT, Stage6Rule,
                                 against_most_common, asked, asked_part, choose_rule, choose_yes_threshold,
                                 constant_rule, most_common, outcomes, unless_clearly_better)
from graph.cxrtrek.templates import NEXT_OPTIONS
from tests.fixtures.forecast import ATL, EFF, studies_frame


def test_the_yes_threshold_is_where_the_validation_rows_change_answer():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 400)
    yes = p >= 0.3  # the right threshold: anywhere in (largest p below 0.3, smallest p at or above it]
    t = choose_yes_threshold(p, yes)
    assert p[~yes].max() < t <= p[yes].min()
    assert ((p >= t) == yes).all()
    # a fixed 0.5 would be wrong on every row between 0.3 and 0.5
    assert ((p >= 0.5) != yes).sum() > 50


def test_an_uninformative_forecast_falls_back_to_the_most_common_answer():
    p = np.linspace(0.9, 0.4, 300)
    # from the highest p down: no, no, yes, no, ...: no cut gets more right than "No." everywhere (3 in 4)
    yes = np.arange(300) % 4 == 2
    assert choose_yes_threshold(p, yes) == ABOVE_ALL
    assert choose_yes_threshold(p, ~yes) == 0.0  # "Yes." everywhere
    with pytest.raises(ValueError, match="no rows"):
        choose_yes_threshold(np.array([]), np.array([], dtype=bool))


def test_the_three_outcome_choice_recovers_a_known_rule():
    rng = np.random.default_rng(2)
    p, m = rng.uniform(0, 1, 250), rng.uniform(0, 1, 250)  # under 256 rows: every mention value is tried
    outcome = np.where(m < 0.4, NOT_MENTIONED, np.where(p >= 0.6, STILL_PRESENT, RESOLVED)).astype(object)
    rule = choose_rule(p, m, outcome)
    assert m[m < 0.4].max() < rule.mention_threshold <= m[m >= 0.4].min()
    mentioned = m >= 0.4
    assert p[mentioned & (p < 0.6)].max() < rule.present_threshold <= p[mentioned & (p >= 0.6)].min()
    assert (rule.choice(p, m) == outcome).all()
    assert set(OUTCOMES) == set(NEXT_OPTIONS)  # the options the gold file offers, read from the templates


def test_the_choice_rule_scores_at_least_each_constant_answer_on_its_rows():
    rng = np.random.default_rng(3)
    p, m = rng.uniform(0, 1, 500), rng.uniform(0, 1, 500)
    outcome = rng.choice(np.array(OUTCOMES, dtype=object), 500, p=[0.3, 0.2, 0.5])  # unrelated to p and m
    rule = choose_rule(p, m, outcome)
    right = (rule.choice(p, m) == outcome).mean()
    assert right >= max((outcome == o).mean() for o in OUTCOMES)
    # without a mention forecast the rule never says "not mentioned"
    assert NOT_MENTIONED not in set(Stage6Rule(mention_threshold=0.9).choice(p, None))
    with pytest.raises(ValueError, match="outcomes must be among"):
        choose_rule(p, m, np.array(["gone"] * 500, dtype=object))


def test_a_constant_rule_gives_one_answer_whatever_the_forecasts():
    rng = np.random.default_rng(4)
    p, m = rng.uniform(0, 1, 200), rng.uniform(0, 1, 200)
    for yes in (True, False):
        for choice in OUTCOMES:
            rule = constant_rule(yes, choice)
            assert (rule.yes(p) == yes).all() and set(rule.choice(p, m)) == {choice}
    assert constant_rule(False, NOT_MENTIONED).text() == '"No." everywhere; "Not mentioned." everywhere'
    assert constant_rule(True, RESOLVED).text() == '"Yes." everywhere; "Resolved." everywhere'
    assert Stage6Rule(0.3, 0.6, 0.4).text() == ("yes at p >= 0.300; not mentioned at mention p < 0.600, "
                                                "else still present at p >= 0.400")
    # 4 still present, 3 resolved, 5 not mentioned: "No." (4 of 12 present) and "Not mentioned."
    outcome = np.array([STILL_PRESENT] * 4 + [RESOLVED] * 3 + [NOT_MENTIONED] * 5, dtype=object)
    assert most_common(outcome) == constant_rule(False, NOT_MENTIONED)
    with pytest.raises(ValueError, match="is not among"):
        constant_rule(True, "gone")


def _patients(n_patients: int, per_patient: int) -> pd.DataFrame:
    ids = np.repeat([f"p{i}" for i in range(n_patients)], per_patient)
    return pd.DataFrame({"patient_id": ids})


def test_a_rule_is_kept_only_where_it_clearly_beats_the_most_common_answer():
    rng = np.random.default_rng(5)
    # 200 patients, 5 rows each; yes/no follows p exactly
    rows = _patients(200, 5)
    p, m = rng.uniform(0, 1, 1000), rng.uniform(0, 1, 1000)
    outcome = np.where(p >= 0.7, STILL_PRESENT, rng.choice([RESOLVED, NOT_MENTIONED], 1000)).astype(object)
    rows["next_state"] = np.where(outcome == STILL_PRESENT, "present",
                                  np.where(outcome == RESOLVED, "absent", "not_mentioned"))
    chosen = Stage6Rule(yes_threshold=0.7, mention_threshold=0.5, present_threshold=0.7)
    fallback = constant_rule(False, NOT_MENTIONED)
    kept = unless_clearly_better(chosen, fallback, rows, p, m)
    assert kept.yes_threshold == 0.7
    # the choice rule is right on about half the rows (its mention cut is a coin), "Not mentioned."
    # everywhere on about 35 %: kept too
    assert (kept.mention_threshold, kept.present_threshold) == (0.5, 0.7)
    # on 4 patients the same rule's gain cannot be told from chance: both questions fall back
    few = rows.iloc[:8].assign(patient_id=np.repeat(["a", "b", "c", "d"], 2))
    p8 = np.array([0.9, 0.1, 0.2, 0.3, 0.1, 0.2, 0.8, 0.1])
    few["next_state"] = ["present", "absent", "absent", "not_mentioned", "not_mentioned", "absent",
                         "absent", "not_mentioned"]
    assert unless_clearly_better(chosen, fallback, few, p8, p8) == fallback
    with pytest.raises(ValueError, match="no stage 6 rows"):
        unless_clearly_better(chosen, fallback, rows.iloc[:0], p[:0], m[:0])


@pytest.fixture()
def table():
    studies = studies_frame([
        ("A", "a1", None, 1, None, None, "60-70", "F"), ("A", "a2", None, 2, "a1", 91, "60-70", "F"),
        ("A", "a3", None, 3, "a2", 91, "60-70", "F"), ("A", "a4", None, 4, "a3", 91, "60-70", "F"),
        ("C", "c1", None, 1, None, None, None, None), ("C", "c2", None, 2, "c1", 31, None, None),
    ])
    states = pd.DataFrame([
        ("a1", EFF, "present"), ("a1", ATL, "absent"),
        ("a2", ATL, "present"),                         # effusion not mentioned next
        ("a3", EFF, "present"), ("a3", ATL, "absent"),  # atelectasis stated absent next
        ("a4", EFF, "present"),                         # effusion still present
        ("c1", ATL, "uncertain"), ("c2", ATL, "uncertain"),
    ], columns=["study_id", "finding", "state"])
    return build_forecast_table(studies, states)


def test_gold_outcomes_are_read_from_the_next_study_as_the_gold_file_reads_them(table):
    asked = pd.concat([asked_part(table, s)[0] for s in ("train", "val", "test")])
    got = dict(zip(zip(asked["study_id"], asked["finding"], strict=True), outcomes(asked), strict=True))
    # asked: the findings present or uncertain at the prior study, and only those
    assert got == {("a2", EFF): NOT_MENTIONED, ("a3", ATL): RESOLVED, ("a4", EFF): STILL_PRESENT,
                   ("c2", ATL): STILL_PRESENT}  # uncertain counts as present, as in the gold answers
    rows = table.rows.set_index(["study_id", "finding"])
    assert rows.loc[("a2", EFF), "next_mentioned"] == 0 and rows.loc[("a3", ATL), "next_mentioned"] == 1


def test_figures_stand_beside_the_most_common_answer_with_a_paired_difference():
    rows = pd.DataFrame({"patient_id": list("aabbcd"),
                         "next_state": pd.Categorical(["present", "not_mentioned", "not_mentioned", "absent",
                                                       "not_mentioned", "present"])})
    p = np.array([0.9, 0.2, 0.1, 0.4, 0.3, 0.8])
    m = np.array([0.9, 0.1, 0.2, 0.9, 0.3, 0.9])
    rule = Stage6Rule(yes_threshold=0.5, mention_threshold=0.5, present_threshold=0.5)
    got = {r["question"]: r for r in against_most_common(rows, p, m, rule, bootstrap=50)}
    # yes/no: all six right; most common "No." right on four
    assert got["yes/no"]["forecaster"].startswith("1.000 [")
    assert got["yes/no"]["most common answer"].startswith("No. 0.667 [")
    assert got["yes/no"]["difference"].startswith("+0.333 [")
    # choice: all six right; most common "Not mentioned." right on three
    assert got["choice"]["most common answer"].startswith("Not mentioned. 0.500 [")
    assert got["choice"]["difference"].startswith("+0.500 [")
    low, high = (float(v) for v in got["choice"]["difference"].split("[")[1].rstrip("]").split(","))
    assert 0 < low <= 0.5 <= high


def test_always_absent_is_a_baseline_scored_beside_the_others():
    from tests.unit.test_forecast import _synthetic

    table = build_forecast_table(*_synthetic())
    assert (BASELINES["always absent"](table)(table.x) == 0).all()
    report = evaluate_forecasters(table, bootstrap=10)
    absent = report.scores["always absent"]["test"]
    assert absent.point["onset_auroc"] == pytest.approx(0.5)
    assert absent.point["resolution_auroc"] == pytest.approx(0.5)
    trees = report.scores["gradient-boosted trees"]["test"]
    assert trees.point["macro_f1"] > absent.point["macro_f1"]  # it never says onset or persistence
    low, high = absent.interval["macro_f1"]
    assert low <= absent.point["macro_f1"] <= high


def _mention_cohort(n_patients: int = 240, seed: int = 4):
    """A finding that, once present, the next study of a woman always states (present or absent) and that of
    a man mostly leaves out: the mention model's signal; presence follows the prior state."""
    rng = np.random.default_rng(seed)
    studies, states = [], []
    for p in range(n_patients):
        sex, present = "FM"[p % 2], False
        for k in range(4):
            sid = f"{p}-{k}"
            studies.append((str(p), sid, None, k + 1, None, None, "50-60", sex))
            if k == 0:
                present = True
                states += [(sid, EFF, "present")] + [(sid, ATL, "present")] * (p % 3 == 0)
            elif present:
                said = sex == "F" or rng.random() < 0.2
                present = said and rng.random() < 0.6
                if said:
                    states.append((sid, EFF, "present" if present else "absent"))
    return studies_frame(studies), pd.DataFrame(states, columns=["study_id", "finding", "state"])


def test_a_saved_forecaster_carries_its_mention_model_and_rule(tmp_path):
    from gnn.forecast.model import ForecastGnnConfig, gnn_forecaster, load_forecaster, with_stage6

    table = build_forecast_table(*_mention_cohort())
    forecaster = gnn_forecaster(ForecastGnnConfig(hidden=16, layers=1, epochs=8, batch_pairs=32))(table)
    lines: list[str] = []
    figures = with_stage6(forecaster, table, lines.append, bootstrap=20)
    assert any("mention model" in line for line in lines)
    assert {r["question"] for r in figures} == {"yes/no", "choice"}
    rows, x = table.part("val")  # the networks read whole pairs (both findings)
    keep = asked(x) & (rows["finding"] == EFF).to_numpy()
    mention = forecaster.mention(x)[keep]
    women = (rows.loc[keep, "patient_id"].astype(int) % 2 == 0).to_numpy()
    assert mention[women].mean() > mention[~women].mean() + 0.3
    loaded = load_forecaster(forecaster.save(tmp_path / "f.pt"))
    assert loaded.stage6 == forecaster.stage6
    assert np.allclose(loaded.mention(x)[keep], mention) and np.allclose(loaded(x), forecaster(x))
    assert NOT_MENTIONED in set(loaded.stage6.choice(loaded(x)[keep], mention))
