"""The content of a stored graph as comparable text: what tests and benchmarks use to show that two
loaders (transactional and bulk, one-shot and incremental) made the same graph, node for node and
property for property."""

from __future__ import annotations

import json
from typing import Any

from graph.store import read_statements as rs
from graph.store import statements as st
from graph.store.graph_store import GraphStore

# Properties that record when, not what (a source file's load time).
VOLATILE = {("SourceFile", "loaded_at")}


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return f"{type(value).__name__}:{value.iso_format() if hasattr(value, 'iso_format') else value}"


def graph_content(store: GraphStore) -> list[str]:
    """One sorted line per node (labels, properties) and per relationship (type, its ends as label and key,
    properties), values tagged with their type where JSON would blur them (dates); ``VOLATILE`` left out.
    Sized for test and sample graphs: it holds every line in memory."""
    keys = dict(st.NODE_KEYS)
    lines = []
    for r in store.read(rs.CONTENT_NODES):
        label = r["labels"][0] if r["labels"] else ""
        props = {k: v for k, v in r["props"].items() if (label, k) not in VOLATILE}
        lines.append(json.dumps(["node", sorted(r["labels"]), _canonical(props)], sort_keys=True))
    for r in store.read(rs.CONTENT_RELATIONSHIPS, keys=keys):
        lines.append(json.dumps(["rel", r["type"], r["start_label"], r["start_key"], r["end_label"], r["end_key"],
                                 _canonical(r["props"])], sort_keys=True))
    return sorted(lines)

