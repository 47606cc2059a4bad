"""Reading the graph for a feature: what a reader is, and a read by batches of patients with read-ahead.

Driver-free: a feature hands in its reader (a :class:`graph.store.GraphStore` or
:class:`graph.store.query_api.QueryApiReader`) and one of the store's named read statements.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol


class Reader(Protocol):
    """Anything with ``read(cypher, **params) -> list[dict]``: a GraphStore or the Query API reader."""

    def read(self, cypher: str, **params: Any) -> list[dict[str, Any]]: ...


def read_by_patients(reader: Reader, cypher: str, patient_ids: Iterable[str],
                     batch: int) -> Iterator[list[dict[str, Any]]]:
    """The rows of ``cypher`` (which takes ``$patient_ids``), one list per ``batch`` patients in patient id
    order (ids as text, each once). The next batch is read on a second thread while the caller works on this
    one, so the server's work and the caller's overlap; at most one read runs ahead. A read's error
    is raised where its batch would be yielded."""
    ids = sorted(set(map(str, patient_ids)))
    batches = [ids[k:k + batch] for k in range(0, len(ids), batch)]
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = [pool.submit(reader.read, cypher, patient_ids=b) for b in batches[:1]]
        for k in range(len(batches)):
            rows = pending[k].result()
            if k + 1 < len(batches):
                pending.append(pool.submit(reader.read, cypher, patient_ids=batches[k + 1]))
            yield rows
