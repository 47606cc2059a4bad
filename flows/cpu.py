"""CPU seconds of a command: the figure its stages and parts report beside wall seconds, since it grows less
than wall time when other work shares the machine's cores."""

from __future__ import annotations

import resource


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its child processes that ended and were waited for
    (a bulk load's local workers, the importer); not of a child still running (a Neo4j server), nor of
    processes that are not its children (Dask's workers)."""
    own, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime
