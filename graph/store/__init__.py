"""The graph in Neo4j: the only package that imports the driver, and the home of every Cypher statement.

* :mod:`graph.store.graph_store`: the driver, schema, batched writes and the per-patient link step;
* :mod:`graph.store.statements`: every write and internal read, named;
* :mod:`graph.store.queries`: the named query catalogue (``cypher/*.cypher``), run read-only;
* :mod:`graph.store.consistency` and :mod:`graph.store.stats`: checks and counts over the stored graph;
* :mod:`graph.store.query_api`: reads over the server's HTTP Query API without the driver (quick commands);
* :mod:`graph.store.reads`: what a feature's reader is, and a read by batches of patients with read-ahead.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graph.store.graph_store import (
        LINK_CHUNK,
        Batch,
        GraphBusy,
        GraphStore,
        GraphUnavailable,
        LoginRefused,
        WriteCounts,
        open_driver,
        reset_shared_store,
        server_agent,
        shared_store,
    )

__all__ = ["LINK_CHUNK", "Batch", "GraphBusy", "GraphStore", "GraphUnavailable", "LoginRefused", "WriteCounts",
           "open_driver", "reset_shared_store", "server_agent", "shared_store"]


def __getattr__(name: str) -> Any:
    # The driver (and the pandas it imports) loads on first use, not with the package: reading the query
    # catalogue or a statement's text needs neither (PEP 562 module attributes).
    if name in __all__:
        return getattr(importlib.import_module("graph.store.graph_store"), name)
    raise AttributeError(f"module 'graph.store' has no attribute {name!r}")
