"""The column-by-column formatting of import-file rows (graph.ingest.csv_columns) writes exactly what the
row-by-row formatter writes, and hands every batch it cannot format plainly back to it (issue 36)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from graph.ingest.csv_columns import column_reader, format_columns
from graph.ingest.import_files import CsvFile, ImportFileError, _rows_formatter
from graph.schema import BOOLEAN, LOCALDATETIME, LONG, STRING, STRINGS

COLUMNS = [("id:ID(T)", "id", STRING), ("n:long", "n", LONG), ("flag:boolean", "flag", BOOLEAN),
           ("at:localdatetime", "at", LOCALDATETIME), ("names:string[]", "names", STRINGS),
           ("text:string", "text", STRING), ("never:string", "never", STRING)]
KINDS = [kind for _, _, kind in COLUMNS]
KEYS = [key for _, key, _ in COLUMNS]
TEXTS = ["a", "", 'say "hi"', "é ü", "x,y", "line\nbreak", "cr\rhere", "%s %d", "None", "\\"]


def _random_row(rng: random.Random) -> dict:
    row = {"id": f"r{rng.randrange(10**6)}", "never": None}
    maybe = {"n": lambda: rng.choice([0, -3, 2**40, 7]), "flag": lambda: rng.choice([True, False]),
             "at": lambda: "2020-01-02T03:04:05", "names": lambda: rng.sample(TEXTS, rng.randint(1, 3)),
             "text": lambda: rng.choice(TEXTS)}
    for key, make in maybe.items():
        if rng.random() < 0.7:
            row[key] = make()
        elif rng.random() < 0.5:
            row[key] = None  # else: the key is missing, which is None too
    return row


def _row_by_row(rows: list) -> str:
    return "".join(line + "\n" for line in _rows_formatter(COLUMNS)(rows))


@pytest.mark.parametrize("seed", range(20))
def test_columns_write_what_rows_write(seed):
    rng = random.Random(seed)
    rows = [_random_row(rng) for _ in range(rng.randint(1, 40))]
    text = format_columns(column_reader(KEYS, "get")(rows), KINDS)
    assert text is not None and text == _row_by_row(rows)


@dataclass
class _Record:
    id: str
    n: int | None
    flag: bool | None
    at: str | None
    names: list | None
    text: str | None
    never: str | None = None


def test_records_and_sequences_are_read_by_attribute_and_index():
    rows = [_random_row(random.Random(seed)) for seed in range(30)]
    records = [_Record(**{k: r.get(k) for k in KEYS}) for r in rows]
    tuples = [tuple(r.get(k) for k in KEYS) for r in rows]
    want = _row_by_row(rows)
    assert format_columns(column_reader(KEYS, "attr")(records), KINDS) == want
    assert format_columns(column_reader(KEYS, "index")(tuples), KINDS) == want


@pytest.mark.parametrize("key, value", [("n", True), ("n", "3"), ("flag", 1), ("at", 5), ("names", []),
                                        ("names", ["a\x1fb"]), ("names", ("a",)), ("names", [1]),
                                        ("text", 3), ("text", "nul\x00"), ("names", ["nul\x00"])])
def test_a_value_the_rows_formatter_treats_otherwise_is_handed_back(key, value):
    rows = [{"id": "a", "text": "t"}, {"id": "b", key: value}]
    assert format_columns(column_reader(KEYS, "get")(rows), KINDS) is None


def test_a_bad_batch_still_raises_the_error_of_its_first_bad_row(tmp_path):
    f = CsvFile("nodes=T", tmp_path / "t.csv", COLUMNS)
    f.write_rows([{"id": "a", "n": 1}, {"id": "b", "n": 1}])
    with pytest.raises(ImportFileError, match="expected an integer"):
        f.write_rows([{"id": "c", "n": 2}, {"id": "d", "n": "2"}, {"id": "e"}])
    f.close()
    assert (tmp_path / "t.csv").read_text().splitlines()[1:] == ['"a",1,,,,,', '"b",1,,,,,', '"c",2,,,,,']
