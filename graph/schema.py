"""The graph schema, declared once in ``graph/schema.yaml`` and read here.

Everything that names the graph's labels, keys, properties or relationship types derives from it: the
store's uniqueness constraints and indexes and the property maps of the transactional statements
(:mod:`graph.store.statements`), the bulk import files' headers (:mod:`graph.ingest.import_files`), the
rows and row checks of both loaders (:mod:`graph.longitudinal.derived_rows`, :mod:`graph.ingest.bulk`), the drift
check of ``cxrkg stats`` (:mod:`graph.store.stats`) and docs/schema.md's model table (:func:`markdown`). The schema is data, not code, in the way BioCypher
drives its writers from one schema file (biocypher/biocypher, ``biocypher/_config/schema_config.yaml``).

Types are those of the CSV headers of ``neo4j-admin database import`` (Neo4j Operations Manual, "Import",
CSV header format, for 5.26): ``string``, ``long``, ``double``, ``boolean``, ``localdatetime`` and the
arrays ``string[]`` and ``double[]``.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from graph.errors import CxrkgError

SCHEMA_FILE = Path(__file__).with_name("schema.yaml")
# Another schema file to use instead of the packaged one (a copy with a property added, to try a model
# change, or a test's): read by :func:`graph_schema`, so by every writer of the process and its workers.
SCHEMA_ENV = "CXRKG_GRAPH_SCHEMA"

STRING, LONG, DOUBLE, BOOLEAN, LOCALDATETIME = "string", "long", "double", "boolean", "localdatetime"
STRINGS, DOUBLES = "string[]", "double[]"
TYPES = (STRING, LONG, DOUBLE, BOOLEAN, LOCALDATETIME, STRINGS, DOUBLES)

_LABEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")  # PascalCase
_REL_TYPE = re.compile(r"^[A-Z][A-Z0-9_]*$")  # UPPER_SNAKE
_PROPERTY = re.compile(r"^[a-z][a-z0-9_]*$")  # snake_case
_BOOKKEEPING = re.compile(r"^_?[a-z][a-z0-9_]*$")  # snake_case, or _snake_case for what lives one statement


class SchemaError(CxrkgError, ValueError):
    """A schema file that does not declare a consistent graph, or a row the schema does not allow; the
    message names the file or the label, the row and the property."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Property(_Strict):
    """One property: its type (one of :data:`TYPES`), a one-line description (docs/schema.md's table) and,
    for an enumerated string or string array, the values it may hold (``values``, each element of an array)."""

    type: str
    description: str
    values: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _check(self) -> "Property":
        if self.type not in TYPES:
            raise ValueError(f"type {self.type!r} is not one of {', '.join(TYPES)}")
        if not self.description.strip() or "\n" in self.description:
            raise ValueError("a property needs a description of one line")
        if self.values is not None:
            if self.type not in (STRING, STRINGS):
                raise ValueError(f"values are for string and string[] properties, not {self.type}")
            if not self.values or len(set(self.values)) < len(self.values):
                raise ValueError("values must list each allowed value once")
        return self


def _types(props: Mapping[str, Property]) -> dict[str, str]:
    return {name: p.type for name, p in props.items()}


class Later(_Strict):
    """Properties another step writes after a load (``by`` says which); not in the import files."""

    by: str
    properties: dict[str, Property]


class _Element(_Strict):
    properties: dict[str, Property] = Field(default_factory=dict)
    later: Later | None = None
    bookkeeping: dict[str, Property] = Field(default_factory=dict)
    indexes: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    def all_properties(self) -> dict[str, str]:
        """Every property of the element (loaded, then later), name -> type; the key of a node and the
        bookkeeping not included."""
        return _types({**self.properties, **(self.later.properties if self.later else {})})

    def described(self) -> dict[str, Property]:
        """Every property of the element (loaded, later, bookkeeping), name -> :class:`Property`."""
        return {**self.properties, **(self.later.properties if self.later else {}), **self.bookkeeping}

    def enumerated(self) -> dict[str, frozenset[str]]:
        """The properties with a ``values`` list (loaded, then later), name -> the values allowed."""
        props = {**self.properties, **(self.later.properties if self.later else {})}
        return {name: frozenset(p.values) for name, p in props.items() if p.values is not None}

    @model_validator(mode="after")
    def _check(self) -> "_Element":
        props = self.all_properties()
        for name in props:
            if not _PROPERTY.match(name):
                raise ValueError(f"property {name!r} is not snake_case")
        for name in self.bookkeeping:
            if not _BOOKKEEPING.match(name):
                raise ValueError(f"bookkeeping property {name!r} is not snake_case or _snake_case")
        if self.later and (twice := sorted(set(self.later.properties) & set(self.properties))):
            raise ValueError(f"properties both loaded and written later: {twice}")
        if twice := sorted(set(self.bookkeeping) & set(props)):
            raise ValueError(f"properties declared both as the model's and as bookkeeping: {twice}")
        for name, on in self.indexes.items():
            if missing := [p for p in on if p not in props]:
                raise ValueError(f"index {name!r} is on undeclared properties {missing}")
        return self


class NodeType(_Element):
    """One node label: its key (a string with a uniqueness constraint named ``constraint``), properties
    and indexes (name -> the properties it covers, in order)."""

    key: str
    constraint: str


class RelationshipType(_Element):
    """One relationship type: the (start label, end label) pairs it joins, its properties and indexes."""

    ends: tuple[tuple[str, str], ...]


class GraphSchema(_Strict):
    """The whole schema: node labels and relationship types, each in declaration order.

    Raises (on construction):
        pydantic.ValidationError: a label, type or property that breaks the naming conventions, an unknown
            property type, an index on an undeclared property, or relationship ends that name no label.
    """

    nodes: dict[str, NodeType]
    relationships: dict[str, RelationshipType]

    @model_validator(mode="after")
    def _check(self) -> "GraphSchema":
        for label, node in self.nodes.items():
            if not _LABEL.match(label):
                raise ValueError(f"label {label!r} is not PascalCase")
            if node.key in node.described():
                raise ValueError(f"{label}: the key {node.key!r} is also listed as a property")
        for rel_type, rel in self.relationships.items():
            if not _REL_TYPE.match(rel_type):
                raise ValueError(f"relationship type {rel_type!r} is not UPPER_SNAKE")
            if unknown := sorted({label for pair in rel.ends for label in pair} - set(self.nodes)):
                raise ValueError(f"{rel_type} joins undeclared labels {unknown}")
        names = [n for node in self.nodes.values() for n in (node.constraint, *node.indexes)]
        names += [n for rel in self.relationships.values() for n in rel.indexes]
        if dupes := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"constraint and index names used twice: {dupes}")
        return self

    def node_keys(self) -> dict[str, str]:
        """Label -> its key property."""
        return {label: node.key for label, node in self.nodes.items()}

    def constraints(self) -> list[tuple[str, str, str]]:
        """(constraint name, label, key property) of every label's uniqueness constraint."""
        return [(node.constraint, label, node.key) for label, node in self.nodes.items()]

    def node_indexes(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """(index name, label, properties) of every node index."""
        return [(name, label, on) for label, node in self.nodes.items() for name, on in node.indexes.items()]

    def relationship_indexes(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """(index name, relationship type, properties) of every relationship index."""
        return [(name, t, on) for t, rel in self.relationships.items() for name, on in rel.indexes.items()]

    def loaded_properties(self, name: str) -> dict[str, str]:
        """The properties both loaders write on label or relationship type ``name`` (its key excluded),
        name -> type, in declaration order: the import files' columns after the key.

        Raises:
            SchemaError: ``name`` is neither a declared label nor a relationship type.
        """
        return _types(self._element(name).properties)

    def declared(self, name: str) -> frozenset[str]:
        """Every property a node of label ``name`` (or a relationship of that type) may hold in the
        database: its key, the loaded properties, those written later and the bookkeeping ones.

        Raises:
            SchemaError: ``name`` is neither a declared label nor a relationship type.
        """
        element = self._element(name)
        key = (element.key,) if isinstance(element, NodeType) else ()
        return frozenset((*key, *element.described()))

    def row_keys(self, name: str) -> frozenset[str]:
        """Every property a loader's row for ``name`` may hold: the key (nodes) and the loaded properties."""
        element = self._element(name)
        key = (element.key,) if isinstance(element, NodeType) else ()
        return frozenset((*key, *element.properties))

    def enumerated(self, name: str) -> dict[str, frozenset[str]]:
        """The properties of label or relationship type ``name`` that list their values (``values:``), name ->
        the values allowed (each element of a string array).

        Raises:
            SchemaError: ``name`` is neither a declared label nor a relationship type.
        """
        return self._element(name).enumerated()

    def check_row(self, name: str, row: Mapping[str, Any], where: str = "") -> None:
        """Check one loader row of label or type ``name`` (None values stand for absent properties).

        Args:
            name: a declared label or relationship type.
            row: property -> value; a node row must hold its key.
            where: what to name the row by in an error (a file, a record); default: the row's key value.

        Raises:
            SchemaError: a property the schema does not declare for ``name``, a missing key, a value whose
                type is not the declared one, or a value outside the property's ``values``; the message names
                ``name``, the row and the property.
        """
        element = self._element(name)
        key = element.key if isinstance(element, NodeType) else None
        where = where or (f"{key} {row.get(key)!r}" if key else "row")
        if key is not None and row.get(key) is None:
            raise SchemaError(f"{name} {where}: no value for its key {key!r}")
        props = {**({key: STRING} if key else {}), **_types(element.properties)}
        allowed = element.enumerated()
        for prop, value in row.items():
            if prop not in props:
                raise SchemaError(f"{name} {where}: property {prop!r} is not in the graph schema "
                                  f"(graph/schema.yaml declares {', '.join(props)})")
            if value is None:
                continue
            if not _is_type(value, props[prop]):
                raise SchemaError(f"{name} {where}: property {prop!r} must be {props[prop]}, got {value!r}")
            if prop in allowed and (outside := outside_values(value, allowed[prop])):
                listed = ", ".join(element.properties[prop].values or ())
                raise SchemaError(f"{name} {where}: property {prop!r} holds {', '.join(map(repr, outside))}, which "
                                  f"is not one of its values in graph/schema.yaml ({listed})")

    def _element(self, name: str) -> NodeType | RelationshipType:
        if name in self.nodes:
            return self.nodes[name]
        if name in self.relationships:
            return self.relationships[name]
        raise SchemaError(f"{name!r} is neither a label nor a relationship type of the graph schema")


def outside_values(value: Any, allowed: frozenset[str]) -> list[str]:
    """The values of a property's ``value`` (a string, or each string of an array) not in ``allowed``, sorted."""
    values = value if isinstance(value, (list, tuple)) else [value]
    return sorted({str(v) for v in values if v not in allowed})


def _is_type(value: Any, kind: str) -> bool:
    """Whether ``value`` is what a property of ``kind`` holds (a date-time as ISO text or ``datetime``; lists
    never empty, as Neo4j's importer cannot store an empty array)."""
    if kind.endswith("[]"):
        return isinstance(value, list) and bool(value) and all(_is_type(v, kind[:-2]) for v in value)
    if kind == LONG:
        return type(value) is int
    if kind == DOUBLE:
        return type(value) in (float, int)
    if kind == BOOLEAN:
        return type(value) is bool
    if kind == LOCALDATETIME:
        return isinstance(value, (str, datetime))
    return isinstance(value, str)


def load_schema(path: Path | str = SCHEMA_FILE) -> GraphSchema:
    """Read and check a schema file.

    Args:
        path: a YAML file in the layout of ``graph/schema.yaml``.

    Returns:
        The checked schema.

    Raises:
        SchemaError: the file cannot be read, is not YAML, or does not declare a consistent schema; the
            message names the file and the entry.
    """
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return GraphSchema.model_validate(data)
    except (OSError, yaml.YAMLError) as exc:
        raise SchemaError(f"{path}: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SchemaError(f"{path}: {where or 'top level'}: {first['msg']}") from exc


def graph_schema() -> GraphSchema:
    """The packaged schema (``graph/schema.yaml``), or the file that ``CXRKG_GRAPH_SCHEMA`` names; each
    file read once per process.

    Raises:
        SchemaError: as :func:`load_schema`.
    """
    return _read_schema(os.environ.get(SCHEMA_ENV) or str(SCHEMA_FILE))


@lru_cache(maxsize=4)
def _read_schema(path: str) -> GraphSchema:
    return load_schema(path)


def _property_list(props: Mapping[str, Property]) -> str:
    # one property a line in the README's cell: name, type, what it holds and the values it may hold
    return "<br>".join(f"`{p}` {d.type}: {_cell(d.description)}" + _values(d) for p, d in props.items()) or "(none)"


def _values(p: Property) -> str:
    return f" (one of {', '.join(f'`{v}`' for v in p.values)})" if p.values else ""


def _cell(text: str) -> str:
    """Text as a markdown table cell shows it (a bar would end the cell, a bracket open an HTML tag)."""
    return text.replace("|", "\\|").replace("<", "&lt;")


def _mermaid(schema: GraphSchema) -> list[str]:
    lines = ["```mermaid", "graph LR"]
    for rel_type, rel in schema.relationships.items():
        lines += [f"  {start} -->|{rel_type}| {end}" for start, end in rel.ends]
    joined = {label for rel in schema.relationships.values() for pair in rel.ends for label in pair}
    lines += [f"  {label}" for label in schema.nodes if label not in joined]
    return [*lines, "```"]


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows)]


def markdown(schema: GraphSchema | None = None) -> str:
    """The graph model as markdown for the README: a mermaid diagram of the relationship types, a table of
    the labels (key, uniqueness constraint, properties with their types, indexes) and one of the relationship
    types. Each property is listed with its type and description; those written after a load are marked
    with the step that writes them (bookkeeping properties are not part of the model and not listed).

    Args:
        schema: the schema to render (default: the packaged one).

    Returns:
        Markdown text ending with a newline.
    """
    schema = schema or graph_schema()
    nodes = [(f"**{label}**", f"`{n.key}` (unique)", _property_list(n.properties)
              + (f"<br>later, by {n.later.by}:<br>{_property_list(n.later.properties)}" if n.later else ""),
              ", ".join(f"`{name}` ({', '.join(on)})" for name, on in n.indexes.items()))
             for label, n in schema.nodes.items()]
    rels = [(f"**{t}**", ", ".join(f"{a} -> {b}" for a, b in r.ends), _property_list(r.properties)
             + (f"<br>later, by {r.later.by}:<br>{_property_list(r.later.properties)}" if r.later else ""),
             ", ".join(f"`{name}` ({', '.join(on)})" for name, on in r.indexes.items()))
            for t, r in schema.relationships.items()]
    lines = [*_mermaid(schema), "",
             *_table(("Label", "Key", "Properties", "Indexes"), nodes), "",
             *_table(("Relationship", "From -> to", "Properties", "Indexes"), rels)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m graph.schema: docs/schema.md's model block
    print(markdown(), end="")
