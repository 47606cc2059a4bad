"""The independent check of CXRTrek stages 2, 5 and 6 (graph.checks.nih.cxrtrek) on hand-made NIH
tables (synthetic rows in the tables' columns; no Neo4j, no wheel): right answers pass, and each kind of fault
is found."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from graph.checks.nih.cxrtrek import CxrtrekCheckError, check_samples
from graph.datasets.nih.labels import LABEL_MAP, SOURCE_TEXT
from graph.datasets.nih.tables import BBOX_COLUMNS, GOOGLE_COLUMNS, NIHTables

EFFUSION, ATELECTASIS = "pleural effusion", "atelectasis"
#: NIH's No Finding states every text-mined label's finding absent (Mass and Nodule are one finding)
NO_FINDING_ABSENT = sorted({t.finding for t in LABEL_MAP[SOURCE_TEXT].values()})


def _tables():
    rows = [("90000001_000.png", "Effusion", "0"), ("90000001_001.png", "Effusion|Atelectasis", "1"),
            ("90000001_002.png", "No Finding", "2"), ("90000001_003.png", "No Finding", "3")]
    entry = pd.DataFrame([{"Image Index": i, "Finding Labels": labels, "Follow-up #": fu, "Patient ID": "90000001",
                           "Patient Age": "50", "Patient Gender": "F", "View Position": "PA"}
                          for i, labels, fu in rows])
    return NIHTables(entry, pd.DataFrame(columns=list(BBOX_COLUMNS)), pd.DataFrame(columns=list(GOOGLE_COLUMNS)))


def _q(stage, target, qtype, answer):
    item = {"stage": stage, "target": target, "qtype": qtype, "answer": answer}
    if qtype == "single-choice":
        item["answer_list"] = [answer]
    return item


def _sample(study, ref, pos, content):
    return {"data_dict": {"cxrtrek_data": {"study_id": study, "ref_study_id": ref, "pos_study_id": pos,
                                           "content": content}}}


def _right():
    first = _sample("90000001_000", "", "90000001_001", [
        _q(2, f"abnormality_[{EFFUSION}]", "yes_no", "Yes."),
        _q(6, f"next_[{EFFUSION}]", "yes_no", "Yes."), _q(6, f"next_[{EFFUSION}]", "single-choice", "A. Still present.")])
    second = _sample("90000001_001", "90000001_000", "90000001_002", [
        _q(2, f"abnormality_[{ATELECTASIS}]", "single-choice", "B. Yes."), _q(2, f"abnormality_[{EFFUSION}]", "yes_no", "Yes."),
        _q(5, "overall_change", "single-choice", "B. The findings have changed."),
        _q(5, f"change_[{ATELECTASIS}]", "single-choice", "A. New."),
        _q(5, f"change_[{EFFUSION}]", "single-choice", "B. Still present."),
        _q(6, f"next_[{ATELECTASIS}]", "yes_no", "No."), _q(6, f"next_[{ATELECTASIS}]", "single-choice", "B. Resolved."),
        _q(6, f"next_[{EFFUSION}]", "yes_no", "No."), _q(6, f"next_[{EFFUSION}]", "single-choice", "B. Resolved.")])
    third = _sample("90000001_002", "90000001_001", "90000001_003", [
        *[_q(2, f"abnormality_[{f}]", "yes_no", "No.") for f in NO_FINDING_ABSENT],
        _q(5, "overall_change", "single-choice", "B. The findings have changed."),
        _q(5, f"change_[{ATELECTASIS}]", "single-choice", "C. Resolved."),
        _q(5, f"change_[{EFFUSION}]", "single-choice", "C. Resolved.")])
    # nothing present before or now: no event, and the study is unchanged
    fourth = _sample("90000001_003", "90000001_002", "", [
        *[_q(2, f"abnormality_[{f}]", "yes_no", "No.") for f in NO_FINDING_ABSENT],
        _q(5, "overall_change", "single-choice", "A. It shows an unchanged trend.")])
    return [first, second, third, fourth]


def test_the_right_answers_pass_and_are_counted():
    result = check_samples(_right(), _tables())

    assert result.mismatches.empty, result.mismatches.to_string()
    assert result.samples == 4
    assert len(NO_FINDING_ABSENT) == 13
    assert result.checked == {"presence": 1 + 2 + 13 + 13, "overall_change": 3, "change": 4, "next_choice": 3,
                              "next_yes_no": 3}


def _faulty(edit):
    samples = copy.deepcopy(_right())
    edit(samples)
    return check_samples(samples, _tables()).mismatches


def test_a_wrong_answer_a_missing_and_an_extra_question_and_a_wrong_link_are_found():
    def wrong(s):
        s[1]["data_dict"]["cxrtrek_data"]["content"][3]["answer_list"] = ["B. Still present."]

    def missing(s):
        del s[2]["data_dict"]["cxrtrek_data"]["content"][-1]

    def extra(s):
        s[0]["data_dict"]["cxrtrek_data"]["content"].append(_q(5, "change_[edema]", "single-choice", "A. New."))

    def unchanged(s):
        s[3]["data_dict"]["cxrtrek_data"]["content"][-1]["answer_list"] = ["B. The findings have changed."]

    def link(s):
        s[2]["data_dict"]["cxrtrek_data"]["ref_study_id"] = "90000001_000"

    got = {name: _faulty(edit)[["study_id", "kind", "finding", "problem"]].values.tolist()
           for name, edit in [("wrong", wrong), ("missing", missing), ("extra", extra), ("unchanged", unchanged),
                              ("link", link)]}
    assert got == {"wrong": [["90000001_001", "change", ATELECTASIS, "answer"]],
                   "missing": [["90000001_002", "change", EFFUSION, "missing"]],
                   "extra": [["90000001_000", "change", "edema", "extra"]],
                   "unchanged": [["90000001_003", "overall_change", "", "answer"]],
                   "link": [["90000001_002", "link", "", "link"]]}


def test_a_sample_without_cxrtrek_data_is_named():
    with pytest.raises(CxrtrekCheckError, match="sample 1"):
        check_samples([_right()[0], {"messages": []}], _tables())


def test_a_file_is_read_line_by_line_as_generate_writes_it_or_whole(tmp_path):
    import json

    from graph.checks.nih.cxrtrek import read_file

    lines, whole = tmp_path / "lines.json", tmp_path / "whole.json"
    lines.write_text("[\n" + ",\n".join(json.dumps(s) for s in _right()) + "\n]\n")
    whole.write_text(json.dumps(_right(), indent=4))

    assert list(read_file(lines)) == list(read_file(whole)) == _right()
    assert check_samples(read_file(lines), _tables()).mismatches.empty
    lines.write_text("[\n" + json.dumps(_right()[0]) + ",\n{broken\n]\n")
    with pytest.raises(CxrtrekCheckError, match="line 3"):
        list(read_file(lines))
