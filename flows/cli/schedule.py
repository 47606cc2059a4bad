"""``cxrkg serve``: scheduled ingestion of a drop folder. Prefect is imported inside the command only, so
the quick commands stay quick.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from flows.cli.app import app
from flows.cli.common import console, existing, store_or_fail
from graph.errors import ExitCode


@app.command()
def serve(drop_folder: Path = typer.Argument(..., callback=existing, file_okay=False, help="the drop folder to watch"),
          timezone: str = typer.Option(..., "--timezone", "--tz",
                                       help="IANA time zone of the schedule, e.g. Europe/Berlin or UTC"),
          cron: Optional[str] = typer.Option(None, help="cron schedule, e.g. '*/15 * * * *' (not with --once)"),
          interval: Optional[float] = typer.Option(None, help="interval schedule in seconds (instead of --cron)"),
          archive: Optional[Path] = typer.Option(None, file_okay=False,
                                                 help="move committed files here (outside the drop folder)"),
          rejected: Optional[Path] = typer.Option(None, "--rejected", dir_okay=False, help="the rejection report, "
                                                  "rewritten every run (default: one per drop folder in "
                                                  "CXRKG_HOME/rejected)"),
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
    store_or_fail()
    from flows import serve as srv

    # ScheduleError, DropFolderError (also with --once): one error line
    plan = srv.serve_plan(drop_folder, timezone, cron, interval, archive, rejected, doc_mapping, settle_seconds,
                          train_cron, once, local)
    if plan.once:
        _run_once(srv, plan.params)
    elif plan.use_server:
        _serve_to_prefect(srv, plan)
    else:
        _serve_here(srv, plan)


def _run_once(srv, params: dict) -> None:
    """One watch-flow run now; exit code 6 when anything was rejected."""
    summary = srv.watch_flow(**params)
    console.print(f"{summary.ingest.files_loaded} files loaded, {summary.ingest.files_unchanged} unchanged, "
                  f"{summary.ingest.files_rejected} rejected, {len(summary.settling)} settling, "
                  f"{len(summary.archived)} archived; report {summary.rejected_report}")
    if not summary.ok:
        raise typer.Exit(ExitCode.REJECTED)


def _serve_to_prefect(srv, plan) -> None:
    """The watch (and training) deployments, served to the Prefect server at PREFECT_API_URL."""
    deployments = [srv.watch_deployment(schedule=plan.schedule, **plan.params)]
    deployments.append(srv.train_deployment(plan.train_schedule))
    srv.serve_deployments(*deployments)  # ScheduleError without PREFECT_API_URL: one error line


def _serve_here(srv, plan) -> None:
    """The schedule run in this process until Ctrl-C."""
    params = plan.params
    jobs = [srv.LocalJob(f"{srv.WATCH_FLOW}/{srv.WATCH_DEPLOYMENT}", plan.schedule, lambda: srv.watch_flow(**params))]
    if plan.train_schedule is not None:
        train = srv.training_flow()
        jobs.append(srv.LocalJob(f"{train.name}/{srv.TRAIN_DEPLOYMENT}", plan.train_schedule, train))
    console.print("no Prefect server (PREFECT_API_URL unset): running the schedule in this process; "
                  "Ctrl-C stops it")
    try:
        srv.run_locally(jobs, log=console.print)
    except KeyboardInterrupt:
        console.print("stopped")
