"""Scheduled ingestion against the real Neo4j and Prefect's test harness: runs created by the deployment's
cron schedule (in its time zone) and executed by a Prefect Runner, a drop folder that grows between
runs, the archive, settling files, the rejected-files report and the summary artifact."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from tests.fixtures.loading import graph_snapshot
from tests.fixtures.effusion import effusion_study

BERLIN = ZoneInfo("Europe/Berlin")


# --- schedules (no database) ---------------------------------------------------------------------

# --- the scheduled flow on a growing drop folder ---------------------------------------------------

async def _run_next_scheduled(deployment, start: datetime):
    """Let the server create the deployment's next scheduled run after ``start`` from its cron schedule,
    execute it with a Prefect Runner, and return the finished run with its artifacts."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (ArtifactFilter, ArtifactFilterFlowRunId, DeploymentFilter,
                                                DeploymentFilterId, FlowRunFilter, FlowRunFilterState,
                                                FlowRunFilterStateType)
    from prefect.client.schemas.objects import StateType
    from prefect.runner import Runner

    runner = Runner(name=f"cxrkg-test-{time.monotonic_ns()}", query_seconds=1)
    deployment_id = await runner.add_deployment(deployment)
    async with get_client() as client:
        response = await client.request("POST", "/deployments/{id}/schedule", path_params={"id": deployment_id},
                                        json={"start_time": start.isoformat(), "max_runs": 1})
        response.raise_for_status()
        scheduled = await client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id])),
            flow_run_filter=FlowRunFilter(state=FlowRunFilterState(
                type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))))
    assert len(scheduled) == 1 and scheduled[0].auto_scheduled
    await runner.start(run_once=True)
    async with get_client() as client:
        run = await client.read_flow_run(scheduled[0].id)
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run.id])))
    return run, artifacts


def _metric(markdown: str, name: str) -> int:
    row = [line for line in markdown.splitlines() if line.startswith(f"| {name} |")]
    assert row, markdown
    return int(row[0].split("|")[2])


def _copy(files: list[Path], src: Path, dst: Path) -> None:
    for f in files:
        target = dst / f.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)


def _loaded_at(store) -> dict[str, str]:
    return {r["path"]: str(r["at"]) for r in store.read("MATCH (f:SourceFile) RETURN f.path AS path, "
                                                        "f.loaded_at AS at")}


@pytest.mark.slow
def test_scheduled_runs_load_only_new_files_and_equal_a_one_shot_load(store, prefect_harness, tmp_path):
    from flows.ingest_flow import ingest_flow
    from flows.serve import default_rejected_report, make_schedule, watch_deployment
    from graph.synth import write_cohort

    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=6, seed=13)
    data = sorted(p for p in cohort.rglob("*.json"))
    drop = tmp_path / "drop"
    first = [p for i, p in enumerate(data) if i % 2 == 0]   # every patient has studies in both halves
    _copy(first + [cohort / "mimic-cxr-2.0.0-metadata.csv"], cohort, drop)
    deployment = watch_deployment(str(drop), make_schedule("Europe/Berlin", cron="30 2 * * *"), settle_seconds=0)

    run1, artifacts1 = asyncio.run(_run_next_scheduled(deployment, datetime.now(timezone.utc) - timedelta(days=3)))
    assert run1.state.is_completed(), run1.state
    assert run1.expected_start_time.astimezone(BERLIN).strftime("%H:%M") == "02:30"
    (summary1,) = [a.data for a in artifacts1 if a.key == "cxrkg-ingest-summary"]
    assert _metric(summary1, "files loaded (new or changed)") == len(first)
    loaded_first = _loaded_at(store)
    assert len(loaded_first) == len(first)

    second = [p for p in data if p not in first]
    _copy(second, cohort, drop)
    bad = drop / "scene_graphs" / "late" / "broken_SceneGraph.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"image_id": "x", "attributes": [')
    run2, artifacts2 = asyncio.run(_run_next_scheduled(deployment, run1.expected_start_time + timedelta(minutes=1)))
    assert run2.state.is_completed() and run2.id != run1.id
    assert run2.expected_start_time - run1.expected_start_time == timedelta(days=1)
    (summary2,) = [a.data for a in artifacts2 if a.key == "cxrkg-ingest-summary"]
    assert _metric(summary2, "files loaded (new or changed)") == len(second)
    assert _metric(summary2, "files unchanged") == len(first)
    assert _metric(summary2, "files rejected") == 1 and "broken_SceneGraph.json" in summary2
    report = json.loads(Path(default_rejected_report(drop)).read_text())  # in CXRKG_HOME/rejected
    assert [r["file"] for r in report] == [str(bad.resolve())]
    # the first run's files were not loaded again
    loaded_both = _loaded_at(store)
    assert {p: loaded_both[p] for p in loaded_first} == loaded_first
    assert len(loaded_both) == len(data)
    incremental = graph_snapshot(store)

    store.clear()
    one_shot = ingest_flow([str(drop)], rejected_report=str(tmp_path / "one-shot-rejected.json"))
    assert one_shot.files_loaded == len(data)
    assert graph_snapshot(store) == incremental


def _age(folder: Path, seconds: float) -> None:
    old = time.time() - seconds
    for p in folder.rglob("*"):
        if p.is_file():
            os.utime(p, (old, old))


@pytest.mark.slow
def test_archive_moves_only_committed_files_and_young_files_wait(store, prefect_harness, tmp_path):
    from flows.serve import watch_flow
    from graph.ingest.dropfolder import settling_files
    from graph.records import drop_folder_report_path
    from graph.formats.files import sha256_of

    drop, archive = tmp_path / "drop", tmp_path / "archive"
    good = [effusion_study(drop, n, severity="small") for n in (1, 2)]
    broken = effusion_study(drop, 3)
    broken.write_text("{")
    _age(drop, 3600)
    young = effusion_study(drop, 4, severity="large")  # being written right now
    hashes = {p.name: sha256_of(p) for p in good}

    summary = watch_flow(str(drop), archive_folder=str(archive), settle_seconds=600)
    assert summary.settling == [str(young.resolve())]
    assert (summary.ingest.files_loaded, summary.ingest.files_rejected) == (2, 1)
    assert sorted(Path(m.target).name for m in summary.archived) == sorted(p.name for p in good)
    for p in good:
        moved = archive / p.relative_to(drop)
        assert not p.exists() and sha256_of(moved) == hashes[p.name]
    assert broken.exists() and young.exists()  # never moved: rejected, and not yet read
    report = Path(summary.rejected_report)
    assert report == drop_folder_report_path(drop) and not report.is_relative_to(drop.resolve())
    assert [r["file"] for r in json.loads(report.read_text())] == [str(broken.resolve())]
    assert store.read("MATCH (s:Study) RETURN count(s) AS n")[0]["n"] == 2

    _age(drop, 3600)
    again = watch_flow(str(drop), archive_folder=str(archive), settle_seconds=600)
    assert (again.ingest.files_loaded, again.ingest.files_rejected, again.settling) == (1, 1, [])
    assert [Path(m.source).name for m in again.archived] == [young.name]
    assert store.read("MATCH (s:Study) RETURN count(s) AS n")[0]["n"] == 3
    assert broken.exists()
    # the report, rewritten every run, is out of the folder watched: nothing there is still settling
    assert settling_files(drop, 600) == [] and again.rejected_report == str(report)

    with pytest.raises(ValueError, match="outside"):
        watch_flow(str(drop), archive_folder=str(drop / "archive"))


def test_a_file_changed_after_its_load_is_not_archived(store, tmp_path):
    from graph.ingest.dropfolder import archive_files, committed_files
    from graph.ingest import discover, load_files, plan_ingest
    from graph.vocabulary import vocabulary

    drop = tmp_path / "drop"
    a, b = effusion_study(drop, 1), effusion_study(drop, 2)
    files = discover([drop])
    v = vocabulary()
    plan = plan_ingest(files, {}, v.version)
    store.link_patients(load_files(store, plan.load, v, plan.changed, plan.metadata, None).patients)
    committed = committed_files(store, files, v.version)
    assert [f.path for f in committed] == sorted(str(p.resolve()) for p in (a, b))
    b.write_text(b.read_text().replace("sentence 0", "sentence zero"))  # rewritten after the load
    moved = archive_files(committed, drop, tmp_path / "archive")
    assert [Path(m.source).name for m in moved] == [a.name] and b.exists()
    assert committed_files(store, files, "another-vocabulary") == []


def test_cli_serve_once_reports_rejections_with_exit_code_6(store, prefect_harness, tmp_path):
    from flows.cli import app

    drop = tmp_path / "drop"
    effusion_study(drop, 1)
    effusion_study(drop, 2).write_text("[]")
    result = CliRunner().invoke(app, ["serve", str(drop), "--timezone", "UTC",
                                      "--settle-seconds", "0", "--once"])
    assert result.exit_code == 6, result.output
    assert "1 files loaded" in result.output and "1 rejected" in result.output

    result = CliRunner().invoke(app, ["serve", str(drop), "--timezone", "Nowhere/Land", "--cron", "* * * * *"])
    assert result.exit_code == 1 and "time zone" in result.output


