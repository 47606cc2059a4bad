"""Concurrent ingestion against the real Neo4j: two ingest flow runs started at once (two processes,
the Prefect test harness's API) on overlapping files leave the graph identical to one run, and a
deadlock between write transactions is retried rather than failing the load.

Waits are on events (a file appears, a process exits) with bounds generous enough for a machine whose
cores other loads keep busy; the bounds only keep a hung run from hanging the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.loading import graph_snapshot, load_into

REPO = Path(__file__).resolve().parents[2]

# One ingest run in its own process: connect and import first, then wait for the start signal so both
# runs begin their flows within milliseconds of each other.
RUN = """
import json, sys, time
from pathlib import Path
from flows.ingest_flow import ingest_flow
from graph.store import shared_store
shared_store()
go, paths = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
Path(sys.argv[2] + ".ready").touch()
while not go.exists():
    time.sleep(0.005)
s = ingest_flow(paths, batch_files=3, rejected_report=None)
print("RESULT " + json.dumps({"loaded": s.files_loaded, "unchanged": s.files_unchanged,
                              "rejected": len(s.rejections), "relinked": s.patients_relinked}))
"""

DUPLICATE_RELATIONSHIPS = """
MATCH (a)-[r]->(b)
WITH elementId(a) AS a, elementId(b) AS b, type(r) AS t, properties(r) AS p, count(*) AS n
WHERE n > 1
RETURN t, n
"""


def _start_pair(tmp_path: Path, runs: list[list[str]]) -> list[dict]:
    from prefect.settings import get_current_settings

    # The suite's server ends a lock wait after 5 s (tests/conftest.py); on a busy machine one run's batch
    # can hold its patients' locks longer. Like two users' loads, the runs rely on the product's retry of
    # the lock wait (graph.store.busy), here with a budget no busy machine exhausts.
    env = {**os.environ, **get_current_settings().to_environment_variables(exclude_unset=True),
           "PYTHONPATH": str(REPO), "CXRKG_NEO4J_LOCK_RETRY": "10m"}
    go = tmp_path / "go"
    procs, lists = [], []
    for i, paths in enumerate(runs):
        lst = tmp_path / f"run{i}.json"
        lst.write_text(json.dumps(paths))
        lists.append(lst)
        procs.append(subprocess.Popen([sys.executable, "-c", RUN, str(go), str(lst)], cwd=REPO, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 600
    while not all(Path(str(lst) + ".ready").exists() for lst in lists):
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline, "ingest processes did not get ready"
        time.sleep(0.05)
    go.touch()
    results = []
    for p in procs:
        out, errs = p.communicate(timeout=900)
        assert p.returncode == 0, errs[-4000:]
        line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
        assert line, out[-2000:] + errs[-2000:]
        results.append(json.loads(line[-1][len("RESULT "):]))
    return results


@pytest.mark.slow
def test_two_runs_at_once_on_overlapping_files_equal_one_run(store, prefect_harness, tmp_path):
    from graph.ingest import METADATA, discover
    from graph.synth import write_cohort
    from graph.vocabulary import vocabulary

    cohort = tmp_path / "cohort"
    write_cohort(cohort, patients=8, seed=21)
    files = discover([cohort])
    meta = [f.path for f in files if f.format == METADATA]
    data = [f.path for f in files if f.format != METADATA]
    # run A: the first two thirds, run B: the last two thirds; the middle third is in both. The
    # interleaved split puts every patient's studies in both runs, so both relink the same patients.
    a = [p for i, p in enumerate(data) if i % 3 != 2]
    b = [p for i, p in enumerate(data) if i % 3 != 0]
    results = _start_pair(tmp_path, [meta + a, meta + b])
    assert [r["rejected"] for r in results] == [0, 0]
    # no file lost: each one was loaded by at least one run
    assert sum(r["loaded"] for r in results) >= len(data)
    assert store.read("MATCH (f:SourceFile) RETURN count(f) AS n")[0]["n"] == len(data)
    assert store.read(DUPLICATE_RELATIONSHIPS) == []
    concurrent = graph_snapshot(store)

    store.clear()
    v = vocabulary()
    store.ensure_schema(v)
    load_into(store, cohort)
    one_run = graph_snapshot(store)

    for kind, got, want in (("nodes", concurrent[0], one_run[0]), ("relationships", concurrent[1], one_run[1])):
        extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
        assert not extra and not missing and len(got) == len(want), (kind, extra[:3], missing[:3])


def test_a_deadlock_between_write_transactions_is_retried(store):
    """Two managed write transactions (the kind every GraphStore write uses) lock two patients in
    opposite orders; Neo4j detects the deadlock, reports it as transient, and the driver retries the
    victim, so both finish and each increment is applied exactly once."""
    import neo4j

    with store.driver.session() as session:
        session.run("UNWIND ['dl-1', 'dl-2'] AS id CREATE (:Patient {patient_id: id, hits: 0})").consume()
    barrier = threading.Barrier(2, timeout=30)
    attempts = {"a": 0, "b": 0}
    errors: list[BaseException] = []

    def work(name: str, first: str, second: str):
        def tx_fn(tx: neo4j.ManagedTransaction) -> None:
            attempts[name] += 1
            tx.run("MATCH (p:Patient {patient_id: $id}) SET p.hits = p.hits + 1", id=first).consume()
            if attempts[name] == 1:
                barrier.wait()  # both hold their first lock
            tx.run("MATCH (p:Patient {patient_id: $id}) SET p.hits = p.hits + 1", id=second).consume()

        try:
            with store.driver.session(database=store.database) as session:
                session.execute_write(tx_fn)
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=("a", "dl-1", "dl-2")),
               threading.Thread(target=work, args=("b", "dl-2", "dl-1"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert sorted(attempts.values()) == [1, 2]  # exactly one victim, retried once
    hits = {r["id"]: r["hits"] for r in store.read(
        "MATCH (p:Patient) WHERE p.patient_id STARTS WITH 'dl-' RETURN p.patient_id AS id, p.hits AS hits")}
    assert hits == {"dl-1": 2, "dl-2": 2}
