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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph.errors import CxrkgError

if TYPE_CHECKING:
    from graph.store.graph_store import GraphStore
    from graph.store.query_api import QueryApiReader

def _iso_date(value: str) -> str:
    """A calendar date as ISO text (what Cypher's ``date()`` reads); ValueError otherwise."""
    return date.fromisoformat(value).isoformat()


_PARAM_TYPES: dict[str, Callable[[Any], Any]] = {"string": str, "int": int, "float": float, "date": _iso_date}
_HEADER = re.compile(r"^//\s*(name|purpose|param|columns):\s?(.*)$")


class QueryError(CxrkgError, ValueError):
    """Unknown query, missing or extra parameter, a value of the wrong type, or a query that writes."""


@dataclass(frozen=True)
class QueryParam:
    """A declared parameter: ``type`` is string / int / float / date (ISO text, checked); ``choices`` restricts a string to a set
    of values; a parameter with a ``default`` may be left out."""

    name: str
    type: str
    description: str
    default: str | None = None
    choices: tuple[str, ...] = ()


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
        missing = [n for n, p in declared.items() if n not in raw and p.default is None]
        if missing:
            raise QueryError(f"query {self.name}: missing parameter(s) {', '.join(missing)}")
        out = {}
        for name, p in declared.items():
            value = raw.get(name, p.default)
            if p.choices and value not in p.choices:
                raise QueryError(f"query {self.name}: parameter {name}={value!r} must be one of "
                                 f"{', '.join(p.choices)}")
            try:
                out[name] = _PARAM_TYPES[p.type](value)
            except ValueError as exc:
                kind = "date (ISO, e.g. 2150-01-31)" if p.type == "date" else p.type
                raise QueryError(f"query {self.name}: parameter {name}={value!r} is not a {kind}") from exc
        return out


_PARAM = re.compile(r"^(\w+)\s+(string|int|float|date|\{[\w|]+\})(?:=(\S+))?\s*(.*)$")


def _parse_param(text: str, file: str) -> QueryParam:
    """``level {study|anatomy}=study  what it means``: name, type (or a set of string choices), an
    optional default after ``=``, and a description."""
    m = _PARAM.match(text.strip())
    if not m:
        raise QueryError(f"{file}: cannot read parameter declaration {text!r}; expected 'name type[=default] "
                         "description' with type string, int, float, date or {a|b}")
    name, ptype, default, desc = m.groups()
    choices: tuple[str, ...] = ()
    if ptype.startswith("{"):
        choices, ptype = tuple(ptype[1:-1].split("|")), "string"
        if default is not None and default not in choices:
            raise QueryError(f"{file}: parameter {name} defaults to {default!r}, not one of its choices")
    return QueryParam(name, ptype, desc, default, choices)


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
                params.append(_parse_param(value, file))
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
    import cypher  # its folder, read directly: importlib.resources costs the quick commands 4 ms of imports

    out = {}
    for entry in sorted(Path(cypher.__path__[0]).glob("*.cypher"), key=lambda p: p.name):
        q = parse_query_file(entry.read_text(encoding="utf-8"), entry.name)
        out[q.name] = q
    return out


def parse_params(pairs: list[str]) -> dict[str, str]:
    """``--param key=value`` strings as ``{key: value}`` (the value may hold ``=``; a key is stripped).

    Raises:
        QueryError: a pair without ``=``.
    """
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise QueryError(f"--param {pair!r}: expected key=value")
        key, value = pair.split("=", 1)
        out[key.strip()] = value
    return out


def check_finding(params: dict[str, Any]) -> None:
    """A ``finding`` parameter must name a vocabulary finding (or a synonym); the vocabulary is read only when
    one is given (the quick commands' start-up, issue 18).

    Raises:
        QueryError: a finding the vocabulary does not know.
    """
    finding = params.get("finding")
    if finding is None:
        return
    from graph.vocabulary import vocabulary

    if vocabulary().finding_for(finding) is None:
        raise QueryError(f"finding {finding!r} is not in the vocabulary (v{vocabulary().version}); "
                         "use a Chest ImaGenome attribute name or one of its synonyms")


def bound_params(query: NamedQuery, pairs: list[str]) -> dict[str, Any]:
    """``--param key=value`` strings checked and converted for ``query``: :func:`parse_params`,
    :meth:`NamedQuery.bind`, :func:`check_finding`.

    Raises:
        QueryError: a malformed pair, a missing, unknown or unconvertible parameter, an unknown finding.
    """
    bound = query.bind(parse_params(pairs))
    check_finding(bound)
    return bound


def get_query(name: str) -> NamedQuery:
    """Raises: QueryError: no query of that name (the message lists the catalogue)."""
    queries = catalogue()
    if name not in queries:
        raise QueryError(f"no query named {name!r}; known: {', '.join(queries)}")
    return queries[name]


def run_named(store: GraphStore | QueryApiReader, query: NamedQuery, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Run a catalogue query in a read transaction; one dict per result row, keyed by ``query.columns``,
    in the query's order.

    Through the driver the query plan is checked first (``EXPLAIN``) and the query runs as one auto-commit
    read (a single round trip); through the Query API
    (:class:`graph.store.query_api.QueryApiReader`, the quick commands) the server's read access mode refuses
    a write. The query runs wrapped by :func:`packed_cypher`, so its whole result travels as one record.

    Raises:
        QueryError: the query would write.
    """
    text = packed_cypher(query)
    refused = (f"query {query.name} ({query.file}) would write; only read queries may run from the "
               "catalogue")
    from graph.store.query_api import QueryApiError, QueryApiReader

    if isinstance(store, QueryApiReader):
        try:
            rows = store.read(text, **params)[0]["rows"]
        except QueryApiError as exc:
            if exc.write_refused:
                raise QueryError(refused) from None
            raise
        return [dict(zip(query.columns, row, strict=True)) for row in rows]
    import neo4j

    with store.driver.session(database=store.database, default_access_mode=neo4j.READ_ACCESS) as session:
        if text not in _READ_ONLY:
            plan = session.run("EXPLAIN " + text, **params).consume()
            if plan.query_type != "r":
                raise QueryError(f"{refused} (its plan is of type {plan.query_type!r})")
            _READ_ONLY.add(text)
        # decoding allocates an object per value (about 10,000 for a 1,206-row answer), which triggers
        # collections that walk every object the process holds (15 to 20 ms each in a process that has
        # imported pandas and Prefect, the slowest 5 % of new_finding_patients calls); the answer holds no cycle
        from graph.records import cyclic_gc_paused  # here: `cxrkg queries` lists the catalogue without it (8 ms)

        with cyclic_gc_paused():
            # an auto-commit transaction (one round trip): execute_read's explicit one cost 1 to 3 ms more per
            # query (p50 of 150 interleaved runs on the NIH graph: finding_episodes 5.2 -> 4.0 ms,
            # recurrent_findings per region 19.7 -> 18.7 ms, a one-value query 4.1 -> 1.3 ms); a read has
            # nothing to retry that a rerun would not do
            rows = session.run(text, **params).single(strict=True)[0]
            return [dict(zip(query.columns, row, strict=True)) for row in rows]


def warm_plans(store: GraphStore) -> int:
    """Plan every catalogue query once (``EXPLAIN`` with parameters of the declared types), so that the
    server's query cache holds them and the JIT has compiled the planner before a user's first query;
    returns the number of queries planned. Neo4j caches the plan of an ``EXPLAIN`` under the statement
    without that prefix (Cypher manual, "Query caches"). Runs nothing against the data.

    Raises:
        neo4j.exceptions.Neo4jError: a catalogue query no longer plans (e.g. a syntax error).
    """
    samples = {"string": "", "int": "0", "float": "0", "date": "2000-01-01"}
    queries = catalogue().values()
    for query in queries:
        raw = {p.name: p.default or (p.choices[0] if p.choices else samples[p.type]) for p in query.params}
        store.read("EXPLAIN " + packed_cypher(query), **query.bind(raw))
    return len(queries)


def unknown_ids(store: GraphStore | QueryApiReader, params: dict[str, Any]) -> list[str]:
    """The patients and studies that bound query parameters name (``patient_id``, ``*study_id``; an empty
    value means "all") but the graph does not hold, as ``"patient <id>"`` / ``"study <id>"``."""
    from graph.store import read_statements as rs

    patients = [v for k, v in params.items() if k == "patient_id" and v]
    studies = [v for k, v in params.items() if k.endswith("study_id") and v]
    if not patients and not studies:
        return []
    return [r["item"] for r in store.read(rs.UNKNOWN_IDS, patients=patients, studies=studies)]


def packed_cypher(query: NamedQuery) -> str:
    """The query as a subquery whose rows are collected into one list of ``[column, ...]`` lists.

    Why: the Python driver spends about 10 us of interpreter time per received record whatever its
    width, so a 1,206-row answer took 13 ms to receive where the server needed 1 to 5 ms; one record
    holding every row is decoded in one pass (new_finding_patients over a year of NIH studies: p50 17 ->
    4 ms, benchmarks/nih_benchmark.py). ``collect`` keeps the order of the subquery's ``ORDER BY``.
    The catalogue file stays the plain query a user can paste into Neo4j Browser.
    """
    columns = ", ".join(f"`{c}`" for c in query.columns)
    return f"CALL () {{\n{query.cypher}\n}}\nRETURN collect([{columns}]) AS rows"


# Query texts whose plan was seen to be read-only: the type of a plan depends on the text alone, not on
# the parameter values, so each text is checked once per process (a round trip saved per call).
_READ_ONLY: set[str] = set()
