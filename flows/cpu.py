"""CPU seconds of a command: the figure its stages and parts report beside wall seconds, since it grows less
than wall time when other work shares the machine's cores; and how many of the machine's cores a stage kept
busy."""

from __future__ import annotations

import resource
import time
from contextlib import contextmanager
from typing import Iterator

import psutil


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its child processes that ended and were waited for
    (a bulk load's local workers, the importer); not of a child still running (a Neo4j server), nor of
    processes that are not its children (Dask's workers)."""
    own, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime


def _machine_busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot, all cores summed: user (guests included),
    nice, system and interrupts; idle, I/O wait and time stolen by a hypervisor left out."""
    t = psutil.cpu_times()
    return t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)


@contextmanager
def busy_cores(into: dict[str, float], name: str) -> Iterator[None]:
    """Record in ``into[name]`` how many of the machine's cores were busy on average over the block: the
    machine's busy CPU seconds (every process: cxrkg, its workers, Neo4j's importer and server, anything
    else running) divided by the block's wall seconds, from 0 to the number of cores. A stage well below
    the core count left cores idle that other work could have used; one at the core count had none to
    spare. Recorded when the block ends without an exception, as :func:`flows.ingest_flow.stage`, and
    lasted at least :data:`SHORTEST_MEASURED` seconds."""
    before, started = _machine_busy_seconds(), time.perf_counter()
    yield
    wall = time.perf_counter() - started
    if wall >= SHORTEST_MEASURED:
        into[name] = round((_machine_busy_seconds() - before) / wall, 2)


#: the kernel counts CPU time in clock ticks (10 ms on most Linux machines, per core), so a block shorter
#: than this gets no figure: a 20 ms check stage read 2.2 busy cores of 2
SHORTEST_MEASURED = 0.5
