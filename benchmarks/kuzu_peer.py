"""Kuzu as a peer of ``neo4j-admin import``: the bulk load's import files, loaded with ``COPY FROM`` into an
embedded Kuzu database (Kuzu 0.11, the optional ``bench`` extra).

The tables come from the files' own headers (graph.ingest.import_files writes ``key:ID(Label)``,
``name:type``, ``:START_ID(Label)``, ``:END_ID(Label)``), never from a second schema: one node table per
label (its key the primary key), one relationship table per type with a ``FROM ... TO ...`` pair for each
pair of end labels in its files. Each file is read once by a ``COPY <table> FROM (LOAD WITH HEADERS ...)``
whose ``RETURN`` converts what Kuzu's CSV reader cannot read as written: arrays, joined with U+001F, are
split by ``string_split``. No file is rewritten, so the conversion is inside the timed COPY.

Differences from the Neo4j import, both from Kuzu's CSV reader: a quoted empty string is read as NULL,
like a missing value (Neo4j keeps ``""``); files with a line break inside a value are read with
``parallel=false`` (Kuzu's parallel reader refuses them), the others in parallel.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from graph.ingest.import_files import ARRAY_DELIMITER, BOOLEAN, DOUBLE, LOCALDATETIME, LONG, STRING, STRINGS, Listing

# Neo4j import types (graph.ingest.import_files) -> Kuzu types; localdatetime has no zone, as TIMESTAMP
KUZU_TYPES = {STRING: "STRING", LONG: "INT64", DOUBLE: "DOUBLE", BOOLEAN: "BOOLEAN", LOCALDATETIME: "TIMESTAMP",
              STRINGS: "STRING[]"}


class KuzuPeerError(ValueError):
    """Import files Kuzu cannot take as they are: a header field of an unknown type, or one label's (one
    type's) files with different columns. Names the file."""


@dataclass(frozen=True)
class Column:
    """One header field: ``field`` as written, ``name`` the property (``_from`` / ``_to`` for a
    relationship's ends), ``kind`` its import type, ``label`` the end's label (``ID``/``START_ID``/``END_ID``)."""

    field: str
    name: str
    kind: str
    label: str | None = None


def header_columns(path: Path) -> list[Column]:
    """The columns of an import file, from its header line.

    Raises:
        KuzuPeerError: a field whose type is not one graph.ingest.import_files writes.
    """
    with path.open(encoding="utf-8", newline="") as fh:
        header = fh.readline().rstrip("\r\n")
    columns = []
    for text in header.split(","):
        name, _, kind = text.partition(":")
        if kind.startswith(("ID(", "START_ID(", "END_ID(")):
            role, _, label = kind.rstrip(")").partition("(")
            columns.append(Column(text, {"ID": name, "START_ID": "_from", "END_ID": "_to"}[role], STRING, label))
        elif kind in KUZU_TYPES:
            columns.append(Column(text, name, kind))
        else:
            raise KuzuPeerError(f"{path}: header field {text!r} has no Kuzu type (known: {sorted(KUZU_TYPES)})")
    return columns


@dataclass
class Table:
    """One Kuzu table: a node label or a relationship type, its property columns and its files, grouped
    by file name (files of one name share their header; for a relationship type, one name is one pair of
    end labels)."""

    name: str
    node: bool
    properties: list[Column] = field(default_factory=list)
    files: dict[str, list[Listing]] = field(default_factory=lambda: defaultdict(list))
    headers: dict[str, list[Column]] = field(default_factory=dict)

    def ddl(self) -> str:
        """The ``CREATE ... TABLE`` statement."""
        props = [f"`{c.name}` {KUZU_TYPES[c.kind]}" for c in self.properties]
        if self.node:
            key = next(c for c in next(iter(self.headers.values())) if c.label)
            return f"CREATE NODE TABLE `{self.name}`({', '.join([f'`{key.name}` STRING PRIMARY KEY', *props])})"
        pairs = [f"FROM `{h[0].label}` TO `{h[1].label}`" for h in self.headers.values()]
        return f"CREATE REL TABLE `{self.name}`({', '.join(pairs + props)})"

    def copies(self) -> list[str]:
        """The ``COPY`` statements: one per file name and reader (parallel or not)."""
        statements = []
        for name, listed in self.files.items():
            columns = self.headers[name]
            load = ", ".join(f"`{c.field}` STRING" if c.kind == STRINGS else f"`{c.field}` {KUZU_TYPES[c.kind]}"
                             for c in columns)
            values = ", ".join(f"string_split(`{c.field}`, '{ARRAY_DELIMITER}')" if c.kind == STRINGS
                               else f"`{c.field}`" for c in columns)
            ends = "" if self.node else f" (from='{columns[0].label}', to='{columns[1].label}')"
            for multiline in (False, True):
                paths = [str(f.path) for f in listed if f.multiline == multiline]
                if paths:
                    options = f"header=true, delim=',', quote='\"', escape='\"', parallel={str(not multiline).lower()}"
                    statements.append(f"COPY `{self.name}` FROM (LOAD WITH HEADERS ({load}) FROM {paths!r} "
                                      f"({options}) RETURN {values}){ends}")
        return statements


def kuzu_tables(files: Iterable[Listing]) -> list[Table]:
    """The tables of the import files ``files`` (their listing, as the bulk load names them), node tables
    first (Kuzu needs a relationship's end tables to exist).

    Raises:
        KuzuPeerError: files of one label or type whose property columns differ.
    """
    tables: dict[str, Table] = {}
    for f in files:
        if not f.rows:
            continue
        kind, _, name = f.group.partition("=")
        table = tables.setdefault(name, Table(name, kind == "nodes"))
        if f.path.name not in table.headers:
            columns = header_columns(f.path)
            props = [c for c in columns if not c.label]
            if table.headers and props != table.properties:
                raise KuzuPeerError(f"{f.path}: columns {[c.field for c in props]} differ from another "
                                    f"{name} file's {[c.field for c in table.properties]}")
            table.headers[f.path.name], table.properties = columns, props
        table.files[f.path.name].append(f)
    return sorted(tables.values(), key=lambda t: not t.node)


@dataclass
class KuzuLoad:
    """What :func:`load_kuzu` did: Kuzu's counts afterwards (nodes per label, relationships per type) and
    the seconds of creating the tables and running the COPY statements (counting not included)."""

    nodes: dict[str, int]
    relationships: dict[str, int]
    seconds: float


def load_kuzu(database: Path, files: Iterable[Listing], threads: int | None = None) -> KuzuLoad:
    """Create the tables of ``files`` in a new Kuzu database at ``database`` (which must not exist) and
    COPY every file into them.

    Args:
        threads: Kuzu's worker threads (default: Kuzu's own, every core).

    Raises:
        KuzuPeerError: see :func:`kuzu_tables`.
        RuntimeError: Kuzu refused a statement (its message names the file and line).
        ImportError: kuzu is not installed (``pip install -e '.[bench]'``).
    """
    import kuzu

    tables = kuzu_tables(files)
    db = kuzu.Database(str(database))
    conn = kuzu.Connection(db, num_threads=threads or 0)
    try:
        started = time.perf_counter()
        for table in tables:
            conn.execute(table.ddl())
        for table in tables:
            for statement in table.copies():
                conn.execute(statement)
        seconds = time.perf_counter() - started
        counts: dict[bool, dict[str, int]] = {True: {}, False: {}}
        for table in tables:
            query = f"MATCH (n:`{table.name}`) RETURN count(*)" if table.node else \
                f"MATCH ()-[r:`{table.name}`]->() RETURN count(*)"
            counts[table.node][table.name] = conn.execute(query).get_next()[0]
    finally:
        conn.close()
        db.close()
    return KuzuLoad(counts[True], counts[False], seconds)
