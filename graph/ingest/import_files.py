"""The CSV files and the command of ``neo4j-admin database import full``: one file per node label and per
relationship type and end labels, each with its header line, written row by row.

Format (Neo4j Operations Manual, "Import", CSV header format, for 5.26): node files start with
``<key>:ID(<Label>)``, so the key is stored as a property and ids live in one space per label;
relationship files with ``:START_ID(<Label>)`` and ``:END_ID(<Label>)``. Rows are written by pyarrow's CSV
writer (:class:`RowWriter`): every text, date-time and array is quoted (RFC 4180, inner quotes doubled), so an
empty string stays an empty string; numbers and booleans are bare; a missing value is an
empty unquoted field, which the importer leaves unset, as Cypher leaves a null. Arrays are joined with U+001F (a control
character no input text holds, checked). The importer cannot store an empty array (neo4j/neo4j#13566), so
the rows never hold one (see graph.longitudinal.derived_rows). Files with a line break inside a value are passed to
``--multiline-fields`` (format v2), the others are read with the faster single-line parser.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
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


def _array(v: Any, kind: str) -> None:
    """Check one array value (``kind``: string[] or double[]).

    Raises:
        TypeError: not a non-empty list of texts (or numbers), a text holding the delimiter, or a number
            that is not finite.
    """
    what = "numbers" if kind == DOUBLES else "texts"
    if v.__class__ is not list or not v or not {*map(type, v)} <= ({float, int} if kind == DOUBLES else {str}):
        raise TypeError(f"expected a non-empty list of {what}, got {v!r}")
    if kind == DOUBLES and not all(map(math.isfinite, v)):
        raise TypeError(f"expected finite numbers, got {v!r}")
    if kind == STRINGS and any(ARRAY_DELIMITER in x for x in v):
        raise TypeError(f"a list element holds the array delimiter U+001F: {v!r}")


def _locate(rows: Sequence[tuple[Any, ...]], kinds: Sequence[str], error: Exception) -> _BadValue:
    """The first value of ``rows`` the importer would misread, as a :class:`_BadValue` naming its row
    (checked value by value in Python: only once Arrow refused the rows or a check over them failed)."""
    for n, row in enumerate(rows):
        for value, kind in zip(row, kinds, strict=True):
            if value is None:
                continue
            accepted, expected = _ACCEPTS[kind]
            if type(value) not in accepted:
                return _BadValue(n, f"{expected}, got {value!r}")
            try:
                if kind in (STRINGS, DOUBLES):
                    _array(value, kind)
                elif kind == DOUBLE and not math.isfinite(value):
                    raise TypeError(f"expected a finite number, got {value!r}")
            except TypeError as exc:
                return _BadValue(n, str(exc))
    return _BadValue(0, str(error))


# How each type goes through Arrow: its CSV writer's ``needed`` quoting quotes every text (RFC 4180, inner quotes
# doubled; an empty text stays an empty text), writes numbers and booleans bare, and a null as an empty unquoted
# field, which the importer leaves unset. Date-times are their ISO text; arrays are joined with the delimiter.
_ARROW_TYPES = {STRING: pa.string(), LOCALDATETIME: pa.string(), LONG: pa.int64(), DOUBLE: pa.float64(),
                BOOLEAN: pa.bool_(), STRINGS: pa.list_(pa.string()), DOUBLES: pa.list_(pa.float64())}
_CSV_OPTIONS = pa_csv.WriteOptions(include_header=False, quoting_style="needed", batch_size=1 << 16)


class RowWriter:
    """The lines of one import file's rows, written by pyarrow: rows (tuples of the columns' values) become one
    Arrow struct array (the values converted and type-checked in C++), its columns are checked and arrays
    joined with Arrow's compute functions, and Arrow's CSV writer writes them. No Python runs per value but
    the check of the integer columns (Arrow would truncate a float): a call per value in Python was a quarter
    of the files stage on the NIH cohort (issue 36).

    Args:
        kinds: the columns' types (graph/schema.yaml's).
    """

    def __init__(self, kinds: Sequence[str]):
        self.kinds = tuple(kinds)
        self._struct = pa.struct([(str(n), _ARROW_TYPES[kind]) for n, kind in enumerate(self.kinds)])
        self._longs = [itemgetter(n) for n, kind in enumerate(self.kinds) if kind == LONG]

    def lines(self, rows: Sequence[tuple[Any, ...]]) -> bytes:
        """The UTF-8 text of ``rows``, each line with its newline.

        Raises:
            _BadValue: a value the importer would misread (of another type than its column's, an empty
                array, a text holding the array delimiter, a number that is not finite), naming its row.
        """
        try:
            if any(not _LONG_TYPES.issuperset(map(type, map(read, rows))) for read in self._longs):
                raise TypeError("expected an integer")
            batch = pa.RecordBatch.from_struct_array(pa.array(rows, type=self._struct))
            arrays = [self._column(batch.column(n), kind) for n, kind in enumerate(self.kinds)]
        except (TypeError, ValueError, OverflowError, pa.ArrowException) as exc:
            raise _locate(rows, self.kinds, exc) from None
        out = pa.BufferOutputStream()
        pa_csv.write_csv(pa.RecordBatch.from_arrays(arrays, names=list(self._struct.names)), out, _CSV_OPTIONS)
        return out.getvalue().to_pybytes()

    @staticmethod
    def _column(column: pa.Array, kind: str) -> pa.Array:
        """One converted column as the CSV writer takes it (arrays joined); ValueError where the importer
        would misread it."""
        if kind in (DOUBLE, DOUBLES):
            values = pc.list_flatten(column) if kind == DOUBLES else column
            if pc.any(pc.invert(pc.is_finite(values))).as_py():
                raise ValueError("a number that is not finite")
        if kind not in (STRINGS, DOUBLES):
            return column
        if pc.any(pc.equal(pc.list_value_length(column), 0)).as_py():
            raise ValueError("an empty list")
        if kind == DOUBLES:
            return pc.binary_join(pc.cast(column, pa.list_(pa.string())), ARRAY_DELIMITER)
        if pc.any(pc.match_substring(pc.list_flatten(column), ARRAY_DELIMITER)).as_py():
            raise ValueError("a list element holds the array delimiter")
        return pc.binary_join(column, ARRAY_DELIMITER)


_LONG_TYPES = frozenset({int, type(None)})


@dataclass(frozen=True)
class Listing:
    """One written import file as the command names it: ``group`` is ``nodes=<Label>`` or
    ``relationships=<TYPE>``. Files of the same name share their header (each starts with it) and are
    named together; one type's relationships between other labels are another file name (other ids)."""

    group: str
    path: Path
    rows: int
    multiline: bool


class CsvFile:
    """One import file of ``group`` (see :class:`Listing`): a header, then one line per row. ``columns``
    are (header field, row key, type); a row is a dict, a missing or None value an empty field."""

    def __init__(self, group: str, path: Path, columns: list[tuple[str, str, str]]):
        self.group = group
        self.path = path
        self.rows = 0
        self.multiline = False
        self._keys = [key for _, key, _ in columns]
        self._writer = RowWriter([kind for _, _, kind in columns])
        self._known = set(self._keys)
        # a row's values in one call (a tuple even for one column)
        self._items = itemgetter(*self._keys) if len(self._keys) > 1 else lambda row: (row[self._keys[0]],)
        self._attrs = attrgetter(*self._keys) if len(self._keys) > 1 else lambda rec: (getattr(rec, self._keys[0]),)
        self._record_types: set[type] = set()
        self._out: BinaryIO = open(path, "wb", buffering=1 << 20)  # Arrow's UTF-8 as it comes
        self._out.write((",".join(header for header, _, _ in columns) + "\n").encode("utf-8"))

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
            values = list(map(self._items, rows))
        except KeyError:  # a row without some properties
            values = [tuple(map(row.get, self._keys)) for row in rows]
        self._write_values(rows, values)

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
            values = list(map(self._attrs, records))
        except AttributeError as exc:
            raise ImportFileError(f"{self.path.name}: row {records[0]!r}: {exc}") from None
        self._write_values(records, values)

    def _write_values(self, rows: Sequence[Any], values: Sequence[tuple[Any, ...]]) -> None:
        """Write rows given as tuples of their columns' values (``rows``: what they came from, for errors)."""
        if not values:
            return
        try:
            text = self._writer.lines(values)
        except _BadValue as exc:
            self._write_values(rows[:exc.index], values[:exc.index])
            raise ImportFileError(f"{self.path.name}: row {rows[exc.index]!r}: {exc}") from None
        self._append_text(text, len(values))

    def _append_text(self, text: bytes, rows: int) -> None:
        """Write ``rows`` lines (``text``, each line with its newline); a line break inside a value marks
        the file multiline."""
        if not rows:
            return
        if not self.multiline and (b"\r" in text or text.count(b"\n") != rows):
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
        self._write_values(pairs, pairs)

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


def import_arguments(database: str, files: Iterable[Listing], report_file: Path, threads: int | None = None) -> list[str]:
    """The arguments of ``neo4j-admin`` for ``database import full`` of ``files`` (what follows
    ``org.neo4j.cli.AdminTool``, the class behind ``bin/neo4j-admin``, which
    :meth:`graph.runtime.server.LocalNeo4jServer.import_database` runs), Neo4j 5.26 syntax: the database
    name right after ``full`` (required from 5.19), ``--overwrite-destination`` (the caller has checked
    that the database holds no data), one ``--nodes`` / ``--relationships`` per group listing its files
    (each with its header, the later ones skipped by ``--auto-skip-subsequent-headers``). ``threads``: the
    importer's worker threads (default twice the cores); more than cores pays while it waits on its files (NIH
    cohort on 2 cores: 30 s with 4 threads, 35 s with the default 2). ``--verbose``: a failure's log then names
    its cause.
    """
    threads = threads or 2 * (os.cpu_count() or 2)
    groups: dict[str, list[Listing]] = {}
    for f in files:
        groups.setdefault(f.path.name, []).append(f)
    cmd = ["database", "import", "full", database,
           "--overwrite-destination=true", f"--array-delimiter=U+{ord(ARRAY_DELIMITER):04X}",
           "--high-parallel-io=on", f"--threads={threads}", f"--report-file={report_file}", "--verbose"]
    if any(len(g) > 1 for g in groups.values()):
        cmd.append("--auto-skip-subsequent-headers=true")
    cmd += [f"--{listed[0].group}={','.join(str(f.path) for f in listed)}" for listed in groups.values()]
    multiline = [str(f.path) for listed in groups.values() for f in listed if f.multiline]
    if multiline:
        cmd += ["--multiline-fields-format=v2", f"--multiline-fields={','.join(multiline)}"]
    return cmd
