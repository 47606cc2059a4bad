"""The shared reader of CSV files whose rows are named by their line (graph.formats.csv_lines): the line
numbers, the caller's error class, and ragged rows raised or handed back. Hand-written files."""

from __future__ import annotations

import pytest

from graph.formats.csv_lines import check_unique_columns, check_width, read_lines
from graph.records import InputError


class _FileError(InputError):
    """A reader's own error class, as diffvqa and mscxrt pass theirs."""


def _write(tmp_path, text: str):
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode())
    return path


def test_rows_keep_their_first_line_and_blank_lines_count(tmp_path):
    path = _write(tmp_path, '\ufeffa,b\n1,2\n\n"x\ny",3\n4,5\n')
    header, lines, records = read_lines(path, "f.csv", _FileError)
    assert header == ["a", "b"] and lines == [2, 4, 6]
    assert records == [["1", "2"], ["x\ny", "3"], ["4", "5"]]


def test_a_ragged_row_is_handed_back_unless_the_widths_must_match(tmp_path):
    path = _write(tmp_path, "a,b\n1,2\n3\n")
    assert read_lines(path, "f.csv", _FileError)[2] == [["1", "2"], ["3"]]
    with pytest.raises(_FileError) as err:
        read_lines(path, "f.csv", _FileError, same_width=True)
    assert (err.value.record, err.value.field) == ("line 3", None)
    assert "1 fields, but the header has 2" in err.value.reason


@pytest.mark.parametrize("data, record, words", [
    (b"", None, "empty file"),
    (b"a,b\n\xff,1\n", None, "not UTF-8"),
    (b"a,b\n1,2\n" + b"x" * 200_000 + b",3\n", "line 3", "not readable as CSV"),  # over csv's field limit
])
def test_an_unusable_file_raises_the_callers_error(tmp_path, data, record, words):
    path = tmp_path / "f.csv"
    path.write_bytes(data)
    with pytest.raises(_FileError) as err:
        read_lines(path, "f.csv", _FileError)
    assert err.value.record == record and words in err.value.reason


def test_a_missing_file_raises_the_callers_error(tmp_path):
    with pytest.raises(_FileError, match="cannot be read"):
        read_lines(tmp_path / "absent.csv", "absent.csv", _FileError)


def test_the_header_checks():
    check_unique_columns(["a", "b"], "f.csv", _FileError)
    with pytest.raises(_FileError) as err:
        check_unique_columns(["b", "a", "b", "a"], "f.csv", _FileError)
    assert (err.value.record, err.value.field) == ("line 1", "a")
    check_width("f.csv", 2, ["a"], ["1"], _FileError)
    with pytest.raises(InputError):
        check_width("f.csv", 2, ["a"], [], InputError)
