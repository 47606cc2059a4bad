"""The CSV files and the command of ``neo4j-admin database import full``: one file per node label and per
relationship type and end labels, each with its header line, written row by row.

Format (Neo4j Operations Manual, "Import", CSV header format, for 5.26): node files start with
``<key>:ID(<Label>)``, so the key is stored as a property and ids live in one space per label;
relationship files with ``:START_ID(<Label>)`` and ``:END_ID(<Label>)``. Every string is quoted (RFC 4180,
inner quotes doubled), so an empty string stays an empty string; a missing value is an empty unquoted
field, which the importer leaves unset, as Cypher leaves a null. Arrays are joined with U+001F (a control
character no input text holds, checked). The importer cannot store an empty array (neo4j/neo4j#13566), so
the rows never hold one (see graph.derived_rows). Files with a line break inside a value are passed to
``--multiline-fields`` (format v2), the others are read with the faster single-line parser.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from graph.schema import BOOLEAN, LOCALDATETIME, LONG, STRING, STRINGS, GraphSchema, graph_schema

ARRAY_DELIMITER = "\x1f"


class ImportFileError(ValueError):
    """A row the importer could not read back as written (a value of the wrong type, a property the
    graph schema does not declare, an array element holding the array delimiter)."""


def _string(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected text, got {v!r}")
    return '"' + v.replace('"', '""') + '"'


def _long(v: Any) -> str:
    if type(v) is not int:
        raise TypeError(f"expected an integer, got {v!r}")
    return str(v)


def _boolean(v: Any) -> str:
    if type(v) is not bool:
        raise TypeError(f"expected true or false, got {v!r}")
    return "true" if v else "false"


def _localdatetime(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected an ISO date-time text, got {v!r}")
    return v


def _strings(v: Any) -> str:
    if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
        raise TypeError(f"expected a non-empty list of texts, got {v!r}")
    if any(ARRAY_DELIMITER in x for x in v):
        raise TypeError(f"a list element holds the array delimiter U+001F: {v!r}")
    return _string(ARRAY_DELIMITER.join(v))


def _join(items: list) -> str | None:
    """The items joined by the array delimiter, or None when one is not text."""
    try:
        return ARRAY_DELIMITER.join(items)
    except TypeError:
        return None


_FORMAT: dict[str, Callable[[Any], str]] = {STRING: _string, LONG: _long, BOOLEAN: _boolean,
                                            LOCALDATETIME: _localdatetime, STRINGS: _strings}


def _row_formatter(columns: list[tuple[str, str, str]], values: bool = False) -> Callable[[Any], str]:
    """A function that turns one row into its line (without the newline), generated once per file so that
    a row costs one call: on the NIH cohort (3.2 million node rows) the generic loop over per-column
    formatters was a quarter of the profile of writing the files, and generated formatters cut the workers'
    time by 8 %. Texts, the common case, are quoted inline; every other value goes through its type's
    formatter (which raises TypeError on a wrong type). Integers, date-times and lists of texts, the next
    most common (twelve integers per bounding box), are inlined too; a value they do not take goes to its
    formatter, which raises."""
    lines = ["def format_row(row):"]
    for n, (_, key, kind) in enumerate(columns):
        lines.append(f"    v = row[{n}]" if values else f"    v = row.get({key!r})")
        lines.append(f"    if v is None: f{n} = ''")
        if kind == STRING:
            lines.append(f"    elif v.__class__ is str: f{n} = '\"' + v.replace('\"', '\"\"') + '\"'")
        elif kind == LONG:
            lines.append(f"    elif v.__class__ is int: f{n} = str(v)")
        elif kind == LOCALDATETIME:
            lines.append(f"    elif v.__class__ is str: f{n} = v")
        elif kind == STRINGS:  # joined when every item is text and none holds the delimiter, else _strings
            lines.append(f"    elif v.__class__ is list and v and (j := _join(v)) is not None and "
                         f"j.count({ARRAY_DELIMITER!r}) == len(v) - 1: f{n} = '\"' + j.replace('\"', '\"\"') + '\"'")
        lines.append(f"    else: f{n} = format_{n}(v)")
    lines.append(f"    return ','.join(({''.join(f'f{n}, ' for n in range(len(columns)))}))")
    scope: dict[str, Any] = {f"format_{n}": _FORMAT[kind] for n, (_, _, kind) in enumerate(columns)}
    scope["_join"] = _join
    exec("\n".join(lines), scope)  # noqa: S102 - the source is built above from the column table only
    return scope["format_row"]


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
        self._format = _row_formatter(columns)
        self._columns = columns
        self._known = {key for _, key, _ in columns}
        self._record_format: Callable[[Any], str] | None = None
        self._record_types: set[type] = set()
        self._out: TextIO = open(path, "w", encoding="utf-8", newline="", buffering=1 << 20)
        self._out.write(",".join(header for header, _, _ in columns) + "\n")

    def write(self, row: dict[str, Any]) -> None:
        """Append one row.

        Raises:
            ImportFileError: a value of the wrong type, or a key the file has no column for.
        """
        try:
            line = self._format(row)
        except TypeError as exc:
            raise ImportFileError(f"{self.path.name}: row {row!r}: {exc}") from None
        if len(row) > len(self._known) or not self._known.issuperset(row):
            extra = sorted(set(row) - self._known)
            raise ImportFileError(f"{self.path.name}: no column for {extra} (graph/schema.yaml declares "
                                  "every stored property)")
        self._append(line)

    def write_record(self, record: Any) -> None:
        """Append one row from a record object whose attributes are the columns' keys (a dataclass of the
        graph model: each of its fields must have a column; a None attribute is an empty field).

        Raises:
            ImportFileError: a value of the wrong type, or a field the file has no column for.
        """
        if type(record) not in self._record_types:
            extra = sorted(set(getattr(record, "__dataclass_fields__", ())) - self._known)
            if extra:
                raise ImportFileError(f"{self.path.name}: no column for {extra} (graph.ingest.import_files lists "
                                      "every stored property)")
            self._record_types.add(type(record))
        if self._record_format is None:
            read = attrgetter(*(key for _, key, _ in self._columns))
            formatter = _row_formatter(self._columns, values=True)
            self._record_format = lambda r: formatter(read(r))
        try:
            line = self._record_format(record)
        except (TypeError, AttributeError) as exc:
            raise ImportFileError(f"{self.path.name}: row {record!r}: {exc}") from None
        self._append(line)

    def _append(self, line: str) -> None:
        if not self.multiline and ("\n" in line or "\r" in line):
            self.multiline = True
        self._out.write(line + "\n")
        self.rows += 1

    def write_pair(self, start: str, end: str) -> None:
        """Append a relationship row without properties: ``start`` and ``end`` keys (texts). The common
        row (most relationships carry no property), written without the per-column formatting."""
        line = '"' + start.replace('"', '""') + '","' + end.replace('"', '""') + '"\n'
        if not self.multiline and ("\n" in line[:-1] or "\r" in line):
            self.multiline = True
        self._out.write(line)
        self.rows += 1

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
