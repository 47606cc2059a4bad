"""The bulk first load (``cxrkg ingest --bulk``): check -> plan -> write import files -> stop the local
server -> ``neo4j-admin database import full`` -> start it -> constraints, indexes, vocabulary -> summary.

The files come from the same parsing, checks and derivation as the transactional load
(:class:`graph.ingest.bulk.BulkSink` stands in for the store), so the graph is the same; later runs of
``cxrkg ingest`` continue on top of it transactionally (the SourceFile rows record what was loaded).
"""

from __future__ import annotations

import errno
import importlib.util
import shutil
import time
from collections import Counter, deque
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Callable, Iterator

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.cpu import busy_cores, cpu_seconds
from flows.ingest_flow import DEFAULT_BATCH_FILES, IngestSummary, progress_bar, stage, write_report
from graph.errors import CxrkgError
from graph.ingest import BatchResult, IngestPlan, InputFile, discover, parsed_ahead, plan_ingest, store_files
from graph.ingest.bulk import BulkInputError, BulkSink, write_part
from graph.ingest.import_files import ImportFiles, import_arguments, keep_files
from graph.runtime.import_staging import free_megabytes, megabytes, new_import_folder, recover
from graph.runtime.processes import available_cores, forked_pool, worker_count
from graph.runtime.server import LocalNeo4jServer
from graph.settings import local_server_settings, neo4j_settings
from graph.store import reset_shared_store, shared_store
from graph.vocabulary import Vocabulary, vocabulary

MAX_WORKERS = 8  # local processes writing batches at once


class BulkRefused(CxrkgError, RuntimeError):
    """A bulk load cannot run here: another server than the local one, a database that holds data, or a
    Dask scheduler that does not answer. The message says what to do instead."""


@task(cache_policy=NO_CACHE)
def check_target(server: LocalNeo4jServer) -> None:
    """Refuse unless the target is the local server and its database holds no data. A stopped server whose
    database exists is started to look and stopped again (a server that was running is stopped by the
    flow while it writes the import files).

    Raises:
        BulkRefused: NEO4J_URI names another server, or the local database holds data.
    """
    settings = neo4j_settings()
    if settings.external:
        raise BulkRefused(f"--bulk writes the local server's files; NEO4J_URI names {settings.uri}. Load "
                          "without --bulk, or unset NEO4J_URI to use the local server")
    for line in recover(server.settings.home, server.settings.data_dir):  # what a killed bulk load left
        get_run_logger().info("%s", line)
    running = server.status().running
    if not running and not (server.settings.data_dir / "databases" / (settings.database or "neo4j")).exists():
        return
    server.start()
    try:
        holds_data = shared_store().holds_data()
    finally:
        reset_shared_store()
        if not running:
            server.stop()
    if holds_data:
        raise BulkRefused("the database already holds data; --bulk only makes a first load. Load without "
                          "--bulk to add to it, or `cxrkg db stop`, delete "
                          f"{server.settings.data_dir} and `cxrkg db start --fresh` to start over")


class OutOfSpace(CxrkgError, OSError):
    """A stage of the bulk load ran out of disk space; the message says which, how much it had and wrote."""


@contextmanager
def out_of_space(name: str, folder: Path) -> Iterator[None]:
    """Turn a full disk while stage ``name`` writes into ``folder`` into :class:`OutOfSpace`."""
    free = free_megabytes(folder)
    try:
        yield
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        raise OutOfSpace(f"the {name} stage ran out of disk space in {folder.parent}: it had {free:,.0f} MB free "
                         f"and needed more (the import files it wrote so far take {megabytes(folder):,.0f} MB); "
                         "the database is as it was. Free space, then run the same command again") from exc


@dataclass(frozen=True)
class FilesEngine:
    """Where the files stage writes batches of patient-hinted files: ``workers`` processes of this machine
    (forked; 0: this process writes them), a new local Dask cluster of ``workers`` single-threaded processes
    (``dask="local"``), or the Dask scheduler at ``dask`` (``tcp://host:8786``; its workers must see the
    input and the server's home at the same paths)."""

    workers: int
    dask: str | None = None

    @classmethod
    def choose(cls, workers: int | None, dask_address: str | None) -> "FilesEngine":
        """``dask_address`` wins: ``local``, a new local Dask cluster of ``workers`` processes (default one
        per core found), else that scheduler; without it ``workers`` local processes, as ``--workers`` means
        everywhere (:func:`graph.runtime.processes.worker_count`: 0 in this process; unset one per core
        found, this process on a machine of one core).

        Raises:
            ValueError: ``workers`` below 0.
            BulkRefused: Dask asked for and not installed.
        """
        if workers is not None and workers < 0:
            raise ValueError(f"--workers must be 0 or more, got {workers}")
        if dask_address and importlib.util.find_spec("distributed") is None:
            raise BulkRefused("--dask-address runs the files stage on Dask, which is not installed: "
                              "pip install -e '.[extract]' (or leave it out: local processes)")
        if dask_address == "local":
            return cls(workers or available_cores(), "local")
        if dask_address:
            return cls(workers or 0, dask_address)
        return cls(worker_count(workers, 1, 1))

    @property
    def in_process(self) -> bool:
        """Whether this process writes every batch itself (no worker)."""
        return self.dask is None and self.workers == 0

    @property
    def name(self) -> str:
        if self.dask is None:
            return "this process" if self.workers == 0 else "local processes"
        return "Dask local cluster" if self.dask == "local" else f"Dask at {self.dask}"


@contextmanager
def _executor(engine: FilesEngine) -> Iterator[tuple[Executor, int]]:
    """An executor of the engine and how many tasks it runs at once (a Dask cluster's worker threads)."""
    if engine.dask is None:
        with forked_pool(engine.workers) as pool:
            yield pool, engine.workers
        return
    import dask
    from distributed import Client, LocalCluster

    # the worker profiler samples the task thread's stack every 10 ms for a dashboard no one opens here
    with dask.config.set({"distributed.worker.profile.enabled": False,
                          "distributed.admin.low-level-log-length": 8}):
        cluster = None
        if engine.dask == "local":
            cluster = LocalCluster(n_workers=engine.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        try:
            client = Client(cluster or engine.dask, timeout=30)
        except OSError as exc:
            if cluster is not None:
                cluster.close()
            raise BulkRefused(f"no Dask scheduler answers at {engine.dask} ({exc}); start one (`dask scheduler`) "
                              "or leave out --dask-address") from None
        try:
            threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values())
            yield client.get_executor(pure=False), max(1, threads)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


@dataclass
class BulkInput:
    """One input of a bulk load: its plan and doc mapping, the sink that writes its import files (a folder
    of its own) and its own summary (its files, rejections and elements)."""

    plan: IngestPlan
    doc_mapping: str | None
    summary: IngestSummary
    sink: BulkSink


def _hinted(the_plan: IngestPlan) -> bool:
    return bool(the_plan.load) and all(f.path in the_plan.patient_hints for f in the_plan.load)


def _write_inputs(inputs: list[BulkInput], batch_files: int, progress: bool, engine: FilesEngine) -> None:
    """Every input's batches through :func:`graph.ingest.store_files` into its own import files, then its
    parked patients.

    The largest input whose every file's patient is known before parsing is written by the engine's
    workers (batches are independent, each into files of its own: :func:`graph.ingest.bulk.write_part`).
    Every other input is written here, one batch after the other, parsed one ahead (in a file of many
    patients, a later file may hold more of a patient read earlier): a batch of it before each wait on
    the workers, so this process works while they do. With a single input that is the load of one cohort.
    """
    lead = None if engine.in_process else max((i for i in inputs if _hinted(i.plan)), key=lambda i: len(i.plan.load),
                                              default=None)
    for one in inputs:
        if one is not lead:
            one.summary.workers, one.summary.engine = (0, engine.name) if engine.in_process else \
                (1, "in turn: files of many patients")
    with progress_bar(progress) as bar:
        job = bar.add_task("writing import files", total=sum(len(i.plan.load) for i in inputs))
        in_turn = chain.from_iterable(_absorbed(i, _in_turn(i.plan, i.plan.batches(batch_files), i.doc_mapping,
                                                            i.sink)) for i in inputs if i is not lead)

        def beside() -> None:
            bar.advance(job, next(in_turn, 0))

        if lead is not None:
            for n in _absorbed(lead, _in_parts(lead.plan, lead.plan.batches(batch_files), lead.doc_mapping,
                                               lead.sink, engine, lead.summary, beside)):
                bar.advance(job, n)
        for n in in_turn:
            bar.advance(job, n)


def _absorbed(one: BulkInput, written: Iterator[tuple[list[InputFile], BatchResult]]) -> Iterator[int]:
    """Count each written batch into the input's summary (yields its number of files), then derive the
    input's parked patients."""
    summary = one.summary
    unlinked: set[str] = set()
    patients: set[str] = set()
    unmapped: Counter = Counter()
    for files, result in written:
        summary.add_batch(result)
        unmapped.update(result.unmapped_terms)
        unlinked = (unlinked - result.linked) | (result.patients - result.linked)
        patients |= result.patients
        yield len(files)
    one.sink.link_patients(unlinked)
    summary.patients_relinked = len(patients)
    summary.unmapped_terms = sum(unmapped.values())
    summary.top_unmapped = unmapped.most_common(10)


def _in_turn(the_plan: IngestPlan, batches: list[list[InputFile]], doc_mapping: str | None,
             sink: BulkSink) -> Iterator[tuple[list[InputFile], BatchResult]]:
    vocab = vocabulary()
    for files, parsed in parsed_ahead(batches, doc_mapping):  # files come back fingerprinted
        result = store_files(sink, files, parsed, vocab, set(), the_plan.metadata, set())
        sink.end_batch()
        yield files, result


def _in_parts(the_plan: IngestPlan, batches: list[list[InputFile]], doc_mapping: str | None, sink: BulkSink,
              engine: FilesEngine, summary: IngestSummary,
              beside: Callable[[], None]) -> Iterator[tuple[list[InputFile], BatchResult]]:
    """Batches written by the engine's workers, absorbed in batch order; at most two per worker in flight,
    ``beside()`` called before each wait on one. Local processes are forked, as
    :func:`graph.ingest.parsed_ahead`'s; never more than the batches."""
    if engine.dask is None:
        engine = FilesEngine(max(1, min(engine.workers, MAX_WORKERS, len(batches))))
    with _executor(engine) as (pool, workers):
        summary.workers, summary.engine = workers, engine.name
        pending: deque = deque()
        for k, files in enumerate(batches):
            pending.append((files, pool.submit(write_part, files, doc_mapping, the_plan.metadata,
                                               the_plan.patients_within(files), sink.files.folder / "parts", k,
                                               sink.loaded_at)))
            while len(pending) >= 2 * workers or (pending and k == len(batches) - 1):
                beside()
                done, future = pending.popleft()
                part = future.result()
                sink.absorb(part)
                yield done, part.result


def _count_and_report(summary: IngestSummary, inputs: list[BulkInput], rejected_report: str | None) -> None:
    """The summaries' counts and the rejected-files report (run while the importer runs)."""
    for one in inputs:
        _count_rows(one.summary, one.sink)
    _count_rows(summary, *(one.sink for one in inputs))
    write_report(summary, rejected_report)
    for one in inputs:
        one.summary.rejected_report = summary.rejected_report


def _count_rows(summary: IngestSummary, *sinks: BulkSink) -> None:
    """The summary's studies, observations and progression edges: rows of the sinks' import files."""
    rows: Counter[str] = Counter()
    for sink in sinks:
        for f in sink.listing():
            rows[f.group] += f.rows
    summary.studies, summary.observations = rows["nodes=Study"], rows["nodes=Observation"]
    summary.progression_edges = rows["relationships=PROGRESSION"]


def _plan_inputs(sources: list[tuple[list[str], str | None]], exclude: list[Path], folder: Path,
                 loaded_at: datetime) -> list[BulkInput]:
    """Each input planned on its own (the metadata CSVs of its paths, its patient hints), with a sink writing
    into ``folder`` (the first input) or a folder of its own in it.

    Raises:
        BulkInputError: a file found in two inputs.
    """
    vocab = vocabulary()
    inputs: list[BulkInput] = []
    seen: dict[str, int] = {}
    for k, (paths, doc_mapping) in enumerate(sources):
        skipped: list = []
        # fingerprints are taken where each file is read anyway (a first load compares them with nothing)
        files = discover([Path(p) for p in paths], exclude=exclude, fingerprints=False, skipped=skipped)
        for f in files:
            if (first := seen.setdefault(f.path, k)) != k:
                raise BulkInputError(f"{f.path} is in input {first + 1} and input {k + 1}; give it once")
        the_plan = plan_ingest(files, {}, vocab.version)
        the_plan.skipped = skipped
        inputs.append(BulkInput(the_plan, doc_mapping, IngestSummary(files_seen=len(the_plan.load),
                                                                     rejections=list(the_plan.rejections)),
                                BulkSink(ImportFiles(folder / f"input{k + 1}" if k else folder), vocab, loaded_at)))
    return inputs


def _add_input(summary: IngestSummary, one: IngestSummary) -> None:
    """Count one input's summary into the load's; the load's workers are those of its busiest input."""
    for name in ("files_seen", "files_loaded", "files_rejected", "records_loaded", "mentions_loaded",
                 "patients_relinked", "unmapped_terms", "ambiguous_comparisons"):
        setattr(summary, name, getattr(summary, name) + getattr(one, name))
    summary.rejections += one.rejections
    summary.top_unmapped = (Counter(dict(summary.top_unmapped)) + Counter(dict(one.top_unmapped))).most_common(10)
    for name, n in one.out_of_schema.items():
        summary.out_of_schema[name] = summary.out_of_schema.get(name, 0) + n
    for name, n in one.variants.items():
        summary.variants[name] = summary.variants.get(name, 0) + n
    if one.workers > summary.workers or not summary.engine:
        summary.workers, summary.engine = one.workers, one.engine


def _check_apart(inputs: list[BulkInput]) -> None:
    """Raises BulkInputError when two inputs wrote the same patient, study, image or report."""
    for k, one in enumerate(inputs):
        for n, other in enumerate(inputs[:k]):
            if shared := other.sink.shared_with(one.sink):
                raise BulkInputError(f"{shared} is in input {n + 1} and input {k + 1}; a bulk load of several "
                                     "inputs needs them apart: give them as one input, or load the later one "
                                     "without --bulk afterwards")


def _files_and_import(server: LocalNeo4jServer, sources: list[tuple[list[str], str | None]],
                      summary: IngestSummary, stages: dict[str, float], engine: FilesEngine,
                      options: dict) -> list[BulkInput]:
    """The plan, files and import stages of every input (``options``: the flow's batch_files, progress,
    rejected_report and keep_import_files), with Neo4j's steps that need no Python beside cxrkg's work:
    the server's stop while the files are written, the counts and the rejected-files report while the
    importer runs. The import files are deleted at the end (or kept, moved). Returns the inputs, each
    with its summary."""
    vocab = vocabulary()
    folder = new_import_folder(server.settings.home)
    report = options["rejected_report"]
    with ThreadPoolExecutor(1) as aside:
        try:
            stopped = aside.submit(server.stop)  # the importer needs the server down
            with stage(stages, "plan"), busy_cores(summary.stage_cores, "plan"):
                inputs = _plan_inputs(sources, [Path(report)] if report else [], folder, datetime.now())
            cpu = cpu_seconds()
            with stage(stages, "files"), busy_cores(summary.stage_cores, "files"), out_of_space("files", folder):
                _write_inputs(inputs, options["batch_files"], options["progress"], engine)
                _check_apart(inputs)
                for k, one in enumerate(inputs):  # the vocabulary's nodes once, with the first input
                    one.sink.finish(vocab if k == 0 else None)
                    one.summary.elements_created = sum(f.rows for f in one.sink.listing())
                    _add_input(summary, one.summary)
            if not summary.engine.startswith("Dask"):  # Dask's workers are not this process's children
                summary.files_cpu_seconds = round(cpu_seconds() - cpu, 3)
            summary.elements_created = sum(one.summary.elements_created for one in inputs)
            listing = [f for one in inputs for f in one.sink.listing()]
            with stage(stages, "import"), busy_cores(summary.stage_cores, "import"):
                stopped.result()
                counted = aside.submit(_count_and_report, summary, inputs, report)
                database = neo4j_settings().database or "neo4j"
                server.import_database(import_arguments(database, listing, folder / "import.report"), folder, database)
                counted.result()
            if options["keep_import_files"]:
                keep_files(listing, folder, Path(options["keep_import_files"]))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return inputs


def _start_and_link(server: LocalNeo4jServer, vocab: Vocabulary, summary: IngestSummary,
                    stages: dict[str, float]) -> None:
    """After the import: start the server on the new database, make the schema and the vocabulary's nodes,
    and run the geometry link step (graph.measurements.trends), which the import files do not hold."""
    with stage(stages, "start"), busy_cores(summary.stage_cores, "start"):
        server.start(fresh=True)  # the import just made the database, also where the home's data were gone
    with stage(stages, "schema"), busy_cores(summary.stage_cores, "schema"):
        reset_shared_store()
        shared_store().ensure_schema(vocab)
    with stage(stages, "geometry"), busy_cores(summary.stage_cores, "geometry"):
        summary.progression_edges += shared_store().link_geometry()  # as a transactional load counts them


@flow(name="cxrkg-bulk-ingest", log_prints=False)
def bulk_ingest_flow(paths: list[str], doc_mapping: str | None = None, batch_files: int = DEFAULT_BATCH_FILES,
                     rejected_report: str | None = "cxrkg-rejected.json", progress: bool = False,
                     keep_import_files: str | None = None, workers: int | None = None,
                     dask_address: str | None = None,
                     also: list[tuple[list[str], str | None]] | None = None) -> IngestSummary:
    """Load a first cohort into the empty local database through ``neo4j-admin database import full``.

    The server's stop runs beside the files stage, and the summary's counts and the rejected-files report
    beside the importer.

    Args: as :func:`flows.ingest_flow.ingest_flow`; ``keep_import_files``: a new folder to move the import
        files to, with their listing (:func:`graph.ingest.import_files.keep_files`), instead of deleting them;
        ``workers`` and ``dask_address``: where the files stage writes its batches (:meth:`FilesEngine.choose`:
        ``workers`` local processes, 0: this process, by default one per core found; ``dask_address``: an
        existing Dask scheduler, or ``local``: a new local Dask cluster of ``workers``). The summary's ``workers`` and ``engine``
        say which ran. ``also``: more inputs, each ``(paths, doc_mapping)``, imported in the same import as
        ``paths``: each planned and written on its own (:func:`_write_inputs`), into the graph that loading
        them one after the other makes, when they share no patient, study, image, report or file.

    Returns:
        the run summary (``elements_created``: nodes plus relationships imported, as are its studies,
        observations and progression edges, not the geometry link step's, which runs after the import;
        ``stage_seconds``: check, plan, files, import, start, schema, geometry;
        ``stage_cores``: the machine's busy cores in each, :func:`flows.cpu.busy_cores`);
        with ``also``, ``inputs`` holds each input's own summary (the vocabulary's nodes counted in the first).

    Raises:
        BulkRefused: the target is not the local server, its database holds data, or no Dask scheduler
            answers at ``dask_address``.
        graph.ingest.bulk.BulkInputError: the same record in two files, or two inputs that share a
            patient, study, record or file (nothing imported).
        graph.runtime.server.ServerError: the import or the restart failed.
        ValueError: ``workers`` below 0.
    """
    started = time.perf_counter()
    engine = FilesEngine.choose(workers, dask_address)
    stages: dict[str, float] = {}
    server = LocalNeo4jServer(local_server_settings())
    vocab = vocabulary()
    summary = IngestSummary()
    with stage(stages, "check"), busy_cores(summary.stage_cores, "check"):
        check_target(server)
    inputs = _files_and_import(server, [(paths, doc_mapping), *(also or [])], summary, stages, engine, dict(
        batch_files=batch_files, progress=progress, rejected_report=rejected_report,
        keep_import_files=keep_import_files))
    _start_and_link(server, vocab, summary, stages)
    summary.seconds = time.perf_counter() - started
    summary.stage_seconds = {k: round(v, 3) for k, v in stages.items()}
    if also:
        summary.inputs = [one.summary for one in inputs]
        for one in summary.inputs:
            one.seconds, one.stage_seconds = summary.seconds, summary.stage_seconds
            one.stage_cores = summary.stage_cores
    get_run_logger().info("bulk load: %d files, %d elements imported, %d rejections in %.1fs (stages %s)",
                          summary.files_loaded, summary.elements_created, len(summary.rejections), summary.seconds,
                          summary.stage_seconds)
    return summary
