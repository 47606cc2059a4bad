"""Children die with their parent: a small watcher process that ends what a ``cxrkg`` command started
when the command itself dies, even by SIGKILL.

A killed command cannot clean up after itself, and what it started would live on: Prefect's temporary
API server (a uvicorn process started by ``prefect.server.api.server.SubprocessASGIServer``, which stops
it only at interpreter exit), the parse worker of a load, Dask workers. A parse worker that outlives its
parent is worse than a wasted process when it holds a copy of the parent's Bolt socket: Neo4j then never
sees the client go, and the dead client's open write transaction keeps its patient locks.

The watcher (``python -m flows.child_guard PID``) notes the command's descendants every
:data:`POLL_SECONDS` while the command lives; once it is gone, it terminates those still running
(SIGTERM, then SIGKILL after :data:`GRACE_SECONDS`) and exits. Processes the command started in a session
of their own (the local Neo4j of ``cxrkg db start``, which is meant to outlive it) are left alone, and so
is anything that a normal exit already stopped. A child started less than :data:`POLL_SECONDS` before
the kill can escape the snapshot; every child cxrkg starts lives for seconds at least.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

POLL_SECONDS = 0.2
GRACE_SECONDS = 5.0


class _Watcher(subprocess.Popen):
    """The watcher's process, meant to outlive this one: it acts once this process is gone. Its object
    going at interpreter exit while the watcher runs is therefore no leak, and does not warn
    (``Popen.__del__`` would print "ResourceWarning: subprocess N is still running" after a test run)."""

    def __del__(self) -> None:
        self.poll()  # reaps a watcher that already ended; a running one is left to run on


_guard: subprocess.Popen | None = None


def start_guard() -> subprocess.Popen:
    """Start the watcher for this process, once per process (commands run in-process one after another,
    as in tests, share it); returns it (it exits by itself after this process does)."""
    global _guard
    if _guard is None or _guard.poll() is not None:
        _guard = _Watcher([sys.executable, "-m", "flows.child_guard", str(os.getpid())],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True, close_fds=True)
    return _guard


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _same_session(pid: int, session: int) -> bool:
    try:
        return os.getsid(pid) == session
    except OSError:
        return False


def watch(pid: int, poll_s: float = POLL_SECONDS, grace_s: float = GRACE_SECONDS) -> list[int]:
    """Wait for process ``pid`` to end, then end the descendants it left behind in its own session.

    Returns the pids that had to be terminated (empty when the command cleaned up after itself).
    """
    try:
        parent = psutil.Process(pid)
        session = os.getsid(pid)
    except (psutil.NoSuchProcess, OSError):
        return []
    known: dict[int, psutil.Process] = {}
    while _alive(parent):
        try:
            for child in parent.children(recursive=True):
                if child.pid != os.getpid() and _same_session(child.pid, session):
                    known.setdefault(child.pid, child)
        except psutil.NoSuchProcess:
            break
        time.sleep(poll_s)
    left = [p for p in known.values() if _alive(p)]  # is_running() also checks the start time: no reused pid
    end_processes(left, grace_s)
    return [p.pid for p in left]


def end_processes(processes: list[psutil.Process], grace_s: float = GRACE_SECONDS) -> None:
    """SIGTERM to every process of ``processes``, SIGKILL to those still running ``grace_s`` seconds later,
    then wait up to ``grace_s`` more for those: returns as soon as all are gone (an event, not a pause).
    Processes that end meanwhile are skipped."""
    for p in processes:
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, stubborn = psutil.wait_procs(processes, timeout=grace_s)
    for p in stubborn:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(stubborn, timeout=grace_s)


if __name__ == "__main__":
    watch(int(sys.argv[1]))
