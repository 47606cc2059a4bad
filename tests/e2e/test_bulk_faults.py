"""A bulk import never leaves half a database: `cxrkg ingest --bulk` killed in the files stage and during
`neo4j-admin import`, and run out of disk in each, leaves the home with the old database (here the empty one,
or none), the next `db start` works, no process is left, and a rerun loads the cohort.

Each test has its own home and ports (a bulk load stops its server); the disk-full tests put the home on a
size-limited tmpfs, which needs root (CI runs as root).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
PATIENTS = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cohort(tmp_path_factory) -> Path:
    from graph.synth import write_cohort

    folder = tmp_path_factory.mktemp("bulk-faults") / "cohort"
    write_cohort(folder, patients=PATIENTS, seed=4)
    return folder


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "NEO4J_"))}
    return {**env, "PYTHONPATH": str(REPO), "COLUMNS": "400", "CXRKG_HOME": str(home),
            "CXRKG_BOLT_PORT": str(_free_port()), "CXRKG_HTTP_PORT": str(_free_port())}


def _cxrkg(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _bulk(env: dict[str, str], cohort: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "flows.cli", "ingest", str(cohort), "--bulk", "--no-progress",
                             "--workers", "0"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _children(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def _kill_when(load: subprocess.Popen, ready, what: str) -> list[psutil.Process]:
    """SIGKILL the load once ``ready()``; returns the processes it had started then."""
    deadline = time.monotonic() + 240
    while not ready():
        assert load.poll() is None, f"the load ended before {what}: " + load.communicate()[1][-2000:]
        assert time.monotonic() < deadline, f"no {what}"
        time.sleep(0.05)
    children = _children(load.pid)
    load.send_signal(signal.SIGKILL)
    load.wait(10)
    return children


def _import_files(home: Path) -> list[Path]:
    return [f for f in home.glob("import-*/*.csv")]


def _patients(env: dict[str, str]) -> int:
    stats = _cxrkg(env, "stats", "--format", "json", "--no-check")
    assert stats.returncode == 0, stats.stderr
    return json.loads(stats.stdout)["nodes"].get("Patient", 0)


def _after_the_kill(env: dict[str, str], home: Path, children: list[psutil.Process], cohort: Path) -> None:
    """Nothing left running, the next db start works on the empty database, nothing half-imported stays in the
    home, and the rerun loads the cohort."""
    deadline = time.monotonic() + 20
    while any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in children):
        assert time.monotonic() < deadline, [_cmdline(p) for p in children if p.is_running()]
        time.sleep(0.2)
    started = _cxrkg(env, "db", "start")
    try:
        assert started.returncode == 0, started.stderr
        assert not list(home.glob("import-*")), list(home.glob("import-*"))
        assert _patients(env) == 0  # the old, empty database
    finally:
        _cxrkg(env, "db", "stop")
    rerun = _cxrkg(env, "ingest", str(cohort), "--bulk", "--no-progress", "--workers", "0", timeout=600)
    try:
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert _patients(env) == PATIENTS
    finally:
        _cxrkg(env, "db", "stop")


@pytest.mark.slow
def test_a_bulk_load_killed_in_the_files_stage_leaves_the_old_database(cohort, tmp_path):
    home = tmp_path / "home"
    env = _env(home)
    assert _cxrkg(env, "db", "start").returncode == 0  # the empty database the import replaces
    assert _cxrkg(env, "db", "stop").returncode == 0
    load = _bulk(env, cohort)
    children = _kill_when(load, lambda: len(_import_files(home)) >= 3, "import files")
    assert not any("AdminTool" in _cmdline(p) for p in children)  # still in the files stage
    _after_the_kill(env, home, children, cohort)


@pytest.mark.slow
def test_a_bulk_load_killed_during_neo4j_admin_import_leaves_the_old_database(cohort, tmp_path):
    home = tmp_path / "home"
    env = _env(home)
    assert _cxrkg(env, "db", "start").returncode == 0
    assert _cxrkg(env, "db", "stop").returncode == 0
    load = _bulk(env, cohort)

    def importing() -> bool:  # the importer has begun to write its store
        admin = [p for p in _children(load.pid) if "AdminTool" in _cmdline(p)]
        return bool(admin) and any(home.glob("import-*/data/databases/neo4j/*"))

    children = _kill_when(load, importing, "neo4j-admin import")
    _after_the_kill(env, home, children, cohort)


def _tmpfs(folder: Path, megabytes: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"a size-limited folder needs a tmpfs mount (root): {done.stderr.strip()}")


@pytest.mark.slow
@pytest.mark.parametrize("megabytes, stage", [(3, "files"), (12, "import")])
def test_a_full_disk_says_which_stage_and_how_much_space_and_leaves_no_partial_database(tmp_path, megabytes, stage):
    from graph.synth import write_cohort

    small = tmp_path / "cohort"  # 30 patients: about 6 MB of import files, a 13 MB store
    write_cohort(small, patients=30, seed=4)
    mount = tmp_path / "disk"
    _tmpfs(mount, megabytes)
    try:
        home = mount / "home"
        env = _env(home)
        done = _cxrkg(env, "ingest", str(small), "--bulk", "--no-progress", "--workers", "0")
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: the {stage} stage ran out of disk space in {home}")
        assert " MB free" in lines[0] and "the database is as it was" in lines[0], lines
        assert not list(home.glob("import-*")) and not (home / "data" / "databases" / "neo4j").exists()
        # space freed (the tmpfs grown): the next start works, and the same command loads
        subprocess.run(["mount", "-o", "remount,size=900m", str(mount)], check=True)
        started = _cxrkg(env, "db", "start")
        assert started.returncode == 0, started.stderr
        _cxrkg(env, "db", "stop")
        again = _cxrkg(env, "ingest", str(small), "--bulk", "--no-progress", "--workers", "0", timeout=600)
        assert again.returncode == 0, again.stderr[-3000:]
        assert _patients(env) == 30
    finally:
        _cxrkg(_env(mount / "home"), "db", "stop")
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
