"""Schedules of the scheduled-ingestion flows (no database): cron and interval schedules in an explicit
time zone, the local loop that runs them without a Prefect server, and prefect.yaml's deployments."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

BERLIN = ZoneInfo("Europe/Berlin")


def test_cron_schedule_fires_at_local_time_in_its_zone():
    from flows.serve import make_schedule, next_run_times

    s = make_schedule("Europe/Berlin", cron="30 2 * * *")
    winter = next_run_times(s, datetime(2026, 1, 10, 12, tzinfo=timezone.utc), 2)
    summer = next_run_times(s, datetime(2026, 7, 10, 12, tzinfo=timezone.utc), 1)
    assert [d.astimezone(BERLIN).strftime("%m-%d %H:%M") for d in winter] == ["01-11 02:30", "01-12 02:30"]
    assert summer[0].astimezone(timezone.utc).hour == 0 and summer[0].astimezone(BERLIN).hour == 2  # CEST
    assert winter[0].astimezone(timezone.utc).hour == 1  # CET

    hourly = make_schedule("America/New_York", interval_seconds=3600)
    first, second = next_run_times(hourly, datetime(2026, 1, 10, 12, 5, tzinfo=timezone.utc), 2)
    assert (second - first) == timedelta(hours=1) and first.astimezone(ZoneInfo("America/New_York")).minute == 0

    for bad in ({"cron": "61 * * * *"}, {}, {"cron": "* * * * *", "interval_seconds": 60},
                {"interval_seconds": -5}):
        with pytest.raises(ValueError):
            make_schedule("UTC", **bad)
    with pytest.raises(ValueError, match="time zone"):
        make_schedule("Mars/Olympus", cron="* * * * *")


def test_local_loop_runs_each_job_at_its_scheduled_times():
    from flows.serve import LocalJob, make_schedule, run_locally

    clock = [datetime(2026, 1, 10, 0, 0, 30, tzinfo=timezone.utc)]
    ran: list[tuple[str, datetime]] = []
    jobs = [LocalJob("watch", make_schedule("UTC", cron="*/15 * * * *"), lambda: ran.append(("watch", clock[0]))),
            LocalJob("train", make_schedule("Europe/Berlin", cron="0 2 * * *"), lambda: ran.append(("train", clock[0])))]

    def sleep(seconds: float) -> None:
        clock[0] += timedelta(seconds=seconds)

    assert run_locally(jobs, max_runs=6, now=lambda: clock[0], sleep=sleep, log=lambda _: None) == 6
    # 02:00 in Berlin is 01:00 UTC in January; a tie runs in the order the jobs were given
    assert [(n, t.strftime("%H:%M")) for n, t in ran] == [
        ("watch", "00:15"), ("watch", "00:30"), ("watch", "00:45"), ("watch", "01:00"), ("train", "01:00"),
        ("watch", "01:15")]


def test_training_hook_finds_the_training_flow():
    from prefect import Flow

    from flows.serve import train_deployment, training_flow

    flow = training_flow()
    assert isinstance(flow, Flow)
    deployment = train_deployment()
    assert deployment.name == "train" and deployment.flow_name == flow.name


def test_prefect_yaml_entrypoints_parameters_and_schedules():
    """prefect.yaml (for `prefect deploy`) names flows that load, parameters they take, and schedules with
    an explicit time zone that Prefect accepts."""
    import inspect

    import yaml
    from prefect.flows import load_flow_from_entrypoint

    from flows.serve import make_schedule

    repo = Path(__file__).resolve().parents[2]
    spec = yaml.safe_load((repo / "prefect.yaml").read_text())
    names = {}
    for d in spec["deployments"]:
        flow = load_flow_from_entrypoint(str(repo / d["entrypoint"]))
        names[d["name"]] = flow.name
        assert set(d.get("parameters") or {}) <= set(inspect.signature(flow.fn).parameters), d["name"]
        for s in d["schedules"]:
            assert s["timezone"], d["name"]
            make_schedule(s["timezone"], cron=s["cron"])
    assert names["drop-folder"] == "cxrkg-watch"
    assert names.get("train") == "cxrkg-train"


def test_the_schedule_is_served_where_the_flags_and_prefect_api_url_say():
    from flows.serve import ScheduleError, use_prefect_server

    assert use_prefect_server(None, "http://127.0.0.1:4200/api") is True
    assert use_prefect_server(None, None) is False and use_prefect_server(True, "http://x/api") is False
    assert use_prefect_server(False, "http://x/api") is True
    with pytest.raises(ScheduleError, match="--prefect-server: PREFECT_API_URL is not set"):
        use_prefect_server(False, "")


def test_serve_plan_checks_zone_and_folders_even_once(tmp_path):
    from flows.serve import ScheduleError, serve_plan
    from graph.ingest.dropfolder import DropFolderError

    drop = tmp_path / "drop"
    drop.mkdir()
    once = serve_plan(drop, "UTC", once=True, settle_seconds=5)
    assert once.once and once.schedule is None and once.params == {
        "drop_folder": str(drop.resolve()), "archive_folder": None, "rejected_report": None, "doc_mapping": None,
        "settle_seconds": 5}
    local = serve_plan(drop, "Europe/Berlin", cron="*/15 * * * *", train_cron="0 3 * * *", local=True)
    assert not local.once and not local.use_server and local.schedule.cron == "*/15 * * * *"
    assert local.train_schedule.cron == "0 3 * * *"
    with pytest.raises(ScheduleError, match="time zone"):
        serve_plan(drop, "Mars/Olympus", once=True)
    with pytest.raises(DropFolderError):
        serve_plan(drop, "UTC", archive=drop / "archive", once=True)  # an archive inside the drop folder
