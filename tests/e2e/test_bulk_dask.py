"""``cxrkg ingest --bulk`` with its files stage on Dask (a local cluster of two worker processes) or in its
own process (``--workers 0``) writes the same import files, row for row, and the same graph as the default
run on local processes; the summary says which engine ran and with how many workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flows.cpu import SHORTEST_MEASURED
from graph.store import reset_shared_store, shared_store
from graph.store.content import graph_content
from graph.synth import write_cohort

pytestmark = pytest.mark.extract  # Dask (distributed) comes with the extract extra


def _rows(kept: Path) -> dict[str, list[str]]:
    """Each group's data lines, sorted (workers split rows over their own files), without SourceFile's
    ``loaded_at`` (the load's start time, its last field)."""
    from graph.ingest.import_files import read_listing

    groups: dict[str, list[str]] = {}
    for f in read_listing(kept):
        lines = f.path.read_text(encoding="utf-8").splitlines()[1:]
        if f.group == "nodes=SourceFile":
            lines = [line.rsplit(",", 1)[0] for line in lines]
        groups.setdefault(f.path.name, []).extend(lines)
    return {name: sorted(lines) for name, lines in groups.items()}


def _bulk(cohort: Path, keep: Path, **engine):
    from flows.bulk_flow import bulk_ingest_flow

    shared_store().clear()
    reset_shared_store()
    summary = bulk_ingest_flow([str(cohort)], rejected_report=None, batch_files=20, keep_import_files=str(keep),
                               **engine)
    return summary, graph_content(shared_store())


def test_the_files_stage_on_dask_writes_the_same_files_and_graph(store, prefect_harness, tmp_path):
    from graph.runtime.processes import available_cores

    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=10, seed=21)
    local, local_graph = _bulk(cohort, tmp_path / "local")
    dask, dask_graph = _bulk(cohort, tmp_path / "dask", workers=2, dask_address="local")

    assert local.engine == "local processes" and 1 <= local.workers <= available_cores()
    assert (dask.engine, dask.workers) == ("Dask local cluster", 2)
    assert local.files_cpu_seconds > 0 and dask.files_cpu_seconds == 0  # Dask's workers' CPU is not seen here
    assert dask.files_loaded == local.files_loaded > 40 and dask.elements_created == local.elements_created
    assert list(local.stage_seconds) == list(dask.stage_seconds) == ["check", "plan", "files", "import", "start",
                                                                     "schema", "geometry"]
    # the machine's busy cores in each stage long enough to measure
    measured = set(local.stage_cores)
    assert {k for k, v in local.stage_seconds.items() if v > SHORTEST_MEASURED + 0.01} <= measured
    assert not {k for k, v in local.stage_seconds.items() if v < SHORTEST_MEASURED - 0.01} & measured
    assert all(0 <= v <= os.cpu_count() + 0.1 for v in local.stage_cores.values())
    assert local.stage_cores.get("import", 1) >= 0.5 and "start" in local.stage_cores  # the importer; the JVM
    local_rows = _rows(tmp_path / "local")
    assert _rows(tmp_path / "dask") == local_rows and len(local_rows["nodes_Observation.csv"]) > 100
    assert dask_graph == local_graph and len(local_graph) > 1000
    # --workers 0: this process writes every batch, the same rows and graph
    here, here_graph = _bulk(cohort, tmp_path / "here", workers=0)
    assert (here.engine, here.workers) == ("this process", 0) and here.files_loaded == local.files_loaded
    assert _rows(tmp_path / "here") == local_rows and here_graph == local_graph


def test_workers_without_bulk_is_refused_in_one_line(tmp_path):
    from typer.testing import CliRunner

    from flows.cli import app

    result = CliRunner().invoke(app, ["ingest", "--workers", "2", "--no-progress", str(tmp_path)])
    assert result.exit_code == 1 and "add --bulk" in result.output and "Traceback" not in result.output
