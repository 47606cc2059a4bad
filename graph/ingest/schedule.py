"""How the batches of a run are scheduled: which may be written at the same time, parsing one batch ahead
in a worker process, and a bounded window of writes in flight. Plain functions; the ingest flow wires them
to Prefect tasks."""

from __future__ import annotations

import gc
import multiprocessing
import os
import stat
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Protocol, TypeVar

from graph.ingest.parse import StreamedFile, fingerprinted, parse_files_with_packaged_vocabulary
from graph.ingest.plan import InputFile
from graph.records import ParsedFile

_Job = TypeVar("_Job")


class Pending(Protocol):
    """Anything whose ``result()`` waits for and returns a started job's outcome (a Prefect or
    ``concurrent.futures`` future)."""

    def result(self) -> Any: ...


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the platform has one, which honours
    ``taskset`` and container CPU sets, else ``os.cpu_count()``): the default number of workers of
    ``cxrkg extract`` and ``cxrkg ingest --bulk``; at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def batch_keys(parsed: list[ParsedFile], changed: set[str]) -> set[str] | None:
    """The patients and studies a parsed batch writes (``"patient:<id>"``, ``"study:<id>"``); None when not
    all are known before writing (a streamed file, or a changed file whose earlier records may name others)."""
    if any(isinstance(pf, StreamedFile) or pf.path in changed for pf in parsed):
        return None
    return {key for pf in parsed for s in pf.studies for key in (f"patient:{s.patient_id}", f"study:{s.study_id}")}


def independent(keys: set[str] | None, others: Iterable[set[str] | None]) -> bool:
    """Whether a batch may be written while the others are: no shared patient (whose lock it would wait
    for) and no shared study (whose owner check must see the other batch's commit). Unknown keys (None)
    on either side are never independent."""
    return keys is not None and all(other is not None and not keys & other for other in others)


def write_window(jobs: Iterable[tuple[_Job, set[str] | None]], start: Callable[[_Job], Pending],
                 writers: int) -> Iterator[tuple[_Job, Any]]:
    """Start ``(job, keys)`` in order, at most ``writers`` at once and beside others only when
    :func:`independent`; yield ``(job, result)`` in start order as each finishes.

    Raises:
        ValueError: ``writers`` < 1.
    """
    if writers < 1:
        raise ValueError(f"writers must be >= 1, got {writers}")
    in_flight: deque[tuple[_Job, Pending, set[str] | None]] = deque()
    for job, keys in jobs:
        while in_flight and (len(in_flight) >= writers or not independent(keys, (k for _, _, k in in_flight))):
            done, pending, _ = in_flight.popleft()
            yield done, pending.result()
        in_flight.append((job, start(job), keys))
    while in_flight:
        done, pending, _ = in_flight.popleft()
        yield done, pending.result()


def parsed_ahead(batches: list[list[InputFile]], doc_mapping: str | None) -> Iterator[tuple[list[InputFile], list[ParsedFile]]]:
    """Yield (batch, its parsed files), parsing the next batch in a worker process meanwhile; the batch's files
    come back with their ``sha256`` filled in (:func:`fingerprinted_and_parsed`).

    Parsing is Python work and writing is Neo4j work, so on two cores they overlap. A process, not a
    thread: parsing in a thread of this process measured 3-4x slower (GIL contention with the driver and
    Prefect's own threads) and did not overlap. A run of a single batch parses inline (no worker start).
    The worker comes from :func:`forked_pool`.
    """
    if len(batches) < 2:
        for files in batches:
            yield fingerprinted_and_parsed(files, doc_mapping)
        return
    with forked_pool(1) as pool:
        ahead = pool.submit(fingerprinted_and_parsed, batches[0], doc_mapping)
        for k in range(len(batches)):
            done = ahead.result()
            if k + 1 < len(batches):
                ahead = pool.submit(fingerprinted_and_parsed, batches[k + 1], doc_mapping)
            yield done


def fingerprinted_and_parsed(files: list[InputFile], doc_mapping: str | None) -> tuple[list[InputFile],
                                                                                      list[ParsedFile]]:
    """A batch's files with their ``sha256`` filled in where it is empty (new files, which planning left
    unread: from the bytes parsed, :func:`graph.ingest.parse.fingerprinted`) and their parsed contents
    (:func:`parse_files`, the packaged vocabulary): what the parse worker of :func:`parsed_ahead` runs, so
    the hashing of a first load overlaps the writes too."""
    parsed = parse_files_with_packaged_vocabulary(files, doc_mapping)
    return fingerprinted(files, parsed), parsed


@contextmanager
def forked_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` forked processes that hold none of this process's network connections, as a
    context (the pool is shut down at its end).

    Forked: ``spawn`` would re-run the caller's main module in each worker, which for a script without an
    ``if __name__ == "__main__"`` guard means running the script twice. The workers only parse files and
    write local files (no driver, no Prefect calls, no logging), which is what makes forking a process
    that has threads safe enough here. A fork copies every open socket, the driver's Bolt connection
    included: a worker that outlived a killed parent would keep that connection, and with it the parent's
    open write transaction and its locks, alive. Each worker therefore first points every socket it
    inherited at ``/dev/null`` (:func:`drop_inherited_sockets`); the pool's own pipes are not sockets.

    The objects this process holds are frozen out of the garbage collector while the pool lives
    (``gc.freeze``, which the Python documentation recommends before a fork without exec): a worker's
    collections would otherwise touch every object it inherited and so copy the pages of the plan and
    the rest into each worker. On the 10,000-patient cohort's bulk load the three workers held 234 MB each.
    """
    gc.freeze()
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=drop_inherited_sockets) as pool:
            yield pool
    finally:
        gc.unfreeze()


def drop_inherited_sockets() -> int:
    """Replace every socket file descriptor of this process by ``/dev/null``; returns how many.

    ``dup2`` rather than ``close``: the socket objects copied from the parent still name their descriptor
    numbers, and closing one of them later must not close a file this process opened since.
    """
    null = os.open(os.devnull, os.O_RDWR)
    dropped = 0
    try:
        for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
            fd = int(name)
            try:
                if fd != null and stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.dup2(null, fd)
                    dropped += 1
            except OSError:
                continue  # the listing's own descriptor, closed by now
    finally:
        os.close(null)
    return dropped
