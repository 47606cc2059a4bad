"""A batch of import-file rows formatted column by column (issue 36): each column's values are read, checked
and made text by C-level calls over the whole column (``map``, ``set``, ``str.join``), and each line is one
``%`` of a format built for the batch, instead of a Python statement per value. The text is byte for byte
what :func:`graph.ingest.import_files._rows_formatter` writes; any value that formatter would treat
otherwise than plainly (a wrong type, an empty list, a list element holding the array delimiter, a text
holding the stand-in below) makes :func:`format_columns` give up (None), and the caller formats the
batch row by row, which raises the error of the first bad row.

A missing value (None) stands as ``\\x00`` while the lines are built (inside quotes in a text column) and
is removed from the text at the end: an empty unquoted field, as the importer reads a null (Neo4j
Operations Manual, "Import", CSV header format, 5.26). No written text holds ``\\x00`` (checked per
column), so every ``\\x00`` of the text is a stand-in.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter, methodcaller
from typing import Any, Callable, Sequence

from graph.schema import BOOLEAN, LOCALDATETIME, LONG, STRINGS

ARRAY_DELIMITER = "\x1f"
_MISSING = "\x00"
_NONE = type(None)
_AS_TEXT = {None: _MISSING}.get  # value -> itself, None -> the stand-in: map(_AS_TEXT, values, values)
_BOOLEAN_TEXT = {True: "true", False: "false", None: _MISSING}.__getitem__


def column_reader(keys: Sequence[str], access: str) -> Callable[[Sequence[Any]], Sequence[Sequence[Any]]]:
    """A function from rows to their columns (one sequence of values per key, in ``keys``' order).

    Args:
        keys: the rows' keys, in the columns' order.
        access: ``get`` (dicts: a missing key is None), ``attr`` (objects' attributes) or ``index``
            (sequences in the columns' order).

    Returns:
        rows -> columns. ``attr`` raises AttributeError, ``index`` IndexError on a row that lacks one.
    """
    if access == "get":
        getters = [methodcaller("get", key) for key in keys]
        return lambda rows: [list(map(get, rows)) for get in getters]
    whole = attrgetter(*keys) if access == "attr" else itemgetter(*range(len(keys)))
    if len(keys) == 1:
        return lambda rows: [list(map(whole, rows))]
    return lambda rows: list(zip(*map(whole, rows), strict=True)) if rows else [() for _ in keys]


def _cells(values: Sequence[Any], kind: str) -> tuple[str, Sequence[Any], int] | None:
    """(the field's ``%`` format, the values it takes, how many are None) of one column, or None where a
    value needs the row-by-row formatter."""
    types = set(map(type, values))
    nulls = values.count(None) if _NONE in types else 0
    types.discard(_NONE)
    if not types:
        return "", (), 0  # no value in the whole column: an empty field on every line
    if kind == BOOLEAN:
        return ("%s", list(map(_BOOLEAN_TEXT, values)), nulls) if types == {bool} else None
    if kind == LONG:
        return ("%s", list(map(_AS_TEXT, values, values)) if nulls else values, nulls) if types == {int} else None
    if kind == STRINGS:
        if types != {list} or [] in values:
            return None
        # lists are not hashable (no dict lookup): None becomes the stand-in, which joins to itself
        lists = [_MISSING if v is None else v for v in values] if nulls else values
        try:
            texts = list(map(ARRAY_DELIMITER.join, lists))
        except TypeError:
            return None
        if "".join(texts).count(ARRAY_DELIMITER) != sum(map(len, lists)) - len(lists):
            return None
        values = texts
    elif types != {str}:
        return None
    elif nulls:
        values = list(map(_AS_TEXT, values, values))
    blob = "".join(values)
    if blob.count(_MISSING) != nulls:
        return None
    if kind == LOCALDATETIME:
        return "%s", values, nulls
    if '"' in blob:
        values = [v.replace('"', '""') for v in values]
    return '"%s"', values, nulls


def format_columns(columns: Sequence[Sequence[Any]], kinds: Sequence[str]) -> str | None:
    """The lines (each with its newline) of a batch given as columns, or None where a value needs the
    row-by-row formatter.

    Args:
        columns: per column, its values (one per row, every column as long); None is a missing value.
        kinds: per column, its graph/schema.yaml type (string, long, boolean, localdatetime, string[]).

    Returns:
        the text, or None.
    """
    fields, taken, nulls = [], [], 0
    for values, kind in zip(columns, kinds, strict=True):
        cells = _cells(values, kind)
        if cells is None:
            return None
        fields.append(cells[0])
        if cells[0]:
            taken.append(cells[1])
        nulls += cells[2]
    line = ",".join(fields) + "\n"
    text = "".join(map(line.__mod__, zip(*taken, strict=True))) if taken else line * len(columns[0])
    return text.replace('"\x00"', "").replace(_MISSING, "") if nulls else text
