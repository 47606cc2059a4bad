"""Scoring CXRTrek-format answers (graph.cxrtrek.score) and the carry-forward answers of stage 6, on hand-made
samples."""

from __future__ import annotations

import copy

import pytest

from gnn.forecast.cxrtrek_answer import carry_forward
from graph.cxrtrek.format import validate_samples
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


def _choice(stage, question, right, target=None):
    options = ["A. Still present.", "B. Resolved.", "C. Not mentioned."]
    return _q(stage, "single-choice", question, options[right], option_list=options, answer_list=[options[right]],
              **({"target": target} if target else {}))


def _gold():
    return [_sample(f"s{k}", [
        _q(2, "yes_no", "Is there any evidence of widget?", "Yes." if k % 2 else "No."),
        _q(3, "detection", "[detection] Locate this phrase: Left lung", "Detected ...", bbox_list=[[10, 10, 30, 30]]),
        _q(6, "yes_no", "Will the widget still be seen?", "No." if k % 3 else "Yes.", target="next_[widget]"),
        _choice(6, "What does the next study show of the widget?", 0 if k % 3 == 0 else 2, "next_[widget]"),
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


def test_carry_forward_answers_stage_6_still_present_and_is_a_valid_file():
    answered, summary = carry_forward(_gold())

    assert (summary.answered, summary.unanswered, summary.samples) == (12, 0, 6)
    assert validate_samples(answered).rejections == []
    items = [c for s in answered for c in s["data_dict"]["cxrtrek_data"]["content"]]
    assert {c["stage"] for c in items} == {6}
    assert {c["answer"] for c in items} == {"Yes.", "A. Still present."}
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
