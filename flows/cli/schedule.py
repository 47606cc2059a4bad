"""``cxrkg serve``: scheduled ingestion of a drop folder. Prefect is imported inside the command only, so
the quick commands stay quick.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from flows.cli.app import app
from flows.cli.common import console, existing, fail, store_or_fail
from graph.errors import ExitCode


@app.command()
def serve(drop_folder: Path = typer.Argument(..., callback=existing, file_okay=False, help="the drop folder to watch"),
          timezone: str = typer.Option(..., "--timezone", "--tz",
                                       help="IANA time zone of the schedule, e.g. Europe/Berlin or UTC"),
          cron: Optional[str] = typer.Option(None, help="cron schedule, e.g. '*/15 * * * *' (not with --once)"),
          interval: Optional[float] = typer.Option(None, help="interval schedule in seconds (instead of --cron)"),
          archive: Optional[Path] = typer.Option(None, file_okay=False,
                                                 help="move committed files here (outside the drop folder)"),
          rejected: Optional[Path] = typer.Option(None, dir_okay=False, help="rejected-files report, rewritten every "
                                                  "run (default: cxrkg-rejected.json in the drop folder)"),
          doc_mapping: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False,
                                                     help="CSV of doc_key, patient_id, study_id and "
                                                          "optionally study_datetime"),
          settle_seconds: float = typer.Option(60.0, min=0, help="files modified more recently wait for the "
                                                                 "next run"),
          train_cron: Optional[str] = typer.Option(None, help="also train on this cron schedule (same time "
                                                              "zone); without it training is on demand"),
          once: bool = typer.Option(False, "--once", help="run the watch flow once now and exit (exit code 6 "
                                                          "when anything was rejected), e.g. from cron/systemd"),
          local: Optional[bool] = typer.Option(None, "--local/--prefect-server",
                                               help="run the schedule in this process, or serve the deployments "
                                                    "to the Prefect server at PREFECT_API_URL (default: the "
                                                    "server when PREFECT_API_URL is set)")) -> None:
    """Watch a drop folder on a cron or interval schedule and ingest what is new or changed (and serve the
    training flow's deployment when flows/train_flow.py exists)."""
    from graph.ingest.dropfolder import check_folders

    store_or_fail()
    from flows import serve as srv

    srv.time_zone(timezone)  # ScheduleError, also with --once; DropFolderError below: one error line
    check_folders(drop_folder, archive)
    schedule = None if once else srv.make_schedule(timezone, cron=cron, interval_seconds=interval)
    train_schedule = srv.make_schedule(timezone, cron=train_cron) if train_cron and not once else None
    params = {"drop_folder": str(drop_folder.resolve()), "archive_folder": str(archive) if archive else None,
              "rejected_report": str(rejected) if rejected else None,
              "doc_mapping": str(doc_mapping) if doc_mapping else None, "settle_seconds": settle_seconds}
    if once:
        _run_once(srv, params)
        return

    from prefect.settings import PREFECT_API_URL

    api = PREFECT_API_URL.value()  # from the environment or the active Prefect profile
    use_server = bool(api) if local is None else not local
    if use_server and not api:
        fail("--prefect-server: PREFECT_API_URL is not set (start `prefect server start` and "
             "`prefect config set PREFECT_API_URL=http://127.0.0.1:4200/api`)")
    train = srv.training_flow()
    if use_server:
        _serve_to_prefect(srv, params, schedule, train_schedule)
    else:
        _serve_here(srv, params, schedule, train, train_schedule)


def _run_once(srv, params: dict) -> None:
    """One watch-flow run now; exit code 6 when anything was rejected."""
    summary = srv.watch_flow(**params)
    console.print(f"{summary.ingest.files_loaded} files loaded, {summary.ingest.files_unchanged} unchanged, "
                  f"{summary.ingest.files_rejected} rejected, {len(summary.settling)} settling, "
                  f"{len(summary.archived)} archived; report {summary.rejected_report}")
    if not summary.ok:
        raise typer.Exit(ExitCode.REJECTED)


def _serve_to_prefect(srv, params: dict, schedule, train_schedule) -> None:
    """The watch (and training) deployments, served to the Prefect server at PREFECT_API_URL."""
    deployments = [srv.watch_deployment(schedule=schedule, **params)]
    deployments.append(srv.train_deployment(train_schedule))
    srv.serve_deployments(*deployments)  # ScheduleError without PREFECT_API_URL: one error line


def _serve_here(srv, params: dict, schedule, train, train_schedule) -> None:
    """The schedule run in this process until Ctrl-C."""
    jobs = [srv.LocalJob(f"{srv.WATCH_FLOW}/{srv.WATCH_DEPLOYMENT}", schedule, lambda: srv.watch_flow(**params))]
    if train_schedule is not None:
        jobs.append(srv.LocalJob(f"{train.name}/{srv.TRAIN_DEPLOYMENT}", train_schedule, train))
    console.print("no Prefect server (PREFECT_API_URL unset): running the schedule in this process; "
                  "Ctrl-C stops it")
    try:
        srv.run_locally(jobs, log=console.print)
    except KeyboardInterrupt:
        console.print("stopped")
