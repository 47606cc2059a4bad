"""`make bench` leaves no process behind: not when it finishes, not when the user presses Ctrl-C while it
loads. The benchmark runs on a small cohort in a home of its own, so every process it starts (its Neo4j,
its flow children, their workers and Prefect API servers) names that home or descends from it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks" / "ingest_benchmark.py"

pytestmark = pytest.mark.java  # the benchmark starts its own local Neo4j


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(CXRKG_HOME=str(home), CXRKG_BOLT_PORT=str(_free_port()), CXRKG_HTTP_PORT=str(_free_port()))
    return env


def _started_from(home: Path) -> list[str]:
    """Command lines of the running processes that name ``home`` (its server, flow children, workers)."""
    out = []
    for p in psutil.process_iter(["cmdline", "environ"]):
        try:
            named = any(str(home) in part for part in p.info["cmdline"] or ())
            named = named or (p.info["environ"] or {}).get("CXRKG_HOME") == str(home)
        except psutil.Error:
            continue
        if named and p.pid != os.getpid() and p.status() != psutil.STATUS_ZOMBIE:
            out.append(" ".join(p.info["cmdline"] or ())[:160])
    return out


@pytest.mark.slow
def test_benchmark_run_to_the_end_leaves_no_process(tmp_path):
    home = tmp_path / "bench"
    result = subprocess.run([sys.executable, str(BENCH), "--patients", "40", "--small", "20", "--naive-patients", "3"],
                            env=_env(home), capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ingest    40 patients" in result.stdout and "named queries" in result.stdout
    assert (home / "password").exists()  # it did start its own server
    assert _started_from(home) == []


@pytest.mark.slow
def test_ctrl_c_during_the_load_leaves_no_process(tmp_path):
    home = tmp_path / "bench"
    proc = subprocess.Popen([sys.executable, str(BENCH), "--patients", "40", "--small", "20"], env=_env(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    # the first load's child is running once a flow process names the cohort
    while not any("--child" in line for line in _started_from(home)):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the benchmark never reached its first load"
        time.sleep(0.5)
    time.sleep(3)
    # Ctrl-C in a terminal interrupts the whole foreground process group; here the benchmark and its child
    for p in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]:
        try:
            if "java" not in p.name():  # the server is in a session of its own, as in a terminal
                p.send_signal(signal.SIGINT)
        except psutil.Error:
            pass
    proc.communicate(timeout=120)
    time.sleep(2)
    assert _started_from(home) == []
