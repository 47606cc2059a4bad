"""How the batches of a run are scheduled (graph.ingest.schedule), without Neo4j or Prefect: futures from
a real thread pool stand in for Prefect task futures."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from graph.ingest import StreamedFile, batch_keys, independent, write_window
from graph.records import ParsedFile, StudyRecord


def _parsed(path: str, *studies: tuple[str, str]) -> ParsedFile:
    return ParsedFile(path=path, studies=[StudyRecord(study_id=s, patient_id=p, study_datetime=None, record=s)
                                          for p, s in studies])


def test_batch_keys_name_patients_and_studies_or_nothing():
    parsed = [_parsed("a.json", ("p1", "s1")), _parsed("b.json", ("p2", "s2"))]
    assert batch_keys(parsed, set()) == {"patient:p1", "study:s1", "patient:p2", "study:s2"}
    assert batch_keys(parsed, {"b.json"}) is None  # a changed file may have named others before
    assert batch_keys([StreamedFile(path="big.json")], set()) is None  # not parsed yet


def test_independence():
    assert independent({"patient:1"}, [{"patient:2"}, {"study:9"}])
    assert not independent({"patient:1", "study:5"}, [{"study:5"}])
    assert not independent(None, []) and not independent({"patient:1"}, [None])


def test_write_window_bounds_overlap_and_keeps_order():
    running, most, lock = set(), [0], threading.Lock()

    def write(job):
        with lock:
            running.add(job)
            most[0] = max(most[0], len(running))
            overlap = {job} | running
        time.sleep(0.05)
        with lock:
            running.discard(job)
        return job, overlap

    keys = {"a": {"patient:1"}, "b": {"patient:2"}, "c": {"patient:2"}, "d": None, "e": {"patient:3"}}
    with ThreadPoolExecutor(4) as pool:
        done = list(write_window(((j, k) for j, k in keys.items()), lambda j: pool.submit(write, j), writers=2))
    assert [job for job, _ in done] == list(keys)  # results come back in start order
    assert most[0] == 2  # two at once at most, and two did run together (a and b)
    overlaps = {job: result[1] for job, result in done}
    assert "b" not in overlaps["c"] and overlaps["d"] == {"d"}  # shared patient, unknown keys: alone
    with pytest.raises(ValueError):
        list(write_window([], lambda j: None, writers=0))


def _socket_descriptors() -> int:
    import os
    import stat

    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            count += stat.S_ISSOCK(os.fstat(int(name)).st_mode)
        except OSError:
            pass
    return count


def test_forked_workers_hold_none_of_the_parents_sockets():
    """A worker that kept the parent's Bolt socket would keep a killed parent's transaction and locks alive."""
    import socket

    from graph.runtime.processes import forked_pool

    with socket.socket() as held, socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        held.connect(listener.getsockname())
        assert _socket_descriptors() >= 2
        with forked_pool(1) as pool:
            assert pool.submit(_socket_descriptors).result(timeout=30) == 0
