"""`make bench` leaves no process behind: not when it finishes, not when the user presses Ctrl-C while it
loads. The benchmark runs on a small cohort in a home of its own, so every process it starts (its Neo4j,
its flow children, their workers and Prefect API servers) names that home or descends from it.

The tests wait on events (a process appears, the benchmark exits, the last process named by the home is
gone), each bounded generously: a machine whose cores other loads keep busy is slower, not wrong."""

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


def _wait_none_left(home: Path, timeout_s: float = 120.0) -> list[str]:
    """Wait until no process names ``home`` (helpers such as the child watcher end a moment after the
    process they watch); returns those still running after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while (left := _started_from(home)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _loading(home: Path) -> bool:
    """Whether a load is under way: a flow child (``--child``) has started Prefect's API server."""
    for p in psutil.process_iter(["cmdline"]):
        try:
            if "--child" in (p.info["cmdline"] or ()) and str(home) in " ".join(p.info["cmdline"]):
                if any("uvicorn" in " ".join(c.cmdline()) for c in p.children(recursive=True)):
                    return True
        except psutil.Error:
            continue
    return False


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
    assert _wait_none_left(home) == []


def _as_from_a_terminal() -> None:
    """Take Ctrl-C as a job started from a terminal does: a suite run in the background of a non-interactive
    shell (``nohup make test &``) passes SIGINT on ignored, and Python then installs no KeyboardInterrupt
    handler, so the benchmark would run on to its end."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_ctrl_c_during_the_load_leaves_no_process(tmp_path):
    home = tmp_path / "bench"
    # a process group of its own, as a job in a terminal: Ctrl-C interrupts the whole foreground group at
    # once, whatever it started a moment before (the server is in a session of its own and is not hit)
    proc = subprocess.Popen([sys.executable, str(BENCH), "--patients", "40", "--small", "20"], env=_env(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_as_from_a_terminal)
    deadline = time.monotonic() + 600
    while not _loading(home):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the benchmark never reached its first load"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    started = time.monotonic()
    try:
        _, errors = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the benchmark still ran 300 s after Ctrl-C; running: {_started_from(home)}")
    assert "KeyboardInterrupt" in errors, f"exit {proc.returncode}: {errors[-2000:]}"
    assert _wait_none_left(home) == [], f"{time.monotonic() - started:.0f} s after Ctrl-C"
