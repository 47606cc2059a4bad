"""The demo's own machinery: its inputs kept by digest for a rerun, made beside each other in forked
workers, its per-part seconds line, and a second Ctrl-C or SIGTERM that ends it at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from flows.cli.demo import PartTimes
from flows.demo.inputs import CACHE_FILE, Made, _timed, cached, input_digest

REPO = Path(__file__).resolve().parents[3]


def test_a_kept_output_is_reused_only_under_its_key(tmp_path):
    made: list[str] = []

    def make(value: str):
        def write():
            made.append(value)
            (tmp_path / "out.txt").write_text(value)
            return {"summary": value}
        return write

    assert cached(tmp_path, "key-1", make("first")) == ({"summary": "first"}, False)
    assert cached(tmp_path, "key-1", make("second")) == ({"summary": "first"}, True)
    assert cached(tmp_path, "key-2", make("third")) == ({"summary": "third"}, False)
    assert made == ["first", "third"]
    (tmp_path / CACHE_FILE).write_bytes(b"not a pickle")  # a record this version cannot read: made again
    assert cached(tmp_path, "key-2", make("fourth")) == ({"summary": "fourth"}, False)


def test_the_digest_follows_the_wheel_and_the_code():
    a = input_digest("0" * 64, ("datasets", "vocabulary.py"))
    assert a == input_digest("0" * 64, ("datasets", "vocabulary.py"))
    assert a != input_digest("1" * 64, ("datasets", "vocabulary.py"))
    assert a != input_digest("0" * 64, ("datasets",))
    assert len(a) == 64


def _sleep_and_pid(seconds: float) -> Made:
    return _timed(lambda: ((os.getpid(), time.sleep(seconds))[0], False))


# The demo forks its workers first thing, before it starts a thread; a test process has threads of earlier
# tests (a fork then may copy a lock another thread held), so the check runs in a fresh process as the demo does.
THREE_AT_ONCE = """
import os, time
from flows.demo.inputs import DemoInputs, _timed

def sleep_and_pid():
    return _timed(lambda: ((os.getpid(), time.sleep(1.0))[0], False))

inputs = DemoInputs()
try:
    started = time.perf_counter()
    for name in ("a", "b", "c"):
        inputs.start(name, sleep_and_pid)
    pids = {inputs.get(name).value for name in ("a", "b", "c")}
    print(round(time.perf_counter() - started, 2), len(pids), os.getpid() in pids)
finally:
    inputs.close()
"""


def test_inputs_are_made_beside_each_other_in_other_processes():
    done = subprocess.run([sys.executable, "-c", THREE_AT_ONCE], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    seconds, processes, in_parent = done.stdout.split()
    assert float(seconds) < 2.5  # three 1-s jobs at once, not one after the other
    assert processes == "3" and in_parent == "False"
    assert _seconds_ok(_sleep_and_pid(0.2))


def _seconds_ok(made: Made) -> bool:
    return 0.2 <= made.seconds < 1.0 and made.cpu_seconds < made.seconds and made.skipped is None


def test_an_unavailable_input_is_skipped_with_the_reason():
    from graph.datasets.wheel import WheelUnavailable

    def job():
        raise WheelUnavailable("cannot download torchxrayvision 1.5.7 from the package registry: offline")

    made = _timed(job)
    assert made.value is None and made.skipped.endswith("registry: offline")


def test_the_seconds_line_names_each_part_and_what_was_made_beside():
    times = PartTimes()
    with times.part("NIH (conversion, bulk load)"):
        pass
    times.beside("NIH conversion", Made(seconds=14.04, cpu_seconds=0.21, reused=True))
    line = times.line()
    assert line.startswith("seconds per part (CPU s): NIH (conversion, bulk load) 0.0 (0.0); made beside them: "
                           "NIH conversion 14.0 (0.2) (kept from an earlier run); total ")
    assert "load average" in line


_BLOCKED_CLEAN_UP = textwrap.dedent("""
    import sys, time
    from flows.cli.demo import _interrupts
    with _interrupts(None):
        try:
            print("ready", flush=True)
            time.sleep(60)
        except KeyboardInterrupt:
            print("cleaning up", flush=True)
            time.sleep(60)  # a clean-up that hangs, as one waiting on a stopped API server
    """)


def test_a_second_signal_ends_the_demo_at_once_while_its_clean_up_hangs():
    proc = subprocess.Popen([sys.executable, "-c", _BLOCKED_CLEAN_UP], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout.readline().strip() == "cleaning up"  # the first: a KeyboardInterrupt, clean-up runs
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 130
    finally:
        proc.kill()
        proc.wait()
