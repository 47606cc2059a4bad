"""Where the bulk load's files stage runs and how many workers `cxrkg extract`, `cxrkg ingest --bulk` and
`cxrkg eval reports` use (graph.runtime.processes.worker_count: `--workers` means the same in all three):
the cores found by default, unless a flag says otherwise; what the summaries say about it."""

from __future__ import annotations

import os
import time

import pytest

from flows.bulk_flow import FilesEngine
from graph.extract.pipeline import ExtractionSummary
from graph.runtime.processes import available_cores, worker_count


def test_available_cores_are_those_this_process_may_run_on():
    assert available_cores() == len(os.sched_getaffinity(0)) >= 1


def test_the_files_stage_defaults_to_one_local_process_per_core_and_workers_count_processes():
    cores = available_cores()
    assert FilesEngine.choose(None, None) == FilesEngine(cores if cores > 1 else 0)
    assert FilesEngine.choose(3, None) == FilesEngine(3) and FilesEngine.choose(3, None).name == "local processes"
    assert FilesEngine.choose(0, None).in_process and FilesEngine.choose(0, None).name == "this process"
    assert FilesEngine.choose(3, "local") == FilesEngine(3, "local")
    assert FilesEngine.choose(3, "local").name == "Dask local cluster" and not FilesEngine.choose(3, "local").in_process
    assert FilesEngine.choose(None, "local") == FilesEngine(cores, "local")
    assert FilesEngine.choose(None, "tcp://10.0.0.5:8786").name == "Dask at tcp://10.0.0.5:8786"
    assert FilesEngine.choose(2, "tcp://10.0.0.5:8786").dask == "tcp://10.0.0.5:8786"  # the address wins
    with pytest.raises(ValueError, match="0 or more"):
        FilesEngine.choose(-1, None)


def test_workers_mean_the_same_everywhere():
    """--workers N: N processes; 0: this process; unset: one per core once the work repays them."""
    cores = available_cores()
    assert worker_count(3, 0, 100) == 3 and worker_count(0, 10**9, 100) == 0
    assert worker_count(None, 99, 100) == 0
    assert worker_count(None, 100, 100) == (cores if cores > 1 else 0)
    with pytest.raises(ValueError, match="0 or more"):
        worker_count(-2, 0, 100)


def test_the_extraction_line_says_how_many_workers_ran(capsys):
    from flows.cli.common import print_extraction

    print_extraction(ExtractionSummary(extractor="rules", out="/tmp/x", workers=2, engine="Dask local cluster"))
    print_extraction(ExtractionSummary(extractor="rules", out="/tmp/x"))
    out = capsys.readouterr().out
    assert "on 2 workers (Dask local cluster)" in out and "on 1 worker (this process)" in out


def test_extract_uses_every_core_by_default_from_sixteen_megabytes_of_reports(tmp_path):
    from graph.extract.inputs import PARALLEL_FROM_BYTES, extract_workers, source_bytes

    small, big = tmp_path / "small.csv", tmp_path / "big" / "reports.csv"
    small.write_text("report_id,text\nr1,No effusion.\n")
    big.parent.mkdir()
    with big.open("wb") as fh:
        fh.truncate(PARALLEL_FROM_BYTES)  # sparse: its size is what counts
    assert source_bytes(big.parent) == PARALLEL_FROM_BYTES and source_bytes("iu") == 0
    assert extract_workers(str(small), None) == 0 and extract_workers("iu", None) == 0
    expected = available_cores() if available_cores() > 1 else 0
    assert extract_workers(str(big), None) == extract_workers(str(big.parent), None) == expected
    assert extract_workers(str(small), 3) == 3 and extract_workers(str(big), 0) == 0  # --workers says
    assert extract_workers(str(big), None, "tcp://10.0.0.5:8786") == 0  # the cluster's own workers


def test_the_ingest_summary_says_which_workers_wrote_the_files_and_their_cpu(capsys, monkeypatch):
    from flows.cli.common import console, print_summary

    monkeypatch.setattr(console, "width", 200)  # the table's rows unwrapped
    from flows.ingest_flow import IngestSummary

    print_summary(IngestSummary(files_seen=400, workers=2, engine="local processes", files_cpu_seconds=0.5,
                                stage_seconds={"check": 0.1, "plan": 1, "files": 2, "import": 3, "start": 4,
                                               "schema": 5}, stage_cores={"plan": 1.04, "files": 1.96}))
    print_summary(IngestSummary(files_seen=400))  # a transactional load: neither row
    first, second = capsys.readouterr().out.split("ingest summary")[1:]
    assert "check 0.1, plan 1.0, files 2.0, import 3.0, start 4.0, schema 5.0" in first
    assert "2 (local processes)" in first and "0.5 s, 1.25 ms per input file" in first
    assert f"cores busy (of {os.cpu_count()})" in first and "plan 1.0, files 2.0" in first
    assert "workers" not in second and "files stage CPU" not in second and "cores busy" not in second


def test_busy_cores_counts_the_machine_s_cores_kept_busy_over_a_block():
    from flows.cpu import busy_cores

    cores: dict[str, float] = {}
    with busy_cores(cores, "spin"):
        until = time.process_time() + 0.6
        while time.process_time() < until:  # this process alone keeps one core busy throughout
            pass
    assert 0.7 <= cores["spin"] <= os.cpu_count() + 0.1  # + the clock ticks both readings round to
    with busy_cores(cores, "short"):  # too short for the kernel's clock ticks
        pass
    with pytest.raises(RuntimeError), busy_cores(cores, "failed"):
        time.sleep(0.6)
        raise RuntimeError("a failed stage")
    assert list(cores) == ["spin"]  # as the stage's seconds: recorded only when the block ends well
