"""The MI-CXR JSON-lines reader: each spelling of choices, images and answers it takes, and each bad row named by
line and field while the rest of the file is read."""

from __future__ import annotations

import json

import pytest

from graph.formats.micxr import MicxrFileError, read_micxr, resolve_answer, write_micxr

ROW = {"qid": "q1", "group_type": "TEL", "qtype": "single emergence",
       "images": ["files/p10/p10000032/s1/a.jpg", "b", "c", "d", "e"], "question": "When?",
       "choices": ["T1", "T2", "T3", "T4", "T5"], "answer": "C"}


def _write(tmp_path, *rows) -> str:
    path = tmp_path / "q.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


def test_reads_list_and_lettered_spellings_alike(tmp_path):
    lettered = ROW | {"qid": "q2", "choices": {"A": "T1", "B": "T2", "C": "T3", "D": "T4", "E": "T5"}, "answer": "(C)",
                      "images": {"T2": "b", "T1": "a", "T3": "c", "T4": "d", "T5": "e"}}
    prefixed = ROW | {"qid": "q3", "choices": ["A. T1", "B. T2", "C. T3", "D. T4", "E. T5"], "answer": "T3",
                      "cxrkg_basis": {"patient_id": "7"}}
    read = read_micxr(_write(tmp_path, ROW, lettered, prefixed))
    assert read.rejections == []
    assert [q.answer for q in read.questions] == ["C", "C", "C"]
    assert {q.choices for q in read.questions} == {("T1", "T2", "T3", "T4", "T5")}
    assert read.questions[1].images == ("a", "b", "c", "d", "e")
    assert read.questions[2].answer_text == "T3" and read.questions[2].extra == {"cxrkg_basis": {"patient_id": "7"}}


@pytest.mark.parametrize("bad, field", [
    ({"answer": "F"}, "answer"), ({"answer": "T9"}, "answer"), ({"group_type": "XYZ"}, "group_type"),
    ({"choices": "T1"}, "choices"), ({"choices": ["T1", "T1", "T2", "T3", "T4"]}, "choices"),
    ({"images": []}, "images"), ({"question": ""}, "question"), ({"qid": None}, "qid"),
])
def test_a_bad_row_is_named_by_line_and_field_and_the_rest_is_read(tmp_path, bad, field):
    read = read_micxr(_write(tmp_path, ROW | {"qid": "a"}, "", ROW | bad | ({"qid": "b"} if "qid" not in bad else {}),
                             ROW | {"qid": "c"}))
    assert [q.qid for q in read.questions] == ["a", "c"]
    assert [(r.record, r.field) for r in read.rejections] == [("line 3", field)]
    assert str(tmp_path / "q.jsonl") == read.rejections[0].file


def test_missing_field_not_json_and_duplicate_qid_are_rejected_alone(tmp_path):
    no_answer = {k: v for k, v in ROW.items() if k != "answer"} | {"qid": "n"}
    read = read_micxr(_write(tmp_path, ROW, "{not json", no_answer, ROW, [1, 2]))
    assert [q.line for q in read.questions] == [1]
    assert [(r.record, r.field) for r in read.rejections] == [("line 2", None), ("line 3", "answer"),
                                                              ("line 4", "qid"), ("line 5", None)]
    assert "already on line 1" in read.rejections[2].reason
    assert read_micxr(_write(tmp_path, no_answer), with_answer=False).questions[0].answer is None


def test_an_unreadable_file_is_one_error_naming_it(tmp_path):
    with pytest.raises(MicxrFileError, match="missing.jsonl"):
        read_micxr(tmp_path / "missing.jsonl")
    with pytest.raises(MicxrFileError, match="line 4, field answer"):
        resolve_answer("Z", ("x", "y"), "f.jsonl", 4)


def test_written_rows_read_back_the_same(tmp_path):
    write_micxr(tmp_path / "w.jsonl", [ROW, ROW | {"qid": "q2", "answer": "A"}])
    read = read_micxr(tmp_path / "w.jsonl")
    assert [(q.qid, q.answer) for q in read.questions] == [("q1", "C"), ("q2", "A")]


@pytest.mark.parametrize("value, letter", [("B", "B"), ("(B)", "B"), ("B.", "B"), ("B)", "B"), ("B. a small effusion", "B"),
                                           ("(B) a small effusion", "B"), ("A small effusion", "B"), (" a SMALL effusion ", "B"),
                                           ("E", "E")])
def test_an_answer_is_a_choices_text_else_a_letter(value, letter):
    choices = ("none", "A small effusion", "large", "C", "other")
    assert resolve_answer(value, choices, "f.jsonl", 1) == letter
    assert resolve_answer("C", choices, "f", 1) == "D"  # the text "C" is choice D's
    with pytest.raises(MicxrFileError):
        resolve_answer("Bx", choices, "f", 1)
