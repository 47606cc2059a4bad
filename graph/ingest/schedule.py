"""How the batches of a run are scheduled: which may be written at the same time, parsing one batch ahead
in a worker process, and a bounded window of writes in flight. Plain functions; the ingest flow wires them
to Prefect tasks."""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterable, Iterator, Protocol, TypeVar

from graph.ingest.parse import StreamedFile, fingerprinted, parse_files_with_packaged_vocabulary
from graph.ingest.plan import InputFile
from graph.records import ParsedFile
from graph.runtime.processes import forked_pool

_Job = TypeVar("_Job")


class Pending(Protocol):
    """Anything whose ``result()`` waits for and returns a started job's outcome (a Prefect or
    ``concurrent.futures`` future)."""

    def result(self) -> Any: ...


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
