"""The CSV files and the command of ``neo4j-admin database import full``: one file per node label and per
relationship type and end labels, each with its header line, written row by row.

Format (Neo4j Operations Manual, "Import", CSV header format, for 5.26): node files start with
``<key>:ID(<Label>)``, so the key is stored as a property and ids live in one space per label;
relationship files with ``:START_ID(<Label>)`` and ``:END_ID(<Label>)``. Every string is quoted (RFC 4180,
inner quotes doubled), so an empty string stays an empty string; a missing value is an empty unquoted
field, which the importer leaves unset, as Cypher leaves a null. Arrays are joined with U+001F (a control
character no input text holds, checked). The importer cannot store an empty array (neo4j/neo4j#13566), so
the rows never hold one (see graph.longitudinal.derived_rows). Files with a line break inside a value are passed to
``--multiline-fields`` (format v2), the others are read with the faster single-line parser.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from graph.errors import CxrkgError
from graph.schema import BOOLEAN, LOCALDATETIME, LONG, STRING, STRINGS, GraphSchema, graph_schema

ARRAY_DELIMITER = "\x1f"


class ImportFileError(CxrkgError, ValueError):
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


_FORMAT: dict[str, Callable[[Any], str]] = {STRING: _string, LONG: _long, BOOLEAN: _boolean,
                                            LOCALDATETIME: _localdatetime, STRINGS: _strings}


def _rows_formatter(columns: list[tuple[str, str, str]], access: str = "get",
                   plain: bool = False) -> Callable[[Iterable[Any]], Any]:
    """A function that turns rows into their lines (without newlines), generated once per file so that a
    batch of rows costs one call and every column's formatting is inlined in its loop: on the NIH cohort
    (3.2 million node rows) the generic loop over per-column formatters was a quarter of the profile of
    writing the files, a generated formatter per row cut the workers' time by 8 %, and one generated loop
    per batch cut the synthetic cohort's row writing by about half again (issue 36). Texts, the common
    case, are quoted inline; integers, booleans, date-times and lists of texts (twelve integers per
    bounding box) are inlined too; a value the inline code does not take goes through its type's formatter
    (which raises TypeError on a wrong type).

    Args:
        columns: (header field, row key, type) of the file.
        access: how a row's value is read: ``get`` (a dict: ``row.get(key)``), ``index`` (a sequence in
            the columns' order) or ``attr`` (an object's attribute of the key's name).
        plain: texts are quoted without escaping their inner quotes, and integers and date-times go into
            the line as they are (one f-string per line, no call per value); the function then returns
            (lines, how many texts it quoted): where the lines hold more than twice that many quotes, a
            text held one and the lines must be made again with ``plain`` False (the quote count, as
            :func:`pair_lines` does: no value holds a quote in the common case, and quoting by f-string
            without ``str.replace`` is about half the time per text; issue 36).

    Returns:
        rows -> their lines, in order (``plain``: and the count of quoted texts).
    """
    read = {"get": "row.get({key!r})", "index": "row[{n}]", "attr": "row.{key}"}[access]
    lines = ["def format_rows(rows):", "    out = []", "    add = out.append", "    q = 0", "    for row in rows:"]
    for n, (_, key, kind) in enumerate(columns):
        if access == "attr" and not key.isidentifier():
            raise ValueError(f"column key {key!r} is not an attribute name")
        lines.append(f"        v = {read.format(key=key, n=n)}")
        lines.append(f"        if v is None: f{n} = ''")
        lines += _inline_value(n, kind, plain)
        lines.append(f"        else: f{n} = format_{n}(v)")
    lines.append("        add(f'" + ",".join(f"{{f{n}}}" for n in range(len(columns))) + "')")
    lines.append("    return out, q" if plain else "    return out")
    scope: dict[str, Any] = {f"format_{n}": _FORMAT[kind] for n, (_, _, kind) in enumerate(columns)}
    exec("\n".join(lines), scope)  # noqa: S102 - the source is built above from the column table only
    return scope["format_rows"]


def _inline_value(n: int, kind: str, plain: bool) -> list[str]:
    """The generated lines that format column ``n``'s value ``v`` of type ``kind`` inline (see
    :func:`_rows_formatter`), after its None test and before its fallback to the type's formatter."""
    quote = f"f{n} = f'\"{{v}}\"'; q += 1" if plain else f"f{n} = '\"' + v.replace('\"', '\"\"') + '\"'"
    if kind == STRING:
        return [f"        elif v.__class__ is str: {quote}"]
    if kind == LONG:
        return [f"        elif v.__class__ is int: f{n} = {'v' if plain else 'str(v)'}"]
    if kind == BOOLEAN:
        return [f"        elif v is True or v is False: f{n} = 'true' if v else 'false'"]
    if kind == LOCALDATETIME:
        return [f"        elif v.__class__ is str: f{n} = v"]
    # lists of texts: joined when every item is text and none holds the delimiter, else _strings
    return ["        elif v.__class__ is list and v:",
            f"            try: j = {ARRAY_DELIMITER!r}.join(v)",
            "            except TypeError: j = None",
            f"            if j is not None and j.count({ARRAY_DELIMITER!r}) == len(v) - 1: "
            + quote.replace("{v}", "{j}").replace("v.replace", "j.replace"),
            f"            else: f{n} = format_{n}(v)"]


def _joined(lines: list[str], quoted: int, escaped: Callable[[], list[str]]) -> str:
    """The text of a plain formatter's ``lines`` (each with its newline) while they hold just the quotes of
    the ``quoted`` texts it quoted (see :func:`_rows_formatter`); else of ``escaped()``, the same rows
    formatted with escaping (a text held a quote)."""
    text = "\n".join(lines) + "\n" if lines else ""
    if text.count('"') != 2 * quoted:
        text = "\n".join(escaped()) + "\n"
    return text


def pair_lines(pairs: Iterable[tuple[str, str]]) -> str:
    """The lines (each with its newline) of relationship rows without properties: (start key, end key),
    both texts, quoted. Built without escaping first, and again with it when a key holds a quote (the
    count of quotes tells).

    Raises:
        TypeError: a key that is not text.
    """
    pairs = pairs if isinstance(pairs, list) else list(pairs)
    text = "".join(['"' + start + '","' + end + '"\n' for start, end in pairs])
    if text.count('"') != 4 * len(pairs):
        text = "".join(['"' + start.replace('"', '""') + '","' + end.replace('"', '""') + '"\n'
                        for start, end in pairs])
    return text


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
        self._format = _rows_formatter(columns)
        self._format_plain = _rows_formatter(columns, plain=True)
        self._columns = columns
        self._known = {key for _, key, _ in columns}
        self._record_format: tuple[Callable[[Iterable[Any]], Any], Callable[[Iterable[Any]], Any]] | None = None
        self._record_types: set[type] = set()
        self._out: TextIO = open(path, "w", encoding="utf-8", newline="", buffering=1 << 20)
        self._out.write(",".join(header for header, _, _ in columns) + "\n")

    def write(self, row: dict[str, Any]) -> None:
        """Append one row.

        Raises:
            ImportFileError: a value of the wrong type, or a key the file has no column for.
        """
        try:
            lines = self._format((row,))
        except TypeError as exc:
            raise ImportFileError(f"{self.path.name}: row {row!r}: {exc}") from None
        if len(row) > len(self._known) or not self._known.issuperset(row):
            extra = sorted(set(row) - self._known)
            raise ImportFileError(f"{self.path.name}: no column for {extra} (graph/schema.yaml declares "
                                  "every stored property)")
        self._append(lines)

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        """Append rows, as :meth:`write` each in turn, in one call (one generated loop, one write).

        Raises:
            ImportFileError: as :meth:`write`; the rows before the first bad one are written.
        """
        try:
            lines, quoted = self._format_plain(rows)
        except TypeError:
            lines = None
        if lines is None or not self._known.issuperset(chain.from_iterable(rows)):
            for row in rows:  # the first bad row raises, as written one by one
                self.write(row)
            return
        self._append_text(_joined(lines, quoted, lambda: self._format(rows)), len(lines))

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
                raise ImportFileError(f"{self.path.name}: no column for {extra} (graph.ingest.import_files lists "
                                      "every stored property)")
            self._record_types.add(kind)
        if self._record_format is None:
            self._record_format = (_rows_formatter(self._columns, access="attr", plain=True),
                                   _rows_formatter(self._columns, access="attr"))
        plain, escaped = self._record_format
        try:
            lines, quoted = plain(records)
        except (TypeError, AttributeError) as exc:
            if len(records) > 1:
                for record in records:  # the first bad record raises, as written one by one
                    self.write_record(record)
            raise ImportFileError(f"{self.path.name}: row {records[0]!r}: {exc}") from None
        self._append_text(_joined(lines, quoted, lambda: escaped(records)), len(lines))

    def _append(self, lines: list[str]) -> None:
        if lines:
            self._append_text("\n".join(lines) + "\n", len(lines))

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
        """Append a relationship row without properties: ``start`` and ``end`` keys (texts). The common
        row (most relationships carry no property), written without the per-column formatting."""
        self.write_pairs([(start, end)])

    def write_pairs(self, pairs: list[tuple[str, str]]) -> None:
        """Append relationship rows without properties, (start key, end key) each (texts): :func:`pair_lines`.

        Raises:
            TypeError: a key that is not text (nothing of ``pairs`` is written).
        """
        if not pairs:
            return
        text = pair_lines(pairs)
        if not self.multiline and ("\r" in text or text.count("\n") != len(pairs)):
            self.multiline = True
        self._out.write(text)
        self.rows += len(pairs)

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
