"""Faults injected into a running load, against the real Neo4j: the command that is killed leaves no
process behind, holds no lock, and the next run loads the rest into the graph a one-shot load gives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers import graph_snapshot, load_into

REPO = Path(__file__).resolve().parents[2]


def _cli_env() -> dict[str, str]:
    """The environment of a user's shell pointed at the test server (its own Prefect temporary server)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return {**env, "PYTHONPATH": str(REPO)}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "flows.cli", *args]


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _wait_gone(processes: list[psutil.Process], timeout_s: float) -> list[str]:
    """Waits for the processes to end; returns the command lines of those still running."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not left:
            return []
        time.sleep(0.2)
    return [" ".join(p.cmdline()[:6]) for p in left]


@pytest.mark.slow
def test_sigkill_of_the_ingest_command_leaves_no_process_and_the_rerun_loads_the_rest(store, tmp_path):
    from graph.synth import write_cohort

    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=40, seed=5)
    env = _cli_env()
    first = subprocess.Popen(_cli("ingest", str(cohort), "--batch-files", "4", "--no-progress", "--rejected",
                                  str(tmp_path / "r.json")), cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        children: list[psutil.Process] = []
        # kill once a few batches are committed and the parse worker and Prefect's server are running
        while store.read("MATCH (f:SourceFile) RETURN count(f) AS n")[0]["n"] < 12 or len(children) < 2:
            assert first.poll() is None, "the load ended before it could be killed: make the cohort bigger"
            assert time.monotonic() < deadline, "the load did not get going"
            children = [c for c in _descendants(first.pid) if "child_guard" not in " ".join(c.cmdline())]
            time.sleep(0.05)
        children = _descendants(first.pid)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    assert any("uvicorn" in " ".join(c.cmdline()) for c in children)
    left = _wait_gone(children, 15)
    for p in children:  # whatever the assertion below reports, the test leaves nothing behind
        if p.is_running():
            p.kill()
    assert left == [], left

    done = subprocess.run(_cli("ingest", str(cohort), "--no-progress", "--rejected", str(tmp_path / "r.json")),
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    resumed = graph_snapshot(store)

    store.clear()
    from graph.vocabulary import vocabulary

    store.ensure_schema(vocabulary())
    load_into(store, cohort)
    one_shot = graph_snapshot(store)
    for kind, got, want in (("nodes", resumed[0], one_shot[0]), ("relationships", resumed[1], one_shot[1])):
        extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
        assert not extra and not missing and len(got) == len(want), (kind, extra[:3], missing[:3])
