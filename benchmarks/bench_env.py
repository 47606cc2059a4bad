"""What every benchmark does first: run against its own local Neo4j, never a user's database."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]


def use_dedicated_server(home: str, bolt_port: int, http_port: int) -> None:
    """Point cxrkg at ``.cxrkg/<home>`` with these ports (unless the caller set them) and drop ``NEO4J_*``,
    so a benchmark that clears its graph can never clear a user's external database. Also makes the
    checkout importable when the script runs from anywhere."""
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("CXRKG_HOME", str(REPO / ".cxrkg" / home))
    os.environ.setdefault("CXRKG_BOLT_PORT", str(bolt_port))
    os.environ.setdefault("CXRKG_HTTP_PORT", str(http_port))
    for var in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "NEO4J_DATABASE"):
        os.environ.pop(var, None)


def cxrkg(*args: str) -> tuple[float, str]:
    """Run one ``cxrkg`` command of this checkout (``python -m flows.cli``) in the current environment:
    (wall seconds, its stdout stripped); exits the benchmark with the command's message when it fails."""
    import subprocess

    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, env=os.environ.copy(),
                          capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"cxrkg {' '.join(args)} failed (exit {done.returncode}):\n{(done.stderr or done.stdout)[-3000:]}")
    return time.perf_counter() - started, done.stdout.strip()


def stop_server() -> None:
    """``cxrkg db stop`` of the benchmark's own server, quietly: for a ``finally``, where a failure to stop
    must not hide the error that got there."""
    import subprocess

    subprocess.run([sys.executable, "-m", "flows.cli", "db", "stop"], cwd=REPO, env=os.environ.copy(),
                   capture_output=True)


def load_nih(home: Path, patients: int | None) -> None:
    """Convert the NIH ChestX-ray14 tables of the torchxrayvision wheel (the ``patients`` lowest patient ids,
    or all) into ``home/nih-N`` and bulk-load them into an emptied local store, printing each step's seconds.
    The server is left stopped or as the bulk load leaves it (running)."""
    import shutil

    cohort = home / f"nih-{patients or 'all'}"
    shutil.rmtree(cohort, ignore_errors=True)
    limit = ["--patients", str(patients)] if patients else []
    print(f"convert: {cxrkg('datasets', 'nih', '--out', str(cohort), *limit)[0]:.1f} s", flush=True)
    cxrkg("db", "stop")
    shutil.rmtree(home / "data", ignore_errors=True)
    print(f"bulk ingest: {cxrkg('ingest', '--bulk', str(cohort))[0]:.1f} s", flush=True)


def run_child(cmd: list[str], grace_s: float = 10.0) -> str:
    """Run ``cmd`` (a benchmark's child process) and return its stdout; raises CalledProcessError when it
    fails. On Ctrl-C (or any error here) the child and everything it started are ended before this returns:
    asked to stop (SIGTERM), killed after ``grace_s`` seconds, and waited for. ``subprocess.run`` would kill
    only the child itself, leaving its parse worker and Prefect server running, and a worker holding a copy
    of the child's Bolt socket keeps the child's transaction, and the server's shutdown, waiting."""
    import subprocess

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        out, err = proc.communicate()
    except BaseException:
        end_tree(proc.pid, grace_s)
        proc.communicate()
        raise
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd, out, err)
    return out


def end_tree(pid: int, grace_s: float = 10.0) -> None:
    """End process ``pid`` and its descendants: SIGTERM to all, SIGKILL to those left after ``grace_s``
    seconds, then wait for them (returns as soon as all are gone). The child watcher (flows.child_guard)
    is left to end by itself once its process is gone."""
    import psutil

    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    from flows.child_guard import end_processes

    end_processes([p for p in tree if _alive_not_guard(p)], grace_s)


def _alive_not_guard(process) -> bool:
    import psutil

    try:
        return "child_guard" not in " ".join(process.cmdline())
    except psutil.Error:  # gone meanwhile
        return False


def run_measured(cmd: list[str], at_peak: dict[str, list[float]] | None = None) -> tuple[float, float, str]:
    """Run ``cmd``; return its wall seconds, the peak summed proportional set size (PSS: pages shared by
    forked workers counted once) in MB of it and its Python child processes (parse and write workers,
    Prefect's temporary API server; Java processes, the Neo4j server and its importer, are left out),
    sampled every 0.2 s, and its stdout. ``at_peak``, when given, receives each process's PSS (MB) at that
    peak by role (:func:`_role`). Exits with the command's stderr tail when it fails."""
    import subprocess
    import time

    import psutil

    started = time.perf_counter()
    proc = psutil.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    peak = 0.0
    while proc.poll() is None:
        try:
            sizes = [(_role(p, proc.pid), p.memory_full_info().pss / 2**20)
                     for p in [proc, *proc.children(recursive=True)] if "java" not in p.name()]
        except psutil.Error:
            sizes = []
        if sum(size for _, size in sizes) > peak:
            peak = sum(size for _, size in sizes)
            if at_peak is not None:
                at_peak.clear()
                for role, size in sizes:
                    at_peak.setdefault(role, []).append(round(size))
        time.sleep(0.2)
    out, err = proc.communicate()
    if proc.returncode:
        sys.exit(f"{' '.join(cmd[:3])} ... failed:\n{err[-3000:]}")
    return time.perf_counter() - started, peak, out


def _role(process, root: int) -> str:
    """What a measured process is: the command itself, Prefect's temporary API server (uvicorn), the
    child watcher (flows.child_guard) or a worker the command forked."""
    if process.pid == root:
        return "command"
    cmd = " ".join(process.cmdline())  # psutil.Error when it is gone: the caller skips the sample
    return "api server" if "uvicorn" in cmd else "child watcher" if "child_guard" in cmd else "worker"


def timed_flow(run: Callable[[], Any], clear: bool = True) -> tuple[float, Any, dict[str, int], dict[str, int]]:
    """Child process of a benchmark: empty the benchmark's graph (unless ``clear`` is False: the parent did),
    run ``run()`` (a flow) under Prefect's test harness; (its seconds, its result, then the graph's node
    counts by label and relationship counts by type)."""
    from prefect.testing.utilities import prefect_test_harness

    from graph.store import shared_store
    from graph.store.stats import label_counts

    if clear:
        shared_store().clear()
    with prefect_test_harness(server_startup_timeout=120):
        started = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - started
    # asked for afterwards: the bulk flow starts the server itself (it is stopped before) and renews the store
    nodes, rels = label_counts(shared_store())
    return seconds, result, nodes, rels


NEO4J_STAGES = ("import", "start", "schema")  # the bulk load's stages that are Neo4j's own work


def bulk_split(seconds: float, stages: dict[str, float], files: int, files_cpu: float) -> str:
    """Two lines for a bulk load: cxrkg's own stages beside Neo4j's (``neo4j-admin database import``, the
    restart, the schema step), the whole load as a ratio of Neo4j's part (the floor no client beats), and
    the files stage's CPU per input file (ms; the flow process and its local workers)."""
    neo4j = sum(stages.get(k, 0.0) for k in NEO4J_STAGES)
    own = ", ".join(f"{k} {v:.1f}" for k, v in stages.items() if k not in NEO4J_STAGES)
    theirs = ", ".join(f"{k} {stages.get(k, 0.0):.1f}" for k in NEO4J_STAGES)
    per_file = f"{1000 * files_cpu / files:.2f} ms" if files else "-"
    return (f"  stages (s): cxrkg {own}; neo4j {theirs} (sum {neo4j:.1f})\n"
            f"  whole load {seconds:.1f} s = {seconds / neo4j:.2f} x Neo4j's part; files stage CPU {files_cpu:.1f} s, "
            f"{per_file} per input file ({files:,} files)")
