"""The watcher that ends a killed command's children (flows.child_guard), on real processes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]

# A stand-in command: one child in its own session, one started in a session of its own (like the local
# Neo4j of `cxrkg db start`), then the watcher, then it waits to be killed.
PARENT = """
import subprocess, sys, time
from flows.child_guard import start_guard
own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
apart = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
start_guard()
print(own.pid, apart.pid, flush=True)
time.sleep(120)
"""


def test_a_killed_parent_takes_its_children_but_not_a_separate_session():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    own, apart = (psutil.Process(int(pid)) for pid in parent.stdout.readline().split())
    try:
        time.sleep(2)  # the watcher has started and seen the children
        parent.kill()
        parent.wait()
        parent.stdout.close()
        gone, _ = psutil.wait_procs([own], timeout=10)
        assert gone == [own]
        assert apart.is_running()
    finally:
        for p in (own, apart):
            if p.is_running():
                p.kill()


def test_commands_run_in_one_process_share_one_watcher():
    from flows.child_guard import start_guard

    first = start_guard()
    assert start_guard() is first and first.poll() is None
    first.kill()
    first.wait()
    second = start_guard()  # a watcher that ended is replaced
    assert second is not first and second.poll() is None


def test_the_watcher_left_running_at_exit_warns_of_nothing():
    """It is meant to outlive the command: no "ResourceWarning: subprocess N is still running" at exit
    (printed after every test summary before), with resource warnings shown."""
    done = subprocess.run([sys.executable, "-W", "default::ResourceWarning", "-c",
                           "from flows.child_guard import start_guard; print(start_guard().pid)"],
                          cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stderr == "", done.stderr
    try:
        psutil.Process(int(done.stdout)).wait(10)  # it ends by itself once its parent is gone
    except psutil.NoSuchProcess:
        pass  # already ended
