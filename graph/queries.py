"""The named query catalogue: parameterised ``.cypher`` files in ``cypher/``, run read-only.

Each file starts with a ``//`` header::

    // name: worsening_findings
    // purpose: ...
    // param: patient_id string   the patient
    // columns: study_id, ...

Values only ever travel as query parameters; a query that would write is refused before it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import neo4j

from graph.store import GraphStore

_PARAM_TYPES = {"string": str, "int": int, "float": float}
_HEADER = re.compile(r"^//\s*(name|purpose|param|columns):\s?(.*)$")


class QueryError(ValueError):
    """Unknown query, missing or extra parameter, a value of the wrong type, or a query that writes."""


@dataclass(frozen=True)
class QueryParam:
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class NamedQuery:
    """One catalogue entry: its header fields and its Cypher text."""

    name: str
    purpose: str
    params: tuple[QueryParam, ...]
    columns: tuple[str, ...]
    cypher: str
    file: str

    def bind(self, raw: dict[str, str]) -> dict[str, Any]:
        """Convert ``--param key=value`` strings to the declared types.

        Raises:
            QueryError: a declared parameter is missing, an undeclared one is given, or a value does
                not convert.
        """
        declared = {p.name: p for p in self.params}
        extra = sorted(set(raw) - set(declared))
        if extra:
            raise QueryError(f"query {self.name}: unknown parameter(s) {', '.join(extra)}; "
                             f"it takes {', '.join(declared) or 'none'}")
        missing = [n for n in declared if n not in raw]
        if missing:
            raise QueryError(f"query {self.name}: missing parameter(s) {', '.join(missing)}")
        out = {}
        for name, value in raw.items():
            try:
                out[name] = _PARAM_TYPES[declared[name].type](value)
            except ValueError as exc:
                raise QueryError(f"query {self.name}: parameter {name}={value!r} is not a {declared[name].type}") from exc
        return out


def parse_query_file(text: str, file: str) -> NamedQuery:
    """Read a catalogue file's header and body.

    Raises:
        QueryError: the header lacks a name, purpose or columns line, or declares an unknown type.
    """
    fields: dict[str, str] = {}
    params: list[QueryParam] = []
    body: list[str] = []
    purpose_lines: list[str] = []
    in_header = True
    for line in text.splitlines():
        m = _HEADER.match(line) if in_header else None
        if m:
            key, value = m.groups()
            if key == "param":
                pname, ptype, *desc = value.split(None, 2)
                if ptype not in _PARAM_TYPES:
                    raise QueryError(f"{file}: parameter {pname} has unknown type {ptype!r}")
                params.append(QueryParam(pname, ptype, desc[0] if desc else ""))
            elif key == "purpose":
                purpose_lines.append(value.strip())
            else:
                fields[key] = value.strip()
        elif in_header and line.startswith("//") and purpose_lines and "columns" not in fields:
            purpose_lines.append(line.lstrip("/ ").strip())
        elif in_header and line.startswith("//"):
            continue
        else:
            in_header = False
            body.append(line)
    for key in ("name", "columns"):
        if key not in fields:
            raise QueryError(f"{file}: header has no '// {key}:' line")
    if not purpose_lines:
        raise QueryError(f"{file}: header has no '// purpose:' line")
    return NamedQuery(fields["name"], " ".join(purpose_lines), tuple(params),
                      tuple(c.strip() for c in fields["columns"].split(",")), "\n".join(body).strip(), file)


def catalogue() -> dict[str, NamedQuery]:
    """All named queries shipped in the ``cypher`` package, by name."""
    out = {}
    for entry in sorted(resources.files("cypher").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".cypher"):
            q = parse_query_file(entry.read_text(), entry.name)
            out[q.name] = q
    return out


def get_query(name: str) -> NamedQuery:
    """Raises: QueryError: no query of that name (the message lists the catalogue)."""
    queries = catalogue()
    if name not in queries:
        raise QueryError(f"no query named {name!r}; known: {', '.join(queries)}")
    return queries[name]


def run_named(store: GraphStore, query: NamedQuery, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Run a catalogue query in a read transaction.

    The query plan is checked first (``EXPLAIN``): anything but a read-only query is refused.

    Raises:
        QueryError: the query would write.
    """
    with store.driver.session(database=store.database, default_access_mode=neo4j.READ_ACCESS) as session:
        if query.cypher not in _READ_ONLY:
            plan = session.run("EXPLAIN " + query.cypher, **params).consume()
            if plan.query_type != "r":
                raise QueryError(f"query {query.name} ({query.file}) is of type {plan.query_type!r}; only read "
                                 "queries may run from the catalogue")
            _READ_ONLY.add(query.cypher)
        return session.execute_read(lambda tx: [r.data() for r in tx.run(query.cypher, **params)])


# Query texts whose plan was seen to be read-only: the type of a plan depends on the text alone, not on
# the parameter values, so each text is checked once per process (a round trip saved per call).
_READ_ONLY: set[str] = set()
