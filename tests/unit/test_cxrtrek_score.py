"""Scoring CXRTrek-format answers (graph.cxrtrek.score) and the carry-forward answers of stage 6, on hand-made
samples."""

from __future__ import annotations

import copy

import pytest

from gnn.forecast.cxrtrek_answer import carry_forward
from graph.formats.cxrtrek import validate_samples
from graph.cxrtrek.score import iou, score_table


def _sample(study, items):
    messages = [{"role": "system", "content": "s"}]
    for x in items:
        messages += [{"role": "user", "content": x["question"]}, {"role": "assistant", "content": x["answer"]}]
    return {"messages": messages, "image": [study],
            "data_dict": {"cxrtrek_data": {"source": "t", "pat_id": "p", "study_id": study, "ref_study_id": "",
                                           "pos_study_id": "n", "image": [study], "content": items}}}


def _q(stage, qtype, question, answer, **more):
    return {"stage": stage, "task_type": {2: "Findings_Identification", 3: "Findings_Detection",
                                          6: "Future_Trend_Analysis"}[stage],
            "qtype": qtype, "image_input_count": 1, "question": question, "answer": answer, **more}


def _choice(stage, question, right, target=None, reverse=False):
    texts = ["Still present.", "Resolved.", "Not mentioned."]
    if reverse:
        texts, right = texts[::-1], 2 - right
    options = [f"{letter}. {text}" for letter, text in zip("ABC", texts, strict=True)]
    return _q(stage, "single-choice", question, options[right], option_list=options, answer_list=[options[right]],
              **({"target": target} if target else {}))


def _gold():
    return [_sample(f"s{k}", [
        _q(2, "yes_no", "Is there any evidence of widget?", "Yes." if k % 2 else "No."),
        _q(3, "detection", "[detection] Locate this phrase: Left lung", "Detected ...", bbox_list=[[10, 10, 30, 30]]),
        _q(6, "yes_no", "Will the widget still be seen?", "No." if k % 3 else "Yes.", target="next_[widget]"),
        _choice(6, "What does the next study show of the widget?", 0 if k % 3 == 0 else 2, "next_[widget]",
                reverse=k == 5),  # s5 lists its options the other way round: "A. Not mentioned."
    ]) for k in range(6)]


def test_box_iou():
    assert iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 10, 10], [20, 20, 30, 30]) == 0.0


def test_scores_per_stage_and_type_count_unanswered_as_wrong():
    gold = _gold()
    pred = copy.deepcopy(gold)
    pred[0]["data_dict"]["cxrtrek_data"]["content"][0]["answer"] = "Yes. There is some."  # s0's gold is No.
    pred[1]["data_dict"]["cxrtrek_data"]["content"][0]["answer"] = "Yes, a reason follows."  # right
    pred[2]["data_dict"]["cxrtrek_data"]["content"][1]["bbox_list"] = [[20, 10, 40, 30]]  # IoU 1/3
    del pred[3]["data_dict"]["cxrtrek_data"]["content"][3]  # the choice unanswered

    table = score_table(gold, pred, bootstrap=50).set_index(["stage", "qtype"])

    assert table.loc[(2, "yes_no"), "score"] == pytest.approx(5 / 6)
    assert table.loc[(3, "detection"), ["metric", "score"]].tolist() == ["mean IoU", pytest.approx((5 + 1 / 3) / 6)]
    assert table.loc[(6, "single-choice"), ["answered", "score"]].tolist() == [5, pytest.approx(5 / 6)]
    assert table.loc[(6, "yes_no"), "score"] == 1.0
    low, high = table.loc[(2, "yes_no"), ["ci_low", "ci_high"]]
    assert low <= 5 / 6 <= high and low < high


def test_the_most_common_gold_answer_stands_beside_each_score_matched_by_option_text():
    gold = _gold()
    gold[4]["data_dict"]["cxrtrek_data"]["content"][0]["answer"] = "Yes. A reason."  # yes_no: 4 Yes, 2 No
    table = score_table(gold, copy.deepcopy(gold), bootstrap=100).set_index(["stage", "qtype"])

    assert table.loc[(2, "yes_no"), ["majority_answer", "majority_score"]].tolist() == ["yes", pytest.approx(4 / 6)]
    # "C. Not mentioned." four times and once "A. Not mentioned.": one answer by its text
    assert table.loc[(6, "single-choice"), ["majority_answer", "majority_score"]].tolist() == ["not mentioned",
                                                                                             pytest.approx(4 / 6)]
    assert table.loc[(3, "detection"), ["majority_answer", "majority_score"]].tolist() == ["[10, 10, 30, 30]", 1.0]
    row = table.loc[(6, "single-choice")]
    assert row["diff"] == pytest.approx(1 - 4 / 6)
    assert row["majority_ci_low"] <= 4 / 6 <= row["majority_ci_high"] and row["majority_ci_low"] < row["majority_ci_high"]
    assert row["diff_ci_low"] <= row["diff"] <= row["diff_ci_high"]


def test_the_difference_is_paired_over_the_same_resampled_studies():
    gold = _gold()
    pred = copy.deepcopy(gold)
    for s in pred:  # answer every stage 6 choice with the most common gold answer, whatever its letter
        choice = s["data_dict"]["cxrtrek_data"]["content"][3]
        choice["answer_list"] = [o for o in choice["option_list"] if o.endswith("Not mentioned.")]

    row = score_table(gold, pred, {6}, bootstrap=200).set_index("qtype").loc["single-choice"]

    assert row["score"] == row["majority_score"] == pytest.approx(4 / 6) and row["ci_low"] < row["ci_high"]
    assert row["diff"] == row["diff_ci_low"] == row["diff_ci_high"] == 0.0  # unpaired draws would spread


def test_carry_forward_answers_stage_6_still_present_and_is_a_valid_file():
    answered, summary = carry_forward(_gold())

    assert (summary.answered, summary.unanswered, summary.samples) == (12, 0, 6)
    assert validate_samples(answered).rejections == []
    items = [c for s in answered for c in s["data_dict"]["cxrtrek_data"]["content"]]
    assert {c["stage"] for c in items} == {6}
    assert {c["answer"] for c in items} == {"Yes.", "A. Still present.", "C. Still present."}  # s5: options reversed
    table = score_table(_gold(), answered, {6}, bootstrap=0).set_index("qtype")
    # the gold says "still present" for s0 and s3 only
    assert table.loc["yes_no", "score"] == table.loc["single-choice", "score"] == pytest.approx(2 / 6)


def test_only_the_studies_the_answers_cover_are_scored_and_a_split_keeps_its_patients():
    from gnn.forecast.cxrtrek_answer import in_split

    answered, _ = carry_forward(_gold())
    table = score_table(_gold(), answered[:2], {6}, bootstrap=0).set_index("qtype")
    assert table.loc["yes_no", ["questions", "answered"]].tolist() == [2, 2]

    samples = _gold()
    for k, s in enumerate(samples):
        s["data_dict"]["cxrtrek_data"]["pat_id"] = f"patient-{k}"
    parts = {split: [s["data_dict"]["cxrtrek_data"]["pat_id"] for s in in_split(samples, split, seed=4)]
             for split in ("train", "val", "test")}
    assert sorted(sum(parts.values(), [])) == [f"patient-{k}" for k in range(6)]  # each patient in one split


def _cxrkg(*args):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "flows.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})


def test_cxrtrek_score_prints_the_most_common_answer_beside_each_score_and_a_bad_split_exits_2(tmp_path):
    import json

    from graph.formats.cxrtrek import dump_samples
    from graph.cxrtrek.score import SCORE_COLUMNS

    dump_samples(_gold(), tmp_path / "gold.json")
    done = _cxrkg("cxrtrek", "score", str(tmp_path / "gold.json"), str(tmp_path / "gold.json"), "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {(r["stage"], r["qtype"]): r for r in json.loads(done.stdout)}
    assert list(rows[(6, "single-choice")]) == list(SCORE_COLUMNS)
    assert rows[(6, "single-choice")]["majority_answer"] == "not mentioned"
    assert rows[(6, "single-choice")]["diff"] == pytest.approx(1 - 4 / 6, abs=1e-4)

    done = _cxrkg("cxrtrek", "score", str(tmp_path / "gold.json"), str(tmp_path / "gold.json"))
    assert done.returncode == 0 and "majority_score [95 % CI]" in " ".join(done.stdout.split())

    done = _cxrkg("cxrtrek", "answer", str(tmp_path / "gold.json"), "--out", str(tmp_path / "a.json"),
                  "--carry-forward", "--split", "bogus")
    assert done.returncode == 2 and "'bogus' is not one of" in done.stderr
