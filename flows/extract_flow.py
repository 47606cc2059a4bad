"""The extract flow: report text -> RadGraph JSON shards -> the ingest flow (as a subflow).

Serial (the default): one task calls :func:`graph.extract.pipeline.run_extraction` in this process.
Parallel (``workers`` or ``dask_address``): the subflow ``cxrkg-extract-shards`` runs one task per run of
consecutive shards (:func:`shard_batches`) on Prefect's Dask task runner (prefect-dask), a local cluster of
worker processes or an existing cluster,
and folds the results in shard order, so the output is byte-identical to the serial run's. Ingestion
reuses ``flows.ingest_flow.ingest_flow`` unchanged, so extracted files go through the same parser, checks
and batched writes as real RadGraph files. Tasks get paths, names and report text, never a driver or a
model.
"""

from __future__ import annotations

import os
import pickle
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.ingest_flow import IngestSummary, ingest_flow
from graph.extract.inputs import CsvColumns, extract_workers, iter_inputs
from graph.extract.pipeline import (
    DEFAULT_SHARD_SIZE,
    ExtractionOutput,
    ExtractionSummary,
    Shard,
    ShardResult,
    extract_shard,
    iter_shards,
    run_extraction,
    shared_extractor,
)
from graph.records import companion_report

INGEST_BATCH_FILES = 4  # shards per load task: bounds the memory of one task to a few thousand reports
#: messages each Dask comm and worker keeps for debugging (distributed's ``admin.low-level-log-length``,
#: default 1,000). A message under 1 MB is kept whole and a shard's task carries its report text (about
#: 250 KB at MIMIC-CXR length), so with the default the flow process held the last 1,000 shards it sent
#: (1.5 GB at 227,000 reports) and each worker those it received.
DASK_MESSAGE_LOG = 8
#: shards per Dask task once a run is under way (:func:`shard_batches`): a task run costs the flow process,
#: the worker and Prefect's API server the same CPU whatever its size (submission, state changes, events)
SHARDS_PER_TASK = 8


@dataclass
class ExtractFlowResult:
    """Both halves of a run; ``ok`` is False when either rejected anything."""

    extraction: ExtractionSummary
    ingestion: IngestSummary | None

    @property
    def ok(self) -> bool:
        return self.extraction.ok and (self.ingestion is None or self.ingestion.ok)


@task(cache_policy=NO_CACHE)
def extract_reports(source: str, out: str, extractor: str, columns: CsvColumns, cache: str | None,
                    id_prefix: str | None, shard_size: int, rejected_report: str | None,
                    extractor_options: dict | None) -> ExtractionSummary:
    """Stream the inputs through the extractor into ``out`` (see graph.extract.pipeline)."""
    run = shared_extractor(extractor, tuple(sorted((extractor_options or {}).items())))
    summary = run_extraction(iter_inputs(source, columns, Path(cache) if cache else None, id_prefix), Path(out),
                             run, shard_size, Path(rejected_report) if rejected_report else None,
                             extractor_name=extractor)
    get_run_logger().info("extract: %d reports seen, %d documents, %d entities (%d change), %d rejected, "
                          "%d relations outside RadGraph's schema in %.1fs", summary.reports_seen, summary.documents,
                          summary.entities, summary.change_entities, len(summary.rejections),
                          sum(summary.out_of_schema.values()), summary.seconds)
    return summary


@task(cache_policy=NO_CACHE)
def extract_shards_task(shards: bytes, shard_dir: str, extractor: str,
                        extractor_options: dict | None) -> list[ShardResult]:
    """A run of consecutive shards (a pickled list of :class:`Shard`), one output file each, on whichever
    worker the task runner picks (the extractor is built once per worker process from the options: a model
    is not shipped, each worker loads its own).

    The shards travel pickled because Prefect walks a task's arguments for futures, and prefect-dask once
    more, and Dask hashes them for the task's key: over the 500 reports of a shard that took the flow
    process about 50 ms per shard, for nothing; bytes are neither walked nor costly to hash. (Prefect's
    ``opaque`` does not survive prefect-dask's argument packing.)"""
    run = shared_extractor(extractor, tuple(sorted((extractor_options or {}).items())))
    return [extract_shard(shard, Path(shard_dir), run) for shard in pickle.loads(shards)]


def shard_batches(shards: Iterable[Shard], workers: int, most: int = SHARDS_PER_TASK) -> Iterator[list[Shard]]:
    """Consecutive shards grouped into one task's batch: the first ``workers`` batches hold one shard each,
    the next ``workers`` two, then four, up to ``most`` (so a small run still spreads over the workers and
    a large one pays Prefect's per-task cost once per ``most`` shards)."""
    size, batch, sent = 1, [], 0
    for shard in shards:
        batch.append(shard)
        if len(batch) >= size:
            yield batch
            batch, sent = [], sent + 1
            if sent % max(workers, 1) == 0:
                size = min(most, size * 2)
    if batch:
        yield batch


def dask_runner(workers: int, address: str | None):
    """Prefect's Dask task runner: the cluster at ``address``, else a local cluster of ``workers``
    single-threaded worker processes (spaCy holds the GIL, so threads would not run in parallel), without
    the dashboard (no port opened)."""
    from prefect_dask import DaskTaskRunner

    if address:
        return DaskTaskRunner(address=address)
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True,
                                          "dashboard_address": None})


@contextmanager
def workers_share_api(local_cluster: bool) -> Iterator[None]:
    """While a local Dask cluster starts and runs, its worker processes report to this process's Prefect API.

    With no ``PREFECT_API_URL`` configured (a new user's ``cxrkg extract``), Prefect starts a temporary API
    server for the flow run (``SubprocessASGIServer``), and each spawned Dask worker, which knows no API either,
    started one of its own on its first task run: 2 more servers, each migrating its database (about 10 s of CPU
    here) and answering its worker's state changes, on the same cores as the extraction. The workers inherit
    ``PREFECT_API_URL`` from this process's environment, so it is set to that server's address until the cluster
    is gone. A configured API (a user's server, the test harness's) and an existing cluster are left alone."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if not local_cluster or PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        yield
        return
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the flow run's own: one instance per port, started once
    server.start()
    previous = os.environ.get("PREFECT_API_URL")
    os.environ["PREFECT_API_URL"] = server.api_url
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("PREFECT_API_URL", None)
        else:
            os.environ["PREFECT_API_URL"] = previous


@flow(name="cxrkg-extract-shards", log_prints=False)
def extract_shards_flow(source: str, out: str, extractor: str, columns: CsvColumns, cache: str | None,
                        id_prefix: str | None, shard_size: int, rejected_report: str | None,
                        extractor_options: dict | None, workers: int) -> ExtractionSummary:
    """Submit one :func:`extract_shards_task` per batch of shards (:func:`shard_batches`) to the flow's task
    runner, at most two per worker at a time (memory holds those shards' report text; ``workers``: the local
    cluster's size, 0 for an existing cluster, counted as 2), and fold the results in shard order."""
    summary = ExtractionSummary(extractor=extractor, out=out, workers=workers, engine="Dask")
    workers = max(workers, 2)
    started = time.perf_counter()
    inputs = iter_inputs(source, columns, Path(cache) if cache else None, id_prefix)
    with ExtractionOutput(Path(out), summary, Path(rejected_report) if rejected_report else None) as output:
        pending: deque = deque()
        for batch in shard_batches(iter_shards(inputs, shard_size), workers):
            pending.append(extract_shards_task.submit(pickle.dumps(batch), str(output.shard_dir), extractor,
                                                      extractor_options))
            if len(pending) >= 2 * workers:
                output.add_all(pending.popleft().result())
        while pending:
            output.add_all(pending.popleft().result())
    summary.seconds = time.perf_counter() - started
    get_run_logger().info("extract: %d reports seen, %d documents, %d rejected in %.1fs on the %s",
                          summary.reports_seen, summary.documents, len(summary.rejections), summary.seconds,
                          type(extract_shards_flow.task_runner).__name__)
    return summary


@flow(name="cxrkg-extract", log_prints=False)
def extract_flow(source: str, out: str, extractor: str = "rules", ingest: bool = True,
                 columns: CsvColumns = CsvColumns(), cache: str | None = None, id_prefix: str | None = None,
                 shard_size: int = DEFAULT_SHARD_SIZE, rejected_report: str | None = None,
                 ingest_rejected_report: str | None = None, progress: bool = False,
                 extractor_options: dict | None = None, workers: int | None = 0,
                 dask_address: str | None = None) -> ExtractFlowResult:
    """Extract RadGraph-format JSON from report text, then (``ingest=True``) load it into the graph.

    Args:
        source: ``iu``, a folder of .txt / Open-i .xml reports, or a .csv / .txt / .xml file.
        out: output folder (``radgraph/part-*.json``, ``doc_mapping.csv``, ``rejected.json``).
        extractor: a name of :data:`graph.extract.pipeline.EXTRACTORS`: ``rules`` (offline) or ``radgraph``
            (the radgraph package; docs/extraction.md#what-the-extractor-does).
        ingest: load the extracted files into the graph afterwards.
        columns: CSV column names (id, text, optional patient and study date).
        cache: IU wheel cache folder (default ``CXRKG_IU_CACHE``).
        id_prefix: prepended to every report id (doc_key); default: the input kind's own (``IU-`` for IU reports).
        shard_size: reports per output file.
        rejected_report: extraction rejections (default ``out/rejected.json``).
        ingest_rejected_report: ingestion rejections (default beside ``rejected_report``, its name ending
            in ``-ingest.json``; without either ``out/rejected-ingest.json``).
        progress: show the ingestion's progress bar.
        extractor_options: the keyword options of the extractor's factory in
            :data:`graph.extract.pipeline.EXTRACTORS` (the ``radgraph`` extractor's model and batch options);
            hashable values, as the extractor is built once per process and options
            (:func:`graph.extract.pipeline.shared_extractor`).
        workers: > 0 extracts shards in parallel on a local Dask cluster of that many worker processes;
            0 extracts in this process; None: as ``cxrkg extract`` by default
            (:func:`graph.extract.inputs.extract_workers`: one per core from 16 MB of reports on).
        dask_address: an existing Dask scheduler (``tcp://host:8786``) to extract on instead.

    Returns:
        the extraction summary and, when ingested, the ingest flow's summary.
    """
    if workers is None:
        workers = extract_workers(source, None, dask_address)
    if workers or dask_address:
        import dask

        parallel = extract_shards_flow.with_options(task_runner=dask_runner(workers, dask_address))
        # the worker profiler samples the task thread's stack every 10 ms for a dashboard no one opens here
        with dask.config.set({"distributed.admin.low-level-log-length": DASK_MESSAGE_LOG,
                              "distributed.worker.profile.enabled": False}), workers_share_api(not dask_address):
            summary = parallel(source, out, extractor, columns, cache, id_prefix, shard_size, rejected_report,
                               extractor_options, workers=workers)
        summary.engine = f"Dask at {dask_address}" if dask_address else "Dask local cluster"
    else:
        summary = extract_reports(source, out, extractor, columns, cache, id_prefix, shard_size, rejected_report,
                                  extractor_options)
    ingested = None
    if ingest and summary.documents:
        ingested = ingest_flow([summary.radgraph_dir], doc_mapping=summary.doc_mapping,
                               batch_files=INGEST_BATCH_FILES,
                               rejected_report=ingest_rejected_report or _ingest_report(out, rejected_report),
                               progress=progress)
    return ExtractFlowResult(summary, ingested)


def _ingest_report(out: str, rejected_report: str | None) -> str:
    """The load's rejection report beside the extraction's (``x.json`` -> ``x-ingest.json``), else in ``out``."""
    if rejected_report:
        return str(companion_report(Path(rejected_report), "ingest"))
    return str(Path(out) / "rejected-ingest.json")
