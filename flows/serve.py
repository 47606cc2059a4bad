"""Scheduled ingestion: the drop-folder flow ``cxrkg-watch``, its deployment, the training deployment,
and the two ways cxrkg serves them.

* With a Prefect server (``PREFECT_API_URL`` set, e.g. after ``prefect server start``): the
  deployments are built with ``Flow.to_deployment`` and served with ``prefect.serve``; the server's
  scheduler creates the runs (cron or interval, in the given IANA time zone) and this process
  executes them. ``prefect.yaml`` describes the same deployment for ``prefect deploy`` to a work pool.
* Without one: Prefect's ephemeral API cannot schedule, so :func:`run_locally` computes the same
  schedule with Prefect's own schedule classes and calls the flows in this process at those times;
  the runs, logs and artifacts still go to Prefect's local database.

One run of ``cxrkg-watch`` (see ``graph.ingest.dropfolder`` for the drop-folder contract):

    scan (files younger than ``settle_seconds`` wait) -> ingest flow (only new or changed files, by
    content hash) -> rejected-files report (rewritten every run) -> archive (only committed files, if
    an archive folder is given) -> markdown artifact ``cxrkg-ingest-summary``

Every stage logs its counts and seconds.
"""

from __future__ import annotations

import asyncio
import time
import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from pathlib import Path
from typing import Any, Callable

from prefect import Flow, flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.schedules import Cron, Interval, Schedule

from flows.ingest_flow import DEFAULT_BATCH_FILES, IngestSummary, ingest_flow, stage
from graph.errors import CxrkgError
from graph.ingest.dropfolder import Moved, archive_files, check_folders, committed_files, loadable_files, settling_files
from graph.records import drop_folder_report_path, write_rejections
from graph.store import shared_store
from graph.vocabulary import vocabulary

WATCH_FLOW = "cxrkg-watch"
WATCH_DEPLOYMENT = "drop-folder"
TRAIN_DEPLOYMENT = "train"
ARTIFACT_KEY = "cxrkg-ingest-summary"
DEFAULT_SETTLE_SECONDS = 60.0


@dataclass
class WatchSummary:
    """What one ``cxrkg-watch`` run did.

    ``settling``: input files left for the next run because they were modified less than
    ``settle_seconds`` ago. ``archived``: files moved to the archive folder. ``stage_seconds``: seconds
    per stage (scan, ingest, report, archive, artifact).
    """

    drop_folder: str
    ingest: IngestSummary
    settling: list[str] = field(default_factory=list)
    archived: list[Moved] = field(default_factory=list)
    rejected_report: str | None = None
    stage_seconds: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.ingest.ok


def default_rejected_report(drop_folder: str | Path) -> str:
    """The drop folder's own report in ``CXRKG_HOME/rejected`` (:func:`graph.records.drop_folder_report_path`),
    where every command's rejection reports go, out of the folder watched."""
    return str(drop_folder_report_path(Path(drop_folder)))


@task(cache_policy=NO_CACHE)
def scan(drop_folder: str, settle_seconds: float, report: str) -> list[str]:
    """Input files of the drop folder still too young to read (never the rejected-files report)."""
    started = time.perf_counter()
    young = settling_files(Path(drop_folder), settle_seconds, exclude=[report])
    get_run_logger().info("stage scan: %d files settling (modified < %.0fs ago) in %.2fs", len(young),
                          settle_seconds, time.perf_counter() - started)
    return young


@task(cache_policy=NO_CACHE)
def archive(drop_folder: str, archive_folder: str, exclude: list[str], rejected_files: list[str]) -> list[Moved]:
    """Move the committed files of the drop folder (never a rejected one) to the archive folder."""
    started = time.perf_counter()
    skip = set(rejected_files)
    candidates = [f for f in loadable_files(Path(drop_folder), exclude) if f.path not in skip]
    committed = committed_files(shared_store(), candidates, vocabulary().version)
    moved = archive_files(committed, Path(drop_folder), Path(archive_folder))
    get_run_logger().info("stage archive: %d candidate files, %d committed, %d moved to %s in %.2fs",
                          len(candidates), len(committed), len(moved), archive_folder, time.perf_counter() - started)
    return moved


def summary_markdown(summary: WatchSummary) -> str:
    """The run summary as markdown tables: counts, seconds per stage, and up to 50 rejections."""
    s = summary.ingest
    rows = [("files seen", s.files_seen), ("files loaded (new or changed)", s.files_loaded),
            ("files unchanged", s.files_unchanged), ("files rejected", s.files_rejected),
            ("files settling (next run)", len(summary.settling)), ("files archived", len(summary.archived)),
            ("records loaded", s.records_loaded), ("mentions loaded", s.mentions_loaded),
            ("graph elements created", s.elements_created), ("patients relinked", s.patients_relinked),
            ("studies in graph", s.studies), ("observations in graph", s.observations),
            ("progression edges in graph", s.progression_edges), ("unmapped terms", s.unmapped_terms),
            ("rejected records", len(s.rejections)), ("seconds", f"{summary.seconds:.1f}")]
    out = [f"# cxrkg ingest: `{summary.drop_folder}`", "", "| metric | value |", "|---|---:|"]
    out += [f"| {k} | {v} |" for k, v in rows]
    stages = {**{f"ingest: {k}": v for k, v in s.stage_seconds.items()}, **summary.stage_seconds}
    out += ["", "| stage | seconds |", "|---|---:|"] + [f"| {k} | {v:.2f} |" for k, v in stages.items()]
    if s.rejections:
        out += ["", f"## Rejections ({len(s.rejections)}; report: `{summary.rejected_report}`)", "",
                "| file | record | field | reason |", "|---|---|---|---|"]
        out += [f"| {_cell(r.file)} | {_cell(r.record)} | {_cell(r.field)} | {_cell(r.reason)} |"
                for r in s.rejections[:50]]
        if len(s.rejections) > 50:
            out.append(f"\n... {len(s.rejections) - 50} more in the report")
    return "\n".join(out) + "\n"


def _cell(value: Any) -> str:
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


@flow(name=WATCH_FLOW, log_prints=False)
def watch_flow(drop_folder: str, archive_folder: str | None = None, rejected_report: str | None = None,
               doc_mapping: str | None = None, settle_seconds: float = DEFAULT_SETTLE_SECONDS,
               batch_files: int = DEFAULT_BATCH_FILES) -> WatchSummary:
    """Ingest what is new or changed in a drop folder; the flow the scheduled deployment runs.

    Args:
        drop_folder: the folder watched (searched recursively).
        archive_folder: where committed files are moved (outside the drop folder); None leaves every
            file in place (re-runs then skip them by content hash).
        rejected_report: the rejected-files report (JSON list of {file, record, field, reason}),
            rewritten on every run (an empty list when nothing is rejected); default
            ``CXRKG_HOME/rejected/serve-<folder name>-<hash of its path>.json``.
        doc_mapping: CSV mapping RadGraph doc_keys to patient, study and date.
        settle_seconds: files modified less than this many seconds ago wait for the next run.
        batch_files: files per load task.

    Returns:
        the run's :class:`WatchSummary`; it is also published as the markdown artifact
        ``cxrkg-ingest-summary``.

    Raises:
        FileNotFoundError, NotADirectoryError, ValueError: see ``graph.ingest.dropfolder.check_folders``.
    """
    started = time.perf_counter()
    drop = Path(drop_folder).resolve()
    check_folders(drop, Path(archive_folder) if archive_folder else None)
    report = str(Path(rejected_report).resolve()) if rejected_report else default_rejected_report(drop)
    stages: dict[str, float] = {}
    logger = get_run_logger()
    with stage(stages, "scan"):
        young = scan(str(drop), settle_seconds, report)
    with stage(stages, "ingest"):
        ingested = ingest_flow([str(drop)], doc_mapping=doc_mapping, batch_files=batch_files, rejected_report=None,
                               exclude=young + [report])
    with stage(stages, "report"):
        write_rejections(Path(report), ingested.rejections)
        ingested.rejected_report = report
    logger.info("stage report: %d rejections written to %s in %.2fs", len(ingested.rejections), report,
                stages["report"])
    summary = WatchSummary(str(drop), ingested, settling=young, rejected_report=report)
    if archive_folder:
        with stage(stages, "archive"):
            summary.archived = archive(str(drop), str(Path(archive_folder).resolve()), young + [report],
                                       sorted({r.file for r in ingested.rejections}))
    summary.seconds = time.perf_counter() - started
    summary.stage_seconds = {k: round(v, 3) for k, v in stages.items()}
    with stage(stages, "artifact"):
        create_markdown_artifact(summary_markdown(summary), key=ARTIFACT_KEY,
                                 description=f"cxrkg ingest of {drop}: {ingested.files_loaded} files loaded, "
                                             f"{len(ingested.rejections)} rejections")
    logger.info("stage artifact: %s in %.2fs", ARTIFACT_KEY, stages["artifact"])
    logger.info("watch: %d loaded, %d unchanged, %d rejected, %d settling, %d archived in %.1fs",
                ingested.files_loaded, ingested.files_unchanged, ingested.files_rejected, len(young),
                len(summary.archived), time.perf_counter() - started)
    return summary


# --- schedules and deployments -------------------------------------------------------------------

class ScheduleError(CxrkgError, ValueError):
    """A schedule that cannot be made or served: a bad time zone, cron expression or interval, or no
    Prefect server to serve it to."""


def time_zone(name: str) -> zoneinfo.ZoneInfo:
    """The IANA time zone ``name`` (``Europe/Berlin``, ``UTC``).

    Raises:
        ScheduleError: no such time zone.
    """
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ScheduleError(f"unknown time zone {name!r}; use an IANA name such as Europe/Berlin or UTC") from exc


def make_schedule(timezone: str, cron: str | None = None, interval_seconds: float | None = None) -> Schedule:
    """A Prefect schedule from a cron expression or an interval, in an explicit IANA time zone.

    Interval schedules are anchored at midnight of today in that zone, so ``3600`` runs on the hour.

    Raises:
        ScheduleError: both or neither of ``cron`` / ``interval_seconds`` given, an unknown time zone, a
            cron expression Prefect rejects, or a non-positive interval.
    """
    if (cron is None) == (interval_seconds is None):
        raise ScheduleError("give exactly one of a cron expression or an interval")
    tz = time_zone(timezone)
    if cron is not None:
        try:
            return Cron(cron, timezone=timezone)
        except ValueError as exc:
            raise ScheduleError(f"invalid cron expression {cron!r}: {exc}") from exc
    assert interval_seconds is not None  # exactly one of the two was given
    if interval_seconds <= 0:
        raise ScheduleError(f"interval must be positive, got {interval_seconds}")
    anchor = datetime.now(tz).replace(hour=0, minute=0, second=0, microsecond=0)
    return Interval(timedelta(seconds=interval_seconds), anchor_date=anchor, timezone=timezone)


def next_run_times(schedule: Schedule, after: datetime, n: int = 1) -> list[datetime]:
    """The next ``n`` times (timezone-aware, in the schedule's zone) a schedule fires after ``after``.

    Computed by Prefect's server-side schedule classes, so a local loop and a Prefect server agree.
    """
    from prefect.server.schemas import schedules as server_schedules

    s: server_schedules.CronSchedule | server_schedules.IntervalSchedule
    if schedule.cron:
        s = server_schedules.CronSchedule(cron=schedule.cron, timezone=schedule.timezone, day_or=schedule.day_or)
    else:
        assert schedule.interval is not None  # a schedule has a cron expression or an interval
        # pydantic validates the plain datetime into Prefect's DateTime type
        s = server_schedules.IntervalSchedule(interval=schedule.interval,
                                              anchor_date=schedule.anchor_date,
                                              timezone=schedule.timezone)
    if after.tzinfo is None:
        after = after.replace(tzinfo=dt_timezone.utc)
    dates = asyncio.run(s.get_dates(n=n + 1, start=after))
    out: list[datetime] = [d for d in dates if d > after]
    return out[:n]


def watch_deployment(drop_folder: str, schedule: Schedule, archive_folder: str | None = None,
                     rejected_report: str | None = None, doc_mapping: str | None = None,
                     settle_seconds: float = DEFAULT_SETTLE_SECONDS, name: str = WATCH_DEPLOYMENT):
    """The ``cxrkg-watch/drop-folder`` deployment (a ``RunnerDeployment``), one run at a time.

    Raises:
        FileNotFoundError, NotADirectoryError, ValueError: bad folders (``graph.ingest.dropfolder.check_folders``).
    """
    drop = Path(drop_folder).resolve()
    check_folders(drop, Path(archive_folder) if archive_folder else None)
    parameters = {"drop_folder": str(drop), "settle_seconds": settle_seconds,
                  "archive_folder": str(Path(archive_folder).resolve()) if archive_folder else None,
                  "rejected_report": str(Path(rejected_report).resolve()) if rejected_report else None,
                  "doc_mapping": str(Path(doc_mapping).resolve()) if doc_mapping else None}
    return watch_flow.to_deployment(
        name=name, schedule=schedule, parameters=parameters, concurrency_limit=1, tags=["cxrkg", "ingest"],
        description=f"Ingest new or changed files of {drop} on a schedule ({_describe(schedule)}).")


def training_flow() -> Flow:
    """The training flow ``cxrkg-train``, imported on first use (it pulls in torch)."""
    from flows.train_flow import train_flow

    return train_flow


def train_deployment(schedule: Schedule | None = None, parameters: dict[str, Any] | None = None):
    """The training flow's deployment (``<flow name>/train``), scheduled or on demand."""
    return training_flow().to_deployment(name=TRAIN_DEPLOYMENT, schedule=schedule, parameters=parameters or {},
                               concurrency_limit=1, tags=["cxrkg", "train"],
                               description="Train the progression model on the current graph"
                                           + (f" ({_describe(schedule)})." if schedule else " (on demand)."))


def _describe(schedule: Schedule) -> str:
    if schedule.cron or schedule.interval is None:
        return f"cron {schedule.cron} {schedule.timezone}"
    return f"every {schedule.interval.total_seconds():g}s {schedule.timezone}"


def serve_deployments(*deployments) -> None:
    """Serve deployments with ``prefect.serve`` until interrupted; needs a Prefect server.

    Raises:
        ScheduleError: ``PREFECT_API_URL`` is not set (an ephemeral API cannot schedule; use
            :func:`run_locally` or start ``prefect server start``).
    """
    from prefect import serve
    from prefect.settings import PREFECT_API_URL

    if not PREFECT_API_URL.value():
        raise ScheduleError("PREFECT_API_URL is not set: start `prefect server start` and set PREFECT_API_URL, "
                           "or run the schedule locally")
    serve(*deployments)


@dataclass
class LocalJob:
    """A flow call and its schedule, for :func:`run_locally`."""

    name: str
    schedule: Schedule
    run: Callable[[], Any]


def run_locally(jobs: list[LocalJob], max_runs: int | None = None, now: Callable[[], datetime] | None = None,
                sleep: Callable[[float], None] = time.sleep, log: Callable[[str], None] = print) -> int:
    """Run flows on their schedules in this process (no Prefect server needed), one at a time.

    A run that is due while another runs starts when that one ends (runs never overlap, none is
    skipped twice in a row: the next time is computed after each run). Exceptions of a run are
    logged in one line and the loop goes on: a run that lost the server leaves its files in the drop
    folder (the watch flow archives only after its load), and a later run loads them once the server is back.

    Args:
        jobs: the flows and their schedules.
        max_runs: stop after this many runs (None: until interrupted).
        now: the clock (for tests; default: UTC now).
        sleep: waits that many seconds (for tests).
        log: takes each line of output (for tests).

    Returns:
        the number of runs started.
    """
    now = now or (lambda: datetime.now(dt_timezone.utc))
    due = {j.name: next_run_times(j.schedule, now())[0] for j in jobs}
    runs = 0
    for j in jobs:
        log(f"{j.name}: {_describe(j.schedule)}; next run {due[j.name].isoformat()}")
    while max_runs is None or runs < max_runs:
        job = min(jobs, key=lambda j: due[j.name])
        wait = (due[job.name] - now()).total_seconds()
        if wait > 0:
            sleep(wait)
        runs += 1
        try:
            job.run()
        except Exception as exc:  # keep serving; the flow run itself is marked failed in Prefect
            log(f"{job.name}: run failed: {_one_line(exc)}")
        due[job.name] = next_run_times(job.schedule, max(now(), due[job.name]))[0]
        log(f"{job.name}: next run {due[job.name].isoformat()}")
    return runs


def _one_line(exc: Exception) -> str:
    """A failed run's fault in one line: a cxrkg error's own words (a lost server says what to do), any
    other exception with its type, since it is a defect."""
    text = " ".join(str(exc).split())
    return text if isinstance(exc, CxrkgError) else f"{type(exc).__name__}: {text}"


# --- what `cxrkg serve` runs ---------------------------------------------------------------------

@dataclass
class ServePlan:
    """What ``cxrkg serve`` runs: the watch flow's parameters, and unless ``once`` its schedule, the training
    schedule (None: training on demand) and where the schedule is served (``use_server``: to the Prefect
    server at PREFECT_API_URL; else in this process)."""

    params: dict[str, Any]
    once: bool = False
    schedule: Schedule | None = None
    train_schedule: Schedule | None = None
    use_server: bool = False


def use_prefect_server(local: bool | None, api_url: str | None) -> bool:
    """Whether to serve to a Prefect server: ``local`` says (True: this process), else whether ``api_url``
    (PREFECT_API_URL) is set.

    Raises:
        ScheduleError: the server asked for (``local`` False) and no ``api_url``.
    """
    use_server = bool(api_url) if local is None else not local
    if use_server and not api_url:
        raise ScheduleError("--prefect-server: PREFECT_API_URL is not set (start `prefect server start` and "
                            "`prefect config set PREFECT_API_URL=http://127.0.0.1:4200/api`)")
    return use_server


def serve_plan(drop_folder: Path, timezone: str, cron: str | None = None, interval: float | None = None,
               archive: Path | None = None, rejected: Path | None = None, doc_mapping: Path | None = None,
               settle_seconds: float = DEFAULT_SETTLE_SECONDS, train_cron: str | None = None, once: bool = False,
               local: bool | None = None) -> ServePlan:
    """The watch flow's parameters and, unless ``once``, its schedule in ``timezone`` (``cron`` or ``interval``
    seconds), the training schedule (``train_cron``) and where to serve them (:func:`use_prefect_server`).
    The time zone and the folders are checked with ``once`` too.

    Raises:
        ScheduleError: a bad time zone, cron expression or interval, or no server to serve to.
        graph.ingest.dropfolder.DropFolderError: a missing drop folder or an archive inside it.
    """
    from prefect.settings import PREFECT_API_URL

    time_zone(timezone)
    check_folders(drop_folder, archive)
    params = {"drop_folder": str(drop_folder.resolve()), "archive_folder": str(archive) if archive else None,
              "rejected_report": str(rejected) if rejected else None,
              "doc_mapping": str(doc_mapping) if doc_mapping else None, "settle_seconds": settle_seconds}
    if once:
        return ServePlan(params, once=True)
    schedule = make_schedule(timezone, cron=cron, interval_seconds=interval)
    train_schedule = make_schedule(timezone, cron=train_cron) if train_cron else None
    return ServePlan(params, False, schedule, train_schedule, use_prefect_server(local, PREFECT_API_URL.value()))
