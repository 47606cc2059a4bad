"""CSV files whose rows are named by their line, as an editor shows it: the one reader of the benchmark files
that name a bad row by line (Medical-Diff-VQA's questions, :mod:`graph.formats.diffvqa`; MS-CXR-T's pairs,
:mod:`graph.formats.mscxrt`).

Numbering: the header is line 1. Blank lines count (they are lines, skipped as rows), and a row whose quoted
cell spans lines is named by the line it starts on. Each reader raises its own error class (a subclass of
:class:`graph.records.InputError`), passed in as ``error``.
"""

from __future__ import annotations

import csv
from pathlib import Path

from graph.records import InputError


def line_record(line: int) -> str:
    """How a row is named in errors and rejections: ``line N``."""
    return f"line {line}"


def check_width(source: str, line: int, header: list[str], record: list[str], error: type[InputError]) -> None:
    """Raise unless ``record`` has as many fields as ``header``.

    Raises:
        error: names ``source`` and ``line N``, no field.
    """
    if len(record) != len(header):
        raise error(source, line_record(line), None, f"{len(record)} fields, but the header has {len(header)}")


def check_unique_columns(header: list[str], source: str, error: type[InputError]) -> None:
    """Raise if ``header`` names a column twice.

    Raises:
        error: names ``source``, line 1 and the first such column in sorted order.
    """
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise error(source, line_record(1), twice[0], "the header names this column twice")


def read_lines(path: Path, source: str, error: type[InputError],
               same_width: bool = False) -> tuple[list[str], list[int], list[list[str]]]:
    """(the header as written, each row's first line, the rows) of a UTF-8 CSV (a byte-order mark allowed),
    blank lines skipped, every cell a string as written.

    Args:
        path: the file.
        source: its name in errors.
        error: the reader's error class.
        same_width: raise at the first row whose field count is not the header's (:func:`check_width`);
            otherwise such a row is returned as it is, for the caller to reject alone.

    Raises:
        error: the file cannot be opened or decoded, is empty (no header line) or is not CSV (``line N`` where
            the parser stopped); with ``same_width``, a row of another width.
    """
    lines: list[int] = []
    records: list[list[str]] = []
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                raise error(source, None, None, "empty file: no header line")
            end = reader.line_num
            for record in reader:
                start, end = end + 1, reader.line_num
                if not record:  # a blank line
                    continue
                if same_width and len(record) != len(header):
                    check_width(source, start, header, record, error)
                lines.append(start)
                records.append(record)
    except OSError as exc:
        raise error(source, None, None, f"cannot be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise error(source, None, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except csv.Error as exc:
        raise error(source, line_record(reader.line_num), None, f"not readable as CSV ({exc})") from exc
    return header, lines, records
