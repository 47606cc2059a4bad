"""Faults of input and environment end in one short error block and a documented exit code, never a
traceback; ``--debug`` and ``CXRKG_DEBUG=1`` let the traceback through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _cxrkg(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CXRKG_", "NEO4J_"))}
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**base, "PYTHONPATH": str(REPO), "COLUMNS": "200", **env})


@pytest.mark.parametrize("args, env, says", [
    pytest.param(["db", "start"], {"CXRKG_HOME": "/proc/cxrkg-cannot-be-here"}, "No such file or directory: /proc/cxrkg",
                 marks=pytest.mark.java),  # without Java, `db start` stops at the missing java first
    (["stats"], {"CXRKG_BOLT_PORT": "1"}, "cxrkg db start"),  # nothing listens on port 1: a stopped server
    (["queries"], {"CXRKG_BOLT_PORT": "seven"}, "CXRKG_BOLT_PORT='seven'"),
    (["query", "new_finding_patients", "-p", "finding=effusion", "-p", "start_date=2150-13-01", "-p",
      "end_date=2150-12-31"], {"CXRKG_BOLT_PORT": "1"}, "start_date='2150-13-01' is not a date (ISO"),
])
def test_a_fault_is_one_short_block_with_its_exit_code(tmp_path, args, env, says):
    env = {"CXRKG_HOME": str(tmp_path / "home"), **env}
    done = _cxrkg(*args, **env)
    assert done.returncode == 1, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr + done.stdout
    assert len((done.stderr + done.stdout).strip().splitlines()) <= 3, done.stderr


@pytest.mark.java  # `db start` looks for java before it makes its home
def test_debug_shows_the_traceback(tmp_path):
    env = {"CXRKG_HOME": "/proc/cxrkg-cannot-be-here"}
    assert "FileNotFoundError" in _cxrkg("--debug", "db", "start", **env).stderr
    assert "FileNotFoundError" in _cxrkg("db", "start", CXRKG_DEBUG="1", **env).stderr


def test_every_kind_of_fault_has_its_line():
    from flows.cli.main import explain
    from graph.store.busy import GraphBusy

    assert explain(GraphBusy("waited")) == ("waited", 5)
    assert explain(PermissionError(13, "Permission denied", "/x"))[0].startswith("Permission denied: /x")
    message, code = explain(KeyError("boom"))
    assert code == 1 and "--debug" in message and "KeyError" in message
