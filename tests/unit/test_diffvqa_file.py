"""The one reader of Medical-Diff-VQA question files (graph.formats.diffvqa): rows named by their line in the
file as an editor shows it, and every unusable file refused with file, line and field. Hand-written files with
invented ids."""

from __future__ import annotations

import pytest

from graph.formats.diffvqa import ANSWER_COLUMNS, QuestionFileError, read_question_file

HEADER = "study_id,subject_id,ref_id,question_type,question"


def _write(tmp_path, text: str, encoding: str = "utf-8"):
    path = tmp_path / "q.csv"
    path.write_bytes(text.encode(encoding))
    return path


def test_rows_are_named_by_their_line_in_the_file(tmp_path):
    # line 1 header, line 2 a row, line 3 blank, lines 4-5 one row with a quoted line break, line 6 a row
    path = _write(tmp_path, f'\ufeff{HEADER},split\n01,7,00,view,is this PA view?,test\n\n'
                            f'02,7,01,view,"is this\nAP view?",test\n03,7,02,view,which view is this image taken?,\n')
    frame = read_question_file(path)
    assert frame.index.name == "line" and list(frame.index) == [2, 4, 6]
    assert list(frame["study_id"]) == ["01", "02", "03"]  # leading zeros kept
    assert frame.loc[4, "question"] == "is this\nAP view?" and frame.loc[6, "split"] == ""
    assert list(frame.columns) == [*HEADER.split(","), "split"]


def test_the_release_layout_with_a_pandas_index_column_is_read(tmp_path):
    """mimic_pair_questions.csv as its public description shows it: study_id, subject_id, ref_id,
    question_type, question, answer, split, here after an unnamed index column (a frame saved with its index)."""
    path = _write(tmp_path, ",study_id,subject_id,ref_id,question_type,question,answer,split\n"
                            "0,52000001,19000001,51000001,abnormality,what abnormalities are seen in this image?,"
                            '"pleural effusion, atelectasis",train\n'
                            "1,52000001,19000001,51000001,difference,what has changed compared to the reference "
                            'image?,"the main image has additional findings of edema, and pneumonia than the '
                            'reference image. ",test\n')
    frame = read_question_file(path, ANSWER_COLUMNS)
    assert list(frame.columns) == ["", *ANSWER_COLUMNS, "split"]
    assert list(frame["ref_id"]) == ["51000001", "51000001"] and list(frame["split"]) == ["train", "test"]
    assert frame.loc[2, "answer"] == "pleural effusion, atelectasis"
    assert frame.loc[3, "answer"].endswith("than the reference image. ")


def test_a_header_only_file_has_no_rows(tmp_path):
    assert read_question_file(_write(tmp_path, HEADER + "\n")).empty


@pytest.mark.parametrize("text, required, record, field, words", [
    ("study_id,subject_id,question\n1,2,q\n", None, "line 1", "ref_id", "missing"),
    (HEADER + "\n1,2,3,view,is this PA view?\n", ANSWER_COLUMNS, "line 1", "answer", "missing"),
    (HEADER + ",study_id\n1,2,3,view,q,1\n", None, "line 1", "study_id", "twice"),
    (HEADER + '\n1,2,3,view,"a\nb"\n4,5,6,view\n', None, "line 4", None, "4 fields, but the header has 5"),
    (HEADER + "\n1,2,3,view,q,extra\n", None, "line 2", None, "6 fields"),
    ("", None, None, None, "empty file"),
])
def test_unusable_files_name_file_line_and_field(tmp_path, text, required, record, field, words):
    path = _write(tmp_path, text)
    with pytest.raises(QuestionFileError) as err:
        read_question_file(path, *(required,) if required else ())
    assert (err.value.file, err.value.record, err.value.field) == (str(path), record, field)
    assert words in err.value.reason


def test_unreadable_bytes_and_missing_files_are_question_file_errors(tmp_path):
    with pytest.raises(QuestionFileError, match="not UTF-8"):
        read_question_file(_write(tmp_path, HEADER + "\n1,2,3,view,caf\xe9\n", encoding="latin-1"))
    with pytest.raises(QuestionFileError, match="cannot be read") as err:
        read_question_file(tmp_path / "absent.csv")
    assert err.value.file == str(tmp_path / "absent.csv")
