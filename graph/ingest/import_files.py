"""The CSV files and the command of ``neo4j-admin database import full``: one file per node label and per
relationship type and end labels, each with its header line, written row by row.

Format (Neo4j Operations Manual, "Import", CSV header format, for 5.26): node files start with
``<key>:ID(<Label>)``, so the key is stored as a property and ids live in one space per label;
relationship files with ``:START_ID(<Label>)`` and ``:END_ID(<Label>)``. Rows are written by pyarrow's CSV
writer (:func:`format_columns`): every text, date-time, double and array is quoted (RFC 4180, inner quotes
doubled), so an empty string stays an empty string; integers and booleans are bare; a missing value is an
empty unquoted field, which the importer leaves unset, as Cypher leaves a null. Arrays are joined with U+001F (a control
character no input text holds, checked). The importer cannot store an empty array (neo4j/neo4j#13566), so
the rows never hold one (see graph.derived_rows). Files with a line break inside a value are passed to
``--multiline-fields`` (format v2), the others are read with the faster single-line parser.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

import pyarrow as pa
import pyarrow.csv as pa_csv

from graph.errors import CxrkgError
from graph.schema import BOOLEAN, DOUBLE, DOUBLES, LOCALDATETIME, LONG, STRING, STRINGS, GraphSchema, graph_schema

ARRAY_DELIMITER = "\x1f"


class ImportFileError(CxrkgError, ValueError):
    """A row the importer could not read back as written (a value of the wrong type, a property the
    graph schema does not declare, an array element holding the array delimiter)."""


class _BadValue(TypeError):
    """A value its column's type does not take; ``index``: its row among those formatted."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index


_NONE = type(None)
# type -> (the Python types its values may have besides None, what to say of another one)
_ACCEPTS: dict[str, tuple[frozenset[type], str]] = {
    STRING: (frozenset({str, _NONE}), "expected text"),
    LOCALDATETIME: (frozenset({str, _NONE}), "expected an ISO date-time text"),
    LONG: (frozenset({int, _NONE}), "expected an integer"),  # not bool: its type is bool, not int
    DOUBLE: (frozenset({float, int, _NONE}), "expected a number"),
    BOOLEAN: (frozenset({bool, _NONE}), "expected true or false"),
    STRINGS: (frozenset({list, _NONE}), "expected a non-empty list of texts"),
    DOUBLES: (frozenset({list, _NONE}), "expected a non-empty list of numbers"),
}


def _check_types(values: Sequence[Any], kind: str) -> None:
    """Raise :class:`_BadValue` at the first value of ``values`` whose type ``kind`` does not take (one
    set of the column's types in the common case, where all are right)."""
    accepted, expected = _ACCEPTS[kind]
    if not accepted.issuperset(map(type, values)):
        index = next(n for n, v in enumerate(values) if type(v) not in accepted)
        raise _BadValue(index, f"{expected}, got {values[index]!r}")


def _double(v: float | int) -> str:
    if not math.isfinite(v):
        raise TypeError(f"expected a finite number, got {v!r}")
    return repr(float(v))


def _array(v: list[Any], kind: str) -> str:
    """An array's elements joined with the delimiter (``kind``: string[] or double[]).

    Raises:
        TypeError: an empty list, an element of another type, or a text holding the delimiter.
    """
    if kind == DOUBLES:
        if not v or not {*map(type, v)} <= {float, int}:
            raise TypeError(f"expected a non-empty list of numbers, got {v!r}")
        return ARRAY_DELIMITER.join(map(_double, v))
    if not v or not {*map(type, v)} <= {str}:
        raise TypeError(f"expected a non-empty list of texts, got {v!r}")
    joined = ARRAY_DELIMITER.join(v)
    if joined.count(ARRAY_DELIMITER) != len(v) - 1:
        raise TypeError(f"a list element holds the array delimiter U+001F: {v!r}")
    return joined


def _as_text(values: Sequence[Any], kind: str) -> Sequence[Any]:
    """A column as Arrow takes it: doubles and arrays as the texts the importer reads (None stays None),
    any other type as it is (its values' types checked).

    Raises:
        _BadValue: a value of another type than ``kind`` (its row's index among ``values``).
    """
    _check_types(values, kind)
    if kind not in (DOUBLE, STRINGS, DOUBLES):
        return values
    if kind == STRINGS:  # joined inline while every element is text (the common case); the delimiter checked after
        try:
            joined = [None if v is None else ARRAY_DELIMITER.join(v) for v in values]
            given = [v for v in values if v is not None]
            if all(given) and sum(map(len, given)) - len(given) == "".join(filter(None, joined)).count(ARRAY_DELIMITER):
                return joined
        except TypeError:
            pass
    out: list[str | None] = []
    for n, v in enumerate(values):  # a double, a double[], or a string[] the inline join refused
        try:
            out.append(None if v is None else _double(v) if kind == DOUBLE else _array(v, kind))
        except TypeError as exc:
            raise _BadValue(n, str(exc)) from None
    return out


# How each type is handed to Arrow's CSV writer, which quotes every text (RFC 4180, inner quotes doubled) and
# writes integers and booleans bare and a null as an empty unquoted field: texts, date-times (ISO text), doubles
# (Python's shortest round-trip text, ``repr``) and arrays (joined) as text, quoted; the rest as Arrow's own.
_ARROW_TYPES = {STRING: pa.string(), LOCALDATETIME: pa.string(), DOUBLE: pa.string(), STRINGS: pa.string(),
                DOUBLES: pa.string(), LONG: pa.int64(), BOOLEAN: pa.bool_()}
_CSV_OPTIONS = pa_csv.WriteOptions(include_header=False, quoting_style="needed", batch_size=1 << 16)


def format_columns(columns: Sequence[Sequence[Any]], kinds: Sequence[str]) -> str:
    """The lines (each with its newline) of rows given column by column (each column its values, None where
    absent, all of one length; ``kinds`` the columns' types), written by pyarrow's CSV writer (no Python runs
    per value but the type check of each column, a set of its values' types, and the joining of arrays):
    a call per value in Python was a quarter of the files stage on the NIH cohort (issue 36). Arrow's
    ``needed`` quoting quotes every text (an empty one stays an empty text) and leaves a null unquoted and
    empty, which the importer leaves unset; a line break in a text stays inside its quotes.

    Raises:
        _BadValue: a value of another type than its column's (its row's index).
    """
    arrays = [pa.array(_as_text(column, kind), type=_ARROW_TYPES[kind]) for column, kind in zip(columns, kinds,
                                                                                                 strict=True)]
    out = pa.BufferOutputStream()
    pa_csv.write_csv(pa.RecordBatch.from_arrays(arrays, names=[str(n) for n in range(len(arrays))]), out,
                     _CSV_OPTIONS)
    return out.getvalue().to_pybytes().decode("utf-8")


@dataclass(frozen=True)
class Listing:
    """One written import file as the command names it: ``group`` is ``nodes=<Label>`` or
    ``relationships=<TYPE>``. Files of the same name share their header (each starts with it) and are
    named together; one type's relationships between other labels are another file name (other ids)."""

    group: str
    path: Path
    rows: int
    multiline: bool


_START, _END = itemgetter(0), itemgetter(1)


class CsvFile:
    """One import file of ``group`` (see :class:`Listing`): a header, then one line per row. ``columns``
    are (header field, row key, type); a row is a dict, a missing or None value an empty field."""

    def __init__(self, group: str, path: Path, columns: list[tuple[str, str, str]]):
        self.group = group
        self.path = path
        self.rows = 0
        self.multiline = False
        self._keys = [key for _, key, _ in columns]
        self._kinds = [kind for _, _, kind in columns]
        self._known = set(self._keys)
        self._items = [itemgetter(key) for key in self._keys]
        self._attrs = [attrgetter(key) for key in self._keys]
        self._record_types: set[type] = set()
        self._out: TextIO = open(path, "w", encoding="utf-8", newline="", buffering=1 << 20)
        self._out.write(",".join(header for header, _, _ in columns) + "\n")

    def write(self, row: dict[str, Any]) -> None:
        """Append one row.

        Raises:
            ImportFileError: a value of the wrong type, or a key the file has no column for.
        """
        self.write_rows([row])

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        """Append rows (dicts; a missing key is an absent value), in one call.

        Raises:
            ImportFileError: a value of the wrong type, or a key the file has no column for; the rows
                before the first bad one are written.
        """
        if not self._known.issuperset(chain.from_iterable(rows)):  # one pass over every row's keys
            n = next(n for n, row in enumerate(rows) if not self._known.issuperset(row))
            self.write_rows(rows[:n])
            raise ImportFileError(f"{self.path.name}: no column for {sorted(set(rows[n]) - self._known)} "
                                  "(graph/schema.yaml declares every stored property)")
        try:
            columns = [list(map(read, rows)) for read in self._items]  # a column in one call, rows full
        except KeyError:
            columns = [[row.get(key) for row in rows] for key in self._keys]  # a row without some properties
        self._write_columns(rows, columns)

    def write_record(self, record: Any) -> None:
        """Append one row from a record object whose attributes are the columns' keys (a dataclass of the
        graph model: each of its fields must have a column; a None attribute is an empty field).

        Raises:
            ImportFileError: a value of the wrong type, or a field the file has no column for.
        """
        self.write_records((record,))

    def write_records(self, records: Iterable[Any]) -> None:
        """Append rows from record objects, as :meth:`write_record` each in turn, in one call.

        Raises:
            ImportFileError: as :meth:`write_record`; the records before the first bad one are written.
        """
        records = records if isinstance(records, (list, tuple)) else list(records)
        for kind in {type(r) for r in records} - self._record_types:
            extra = sorted(set(getattr(kind, "__dataclass_fields__", ())) - self._known)
            if extra:
                raise ImportFileError(f"{self.path.name}: no column for {extra} (graph/schema.yaml declares "
                                      "every stored property)")
            self._record_types.add(kind)
        try:
            columns = [list(map(read, records)) for read in self._attrs]
        except AttributeError as exc:
            raise ImportFileError(f"{self.path.name}: row {records[0]!r}: {exc}") from None
        self._write_columns(records, columns)

    def _write_columns(self, rows: Sequence[Any], columns: list[list[Any]]) -> None:
        """Write rows given column by column (``rows``: what they came from, for errors)."""
        if not rows:
            return
        try:
            text = format_columns(columns, self._kinds)
        except _BadValue as exc:
            self._write_columns(rows[:exc.index], [column[:exc.index] for column in columns])
            raise ImportFileError(f"{self.path.name}: row {rows[exc.index]!r}: {exc}") from None
        self._append_text(text, len(rows))

    def _append_text(self, text: str, rows: int) -> None:
        """Write ``rows`` lines (``text``, each line with its newline); a line break inside a value marks
        the file multiline."""
        if not rows:
            return
        if not self.multiline and ("\r" in text or text.count("\n") != rows):
            self.multiline = True
        self._out.write(text)
        self.rows += rows

    def write_pair(self, start: str, end: str) -> None:
        """Append a relationship row without properties: ``start`` and ``end`` keys (texts)."""
        self.write_pairs([(start, end)])

    def write_pairs(self, pairs: list[tuple[str, str]]) -> None:
        """Append relationship rows without properties, (start key, end key) each (texts).

        Raises:
            ImportFileError: a key that is not text (the pairs before it are written).
        """
        self._write_columns(pairs, [list(map(_START, pairs)), list(map(_END, pairs))])

    def flush(self) -> None:
        self._out.flush()

    def close(self) -> None:
        self._out.close()


def node_columns(label: str, schema: GraphSchema | None = None) -> list[tuple[str, str, str]]:
    """(header field, row key, type) of the ``label`` nodes' file: the key as ``<key>:ID(<Label>)``, then
    every property both loaders write, in the order graph/schema.yaml declares them."""
    schema = schema or graph_schema()
    key = schema.node_keys()[label]
    return [(f"{key}:ID({label})", key, STRING),
            *((f"{p}:{t}", p, t) for p, t in schema.loaded_properties(label).items())]


def relationship_columns(rel_type: str, start: str, end: str,
                         schema: GraphSchema | None = None) -> list[tuple[str, str, str]]:
    """(header field, row key, type) of the file of ``(:start)-[:rel_type]->(:end)`` relationships: the two
    ends' ids (row keys ``start`` and ``end``), then the type's properties as graph/schema.yaml declares them."""
    schema = schema or graph_schema()
    return [(f":START_ID({start})", "start", STRING), (f":END_ID({end})", "end", STRING),
            *((f"{p}:{t}", p, t) for p, t in schema.loaded_properties(rel_type).items())]


@dataclass
class ImportFiles:
    """The files of one import, by label and relationship type, as the command names them; their columns
    come from ``schema`` (default: the packaged graph/schema.yaml)."""

    folder: Path
    nodes: dict[str, CsvFile] = field(default_factory=dict)
    relationships: dict[tuple[str, str, str], CsvFile] = field(default_factory=dict)
    schema: GraphSchema = field(default_factory=graph_schema)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

    def node_file(self, label: str) -> CsvFile:
        """The file of ``label`` nodes (created on first use)."""
        if label not in self.nodes:
            self.nodes[label] = CsvFile(f"nodes={label}", self.folder / f"nodes_{label}.csv",
                                        node_columns(label, self.schema))
        return self.nodes[label]

    def relationship_file(self, rel_type: str, start: str, end: str) -> CsvFile:
        """The file of ``(:start)-[:rel_type]->(:end)`` relationships (created on first use); rows are
        {"start": key, "end": key, **properties}."""
        name = (rel_type, start, end)
        if name not in self.relationships:
            self.relationships[name] = CsvFile(f"relationships={rel_type}",
                                               self.folder / f"rels_{rel_type}_{start}_{end}.csv",
                                               relationship_columns(rel_type, start, end, self.schema))
        return self.relationships[name]

    def node_rows(self, label: str, rows: list[dict[str, Any]]) -> None:
        """Append rows (dicts) to the ``label`` nodes' file (:meth:`CsvFile.write_rows`); none: no file."""
        if rows:
            self.node_file(label).write_rows(rows)

    def node_records(self, label: str, records: list[Any]) -> None:
        """Append record objects to the ``label`` nodes' file (:meth:`CsvFile.write_records`); none: no file."""
        if records:
            self.node_file(label).write_records(records)

    def relationship_rows(self, rel_type: str, start: str, end: str, rows: list[dict[str, Any]]) -> None:
        """Append rows ({"start", "end", **properties}) to a relationships' file; none: no file."""
        if rows:
            self.relationship_file(rel_type, start, end).write_rows(rows)

    def relationship_pairs(self, rel_type: str, start: str, end: str, pairs: list[tuple[str, str]]) -> None:
        """Append (start key, end key) rows without properties to a relationships' file; none: no file."""
        if pairs:
            self.relationship_file(rel_type, start, end).write_pairs(pairs)

    def flush(self) -> None:
        """Hand everything written so far to the operating system (the files stay open)."""
        for f in [*self.nodes.values(), *self.relationships.values()]:
            f.flush()

    def close(self) -> None:
        for f in [*self.nodes.values(), *self.relationships.values()]:
            f.close()

    def listing(self) -> list[Listing]:
        """The files written so far (with at least one row)."""
        return [Listing(f.group, f.path, f.rows, f.multiline)
                for f in [*self.nodes.values(), *self.relationships.values()] if f.rows]

    @property
    def elements(self) -> int:
        """Rows written: nodes plus relationships."""
        return sum(f.rows for f in [*self.nodes.values(), *self.relationships.values()])


def keep_files(files: Iterable[Listing], folder: Path, to: Path) -> None:
    """Move the import files' ``folder`` to ``to`` (which must not exist) and write ``to/listing.json``:
    each file of ``files`` (all under ``folder``) with its group, rows and line-break flag, paths relative
    to ``to``; :func:`read_listing` reads it back. For tools that load the same files elsewhere (the load
    benchmark's Kuzu peer)."""
    rows = [{"group": f.group, "path": str(f.path.relative_to(folder)), "rows": f.rows, "multiline": f.multiline}
            for f in files]
    shutil.move(folder, to)
    (to / "listing.json").write_text(json.dumps(rows, indent=0), encoding="utf-8")


def read_listing(folder: Path) -> list[Listing]:
    """The files a :func:`keep_files` folder holds, as the load listed them (paths under ``folder``)."""
    rows = json.loads((folder / "listing.json").read_text(encoding="utf-8"))
    return [Listing(r["group"], folder / r["path"], r["rows"], r["multiline"]) for r in rows]


def import_command(java: str, classpath: str, database: str, files: Iterable[Listing], report_file: Path,
                   jvm_options: Iterable[str] = (), threads: int = 4) -> list[str]:
    """The argument list of ``neo4j-admin database import full`` run from the project's own jars
    (``org.neo4j.cli.AdminTool``, the class behind ``bin/neo4j-admin``), Neo4j 5.26 syntax: the database
    name right after ``full`` (required from 5.19), ``--overwrite-destination`` (the caller has checked
    that the database holds no data), one ``--nodes`` / ``--relationships`` per group listing its files
    (each with its header, the later ones skipped by ``--auto-skip-subsequent-headers``). ``threads``: the
    importer's worker threads; more than cores pays while it waits on its files (NIH cohort on 2 cores:
    30 s with 4 threads, 35 s with the default 2). ``--verbose``: a failure's log then names its cause.
    The tool also needs ``NEO4J_HOME`` and ``NEO4J_CONF`` in its environment.
    """
    groups: dict[str, list[Listing]] = {}
    for f in files:
        groups.setdefault(f.path.name, []).append(f)
    cmd = [java, *jvm_options, "-cp", classpath, "org.neo4j.cli.AdminTool", "database", "import", "full", database,
           "--overwrite-destination=true", f"--array-delimiter=U+{ord(ARRAY_DELIMITER):04X}",
           "--high-parallel-io=on", f"--threads={threads}", f"--report-file={report_file}", "--verbose"]
    if any(len(g) > 1 for g in groups.values()):
        cmd.append("--auto-skip-subsequent-headers=true")
    cmd += [f"--{listed[0].group}={','.join(str(f.path) for f in listed)}" for listed in groups.values()]
    multiline = [str(f.path) for listed in groups.values() for f in listed if f.multiline]
    if multiline:
        cmd += ["--multiline-fields-format=v2", f"--multiline-fields={','.join(multiline)}"]
    return cmd
