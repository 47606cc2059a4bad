"""Graph statistics: counts per label and relationship type, orphan nodes, and what the graph holds
beyond graph/schema.yaml (schema drift)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graph.store import read_statements as rs

if TYPE_CHECKING:  # not imported at run time: `cxrkg stats` reads through the driver-free Query API too
    from graph.store.consistency import CheckResult
    from graph.store.graph_store import GraphStore
    from graph.store.query_api import QueryApiReader

# Vocabulary nodes with nothing pointing at them yet and SourceFile bookkeeping nodes are not orphans.
_EXPECTED_LONE = ("SourceFile", "Anatomy", "Finding")


def label_counts(store: GraphStore | QueryApiReader) -> tuple[dict[str, int], dict[str, int]]:
    """Node count per label and relationship count per type, from Neo4j's count store."""
    labels = [r["label"] for r in store.read(rs.LABELS)]
    types = [r["t"] for r in store.read(rs.RELATIONSHIP_TYPES)]
    nodes = {lbl: store.read(rs.count_label(lbl))[0]["n"] for lbl in labels}
    rels = {t: store.read(rs.count_type(t))[0]["n"] for t in types}
    return nodes, rels


def summary_counts(store: GraphStore | QueryApiReader) -> tuple[int, int, int]:
    """(studies, observations, PROGRESSION relationships) in the graph, from Neo4j's count store in one
    statement (what :func:`label_counts` gives for those three in a statement per label and type)."""
    row = store.read(rs.SUMMARY_COUNTS)[0]
    return row["studies"], row["observations"], row["progression_edges"]


def graph_stats(store: GraphStore | QueryApiReader) -> dict[str, Any]:
    """``{"nodes": {label: n}, "relationships": {type: n}, "orphans": {label: n}, "total_nodes", "total_relationships"}``.

    Counts come from Neo4j's count store (cheap); orphans are nodes without any relationship, except
    the labels for which that is normal (SourceFile, and vocabulary nodes nobody mentions).
    """
    nodes, rels = label_counts(store)
    orphans = {
        lbl: store.read(rs.count_orphans(lbl))[0]["n"]
        for lbl in nodes if lbl not in _EXPECTED_LONE
    }
    return {
        "nodes": {k: v for k, v in nodes.items() if v},
        "relationships": {k: v for k, v in rels.items() if v},
        "orphans": {k: v for k, v in orphans.items() if v},
        "total_nodes": sum(nodes.values()),
        "total_relationships": sum(rels.values()),
    }


def schema_drift(store: GraphStore | QueryApiReader) -> list[str]:
    """What the graph holds that graph/schema.yaml does not declare: ``"Label.property"``,
    ``"TYPE.property"``, ``"label Label"``, ``"relationship type TYPE"``, and a stored value of an enumerated
    property outside its ``values`` (``"Mention.source = 'rules'"``, one entry per value, at most ten per
    property), sorted (empty: no drift). A property of the model, written later or bookkeeping
    (:meth:`graph.schema.GraphSchema.declared`) is declared. Reads every node and relationship
    (``db.schema.nodeTypeProperties()``, ``db.schema.relTypeProperties()``, and one pass over each label and
    type with enumerated properties)."""
    from graph.schema import STRINGS, graph_schema  # YAML and pydantic: only for the checks, not for the counts

    schema = graph_schema()
    found: set[str] = set()
    for r in store.read(rs.NODE_TYPE_PROPERTIES):
        for label in r["labels"] or []:
            if label not in schema.nodes:
                found.add(f"label {label}")
            elif r["property"] is not None and r["property"] not in schema.declared(label):
                found.add(f"{label}.{r['property']}")
    for r in store.read(rs.REL_TYPE_PROPERTIES):
        rel_type = r["type"].removeprefix(":").strip("`")  # reported as :`TYPE`
        if rel_type not in schema.relationships:
            found.add(f"relationship type {rel_type}")
        elif r["property"] is not None and r["property"] not in schema.declared(rel_type):
            found.add(f"{rel_type}.{r['property']}")
    for name in (*schema.nodes, *schema.relationships):
        if not (enumerated := schema.enumerated(name)):
            continue
        types = (schema.nodes.get(name) or schema.relationships[name]).all_properties()
        checks = [{"property": p, "array": types[p] == STRINGS, "allowed": sorted(allowed)}
                  for p, allowed in enumerated.items()]
        statement = rs.values_outside(name, relationship=name in schema.relationships)
        for r in store.read(statement, checks=checks):
            found.update(f"{name}.{r['property']} = {v!r}" for v in r["values"])
    return sorted(found)


@dataclass
class StatsReport:
    """What ``cxrkg stats`` reports: the counts (:func:`graph_stats`) and, when ``checked``, the consistency
    checks' results and the schema drift (:func:`schema_drift`)."""

    counts: dict[str, Any]
    checked: bool = False
    checks: list[CheckResult] = field(default_factory=list)
    drift: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that found something."""
        return [c for c in self.checks if not c.ok]

    @property
    def consistent(self) -> bool:
        """No check found anything and nothing drifted (True when nothing was checked)."""
        return not self.failed and not self.drift

    def as_dict(self) -> dict[str, Any]:
        """The counts; when checked, with ``consistency`` (each check's count, examples and description),
        ``schema_drift`` and ``consistent``."""
        if not self.checked:
            return dict(self.counts)
        return self.counts | {
            "consistency": {c.name: {"count": c.count, "examples": c.examples, "description": c.description}
                            for c in self.checks},
            "schema_drift": self.drift, "consistent": self.consistent}

    def rows(self) -> list[dict[str, Any]]:
        """One row per count: ``{"kind": node|relationship|orphan|check|drift, "name", "count"}``."""
        rows = [{"kind": kind, "name": k, "count": v} for kind, part in
                (("node", "nodes"), ("relationship", "relationships"), ("orphan", "orphans"))
                for k, v in self.counts[part].items()]
        rows += [{"kind": "check", "name": c.name, "count": c.count} for c in self.checks]
        return rows + [{"kind": "drift", "name": name, "count": 1} for name in self.drift]


def stats_report(store: GraphStore | QueryApiReader, check: bool = True) -> StatsReport:
    """The graph's counts and, with ``check``, the consistency checks
    (:func:`graph.store.consistency.run_checks`) and the schema drift."""
    if not check:
        return StatsReport(graph_stats(store))
    from graph.store.consistency import run_checks

    return StatsReport(graph_stats(store), True, run_checks(store), schema_drift(store))
