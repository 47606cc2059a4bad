"""The demo's own machinery: its inputs kept by digest for a rerun, made beside each other in forked
workers, its per-part seconds line, and a second Ctrl-C or SIGTERM that ends it at once."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from flows.demo.inputs import CACHE_FILE, Made, _timed, cached, input_digest
from flows.demo.part_times import PartTimes

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


# The demo forks its workers first thing, before it starts a thread; a test process has threads of earlier
# tests (a fork then may copy a lock another thread held), so the check runs in a fresh process as the demo does.
# Each job waits at a barrier that opens only when all three have reached it: made one after another, the first
# would wait alone and the barrier break (its timeout only bounds how long a failing run takes).
THREE_AT_ONCE = """
import multiprocessing, os
from flows.demo.inputs import DemoInputs, _timed

barrier = multiprocessing.get_context("fork").Barrier(3)  # inherited by the workers forked below

def meet_and_pid():
    return _timed(lambda: ((os.getpid(), barrier.wait(timeout=60))[0], False))

inputs = DemoInputs()
try:
    for name in ("a", "b", "c"):
        inputs.start(name, meet_and_pid)
    made = [inputs.get(name) for name in ("a", "b", "c")]
    print(len({m.value for m in made}), os.getpid() in {m.value for m in made}, [m.skipped for m in made])
finally:
    inputs.close()
"""


def test_inputs_are_made_beside_each_other_in_other_processes():
    done = subprocess.run([sys.executable, "-c", THREE_AT_ONCE], cwd=REPO, capture_output=True, text=True,
                          timeout=180, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]  # a broken barrier: BrokenBarrierError in a job
    assert done.stdout.split() == ["3", "False", "[None,", "None,", "None]"]  # three workers, none this process


def test_a_job_is_timed_in_wall_and_cpu_seconds():
    slept = _timed(lambda: (time.sleep(0.2), False))
    assert slept.seconds >= 0.199 and slept.skipped is None  # the sleep is inside the wall seconds
    burnt = _timed(lambda: (_burn_cpu(0.1), False))
    assert burnt.cpu_seconds >= 0.099 and burnt.seconds > 0


def _burn_cpu(seconds: float) -> None:
    """Compute until this process has used ``seconds`` more of CPU."""
    def used() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    until = used() + seconds
    while used() < until:
        sum(range(10_000))


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
    from flows.demo.run import interrupts
    with interrupts(None):
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
