"""Where the bulk load's files stage runs and how many workers `cxrkg extract` and `cxrkg ingest --bulk` use
by default: the cores found, unless a flag says otherwise; what the summaries say about it."""

from __future__ import annotations

import os

import pytest

from flows.bulk_flow import FilesEngine
from graph.extract.pipeline import ExtractionSummary
from graph.ingest.schedule import available_cores


def test_available_cores_are_those_this_process_may_run_on():
    assert available_cores() == len(os.sched_getaffinity(0)) >= 1


def test_the_files_stage_defaults_to_one_local_process_per_core_and_flags_choose_dask():
    assert FilesEngine.choose(None, None) == FilesEngine(available_cores())
    assert FilesEngine.choose(None, None).name == "local processes"
    assert FilesEngine.choose(3, None) == FilesEngine(3, "local")
    assert FilesEngine.choose(3, None).name == "Dask local cluster"
    assert FilesEngine.choose(None, "tcp://10.0.0.5:8786").name == "Dask at tcp://10.0.0.5:8786"
    assert FilesEngine.choose(2, "tcp://10.0.0.5:8786").dask == "tcp://10.0.0.5:8786"  # the address wins
    with pytest.raises(ValueError, match="at least 1"):
        FilesEngine.choose(0, None)


def test_the_extraction_line_says_how_many_workers_ran(capsys):
    from flows.cli.common import print_extraction

    print_extraction(ExtractionSummary(extractor="rules", out="/tmp/x", workers=2, engine="Dask local cluster"))
    print_extraction(ExtractionSummary(extractor="rules", out="/tmp/x"))
    out = capsys.readouterr().out
    assert "on 2 workers (Dask local cluster)" in out and "on 1 worker (this process)" in out
