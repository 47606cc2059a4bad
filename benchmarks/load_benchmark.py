"""Load benchmark: every way cxrkg loads a cohort, beside the ceilings, in one run on the same input.

Runs against a dedicated local Neo4j (CXRKG_HOME=.cxrkg/bench-load, Bolt port 7700) whose store it deletes
before each load. On one synthetic cohort (`cxrkg synth`, seed 11):

1. bulk: the bulk flow (`cxrkg ingest --bulk`) on an empty store; its importer stage alone is the
   neo4j-admin ceiling (the import tool on ready-made files of the same elements);
2. transactional, fresh: the ingest flow (`cxrkg ingest`) on an empty graph;
3. plain driver: the elements of that graph, dumped to disk first (not timed), written again by a plain
   script into an empty graph with the same constraints: one ``UNWIND $rows ... CREATE`` transaction per
   10,000 nodes or relationships, relationships matched on their ends' constrained keys, one session;
4. transactional, incremental: the cohort without its latest studies loaded first, then those (new patients
   and new studies of known patients, whose events are re-derived) timed on top. The increment is a month of
   MIMIC-CXR's volume relative to its size: 227,835 studies over 2011-2016 (Johnson et al., "MIMIC-CXR, a
   de-identified publicly available database of chest radiographs with free-text reports", Scientific Data
   2019) is 1/60 of the studies a month, so the latest 1/60 of the cohort's studies by date;
5. the named queries on the whole cohort, as `make bench` times them.

Each load runs in a child process. Printed per load: elements (nodes plus relationships the load leaves in
the graph; for the increment, those it adds), seconds, elements/s, peak client memory (summed PSS of the
Python processes: the flow, its workers, Prefect's temporary API server), peak server memory (RSS of the
Neo4j JVM, or of the importer's), and the rate as a ratio to the plain-driver ceiling.

Kuzu as a peer, where it is installed (the optional ``bench`` extra: ``pip install -e '.[bench]'``): the
bulk load's import files, kept, are copied into an embedded Kuzu database under the benchmark's home by
``COPY FROM`` (benchmarks/kuzu_peer.py: tables from the files' headers, arrays split inside the COPY), in a
child process while Neo4j is stopped; its counts per label and type are checked against the bulk load's.
Its elements are the files' rows (the bulk load's count less the vocabulary links its schema step adds);
its memory, in-process, is the child's peak RSS, in the server column.

After the bulk load's line: its stages split into cxrkg's own (check, plan, files) and Neo4j's (import,
start, schema), the whole load as a ratio of Neo4j's part, and the files stage's CPU per input file.
``--profile`` first prints where the plan and files stages spend their CPU (benchmarks/files_profile.py).

``--txn N``: only the transactional fresh load and the plain driver, side by side, N times in turn on the same
cohort (the elements dumped once, after the first fresh load, and kept as ``plain-dump-PATIENTS`` under the
benchmark's home for later ``--txn`` runs), each pair's ratio with the load average before it (the machine's
other work moves both loads' rates; a pair run back to back shares most of it), and the fresh load's stages.

Usage: python benchmarks/load_benchmark.py [--patients 2000] [--increment-share 0.0167] [--profile] [--txn N]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import bulk_split, timed_flow, use_dedicated_server  # noqa: E402

use_dedicated_server("bench-load", 7700, 7490)
from ingest_benchmark import query_latencies  # noqa: E402  (the same query timing as `make bench`)

PLAIN_BATCH = 10_000


@dataclass
class Load:
    """One timed load: what the table prints."""

    name: str
    elements: int
    seconds: float
    client_mb: float
    server_mb: float

    @property
    def rate(self) -> float:
        return self.elements / self.seconds


# --- children: one load each, printing a JSON line -------------------------------------------------------

def _child(mode: str, cohort: Path) -> dict:
    """Run one load in this (child) process: ``fresh`` / ``increment`` (the ingest flow on an empty graph /
    on top of what is there), ``bulk`` (the bulk flow on the emptied store, its import files kept),
    ``plain`` (the dumped elements in ``cohort``, written by :func:`plain_write`), ``kuzu`` (the kept
    import files in ``cohort``, by :func:`kuzu_copy`)."""
    if mode == "plain":
        return plain_write(cohort)
    if mode == "kuzu":
        return kuzu_copy(cohort)
    if mode == "bulk":
        from flows.bulk_flow import bulk_ingest_flow

        keep = str(_kept_files())
        shutil.rmtree(keep, ignore_errors=True)  # left by a run that stopped before its Kuzu step
        seconds, summary, nodes, rels = timed_flow(
            lambda: bulk_ingest_flow([str(cohort)], rejected_report=None, keep_import_files=keep), clear=False)
        return {"seconds": seconds, "elements": sum(nodes.values()) + sum(rels.values()), "nodes": nodes,
                "rels": rels, "rejections": len(summary.rejections), "stage_seconds": summary.stage_seconds,
                "files": summary.files_seen, "files_cpu": summary.files_cpu_seconds,
                "workers": f"{summary.workers} ({summary.engine})"}
    from flows.ingest_flow import ingest_flow
    from graph.store import shared_store
    from graph.store.stats import label_counts

    before = 0
    if mode == "increment":
        nodes, rels = label_counts(shared_store())
        before = sum(nodes.values()) + sum(rels.values())
    seconds, summary, nodes, rels = timed_flow(lambda: ingest_flow([str(cohort)], rejected_report=None),
                                               clear=mode == "fresh")
    return {"seconds": seconds, "elements": sum(nodes.values()) + sum(rels.values()) - before,
            "rejections": len(summary.rejections), "stage_seconds": summary.stage_seconds}


# --- Kuzu as a peer ------------------------------------------------------------------------------------

def _kept_files() -> Path:
    """Where the bulk child keeps its import files for the Kuzu step (under the benchmark's home)."""
    from graph.settings import local_server_settings

    return local_server_settings().home / "bulk-files"


def kuzu_copy(files: Path) -> dict:
    """The Kuzu step (child process): the import files kept in ``files`` COPY-ed into a new Kuzu database
    under the benchmark's home (benchmarks/kuzu_peer.py). Returns the seconds (tables and COPY, the
    arrays' conversion included; the counts afterwards not), the rows loaded, Kuzu's counts per label and
    type, and this process's peak RSS in MB (Linux ``ru_maxrss``, KiB)."""
    import resource

    from kuzu_peer import load_kuzu

    from graph.ingest.import_files import read_listing

    folder = files.parent / "kuzu"  # Kuzu 0.11 keeps a database in one file, beside its write-ahead log
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    started = time.perf_counter()
    done = load_kuzu(folder / "db", read_listing(files))
    shutil.rmtree(folder, ignore_errors=True)
    nodes, rels = done.nodes, done.relationships
    return {"seconds": done.seconds, "elements": sum(nodes.values()) + sum(rels.values()), "nodes": nodes, "rels": rels,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rejections": 0,
            "stage_seconds": {"total with counts": round(time.perf_counter() - started, 3)}}


def kuzu_peer(bulk: dict, pid_file: Path) -> Load | None:
    """Run the Kuzu step on the bulk load's kept files, print how its counts compare with the bulk load's,
    and return its row; None (saying why) when kuzu is not installed."""
    import importlib.util

    files = _kept_files()
    try:
        if importlib.util.find_spec("kuzu") is None:
            print("Kuzu COPY FROM (peer): not run: kuzu is not installed (pip install -e '.[bench]')")
            return None
        load, r = measured("Kuzu COPY FROM (peer)", "kuzu", files, pid_file)
    finally:
        shutil.rmtree(files, ignore_errors=True)
    wrong = {k: (v, bulk["nodes"].get(k)) for k, v in r["nodes"].items() if bulk["nodes"].get(k) != v}
    wrong |= {k: (v, bulk["rels"].get(k)) for k, v in r["rels"].items() if bulk["rels"].get(k) != v}
    schema_only = {k: v for counts, got in ((bulk["nodes"], r["nodes"]), (bulk["rels"], r["rels"]))
                   for k, v in counts.items() if k not in got}
    if wrong:
        print(f"CHECK FAILED: Kuzu's counts differ from the bulk load's (kuzu, neo4j): {wrong}")
    else:
        print(f"check: Kuzu's counts equal the bulk load's for its {len(r['nodes'])} labels and {len(r['rels'])} "
              f"relationship types (not in the files, made by the bulk load's schema step: {schema_only})")
    return Load(load.name, load.elements, load.seconds, 0.0, r["peak_mb"])


# --- the plain-driver ceiling ----------------------------------------------------------------------------

def dump_elements(out: Path) -> int:
    """Write every node and relationship of the benchmark's graph to ``out`` as pickled chunks of
    ``PLAIN_BATCH`` rows, one group per label and per (type, start label, end label); returns the count.
    Vocabulary nodes and their links are left out: the plain script starts, as the flows do, from a graph
    whose schema step created them."""
    from graph.store import shared_store
    from graph.store.statements import NODE_KEYS

    vocabulary_labels = {"Anatomy", "Finding"}
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    count = 0
    with shared_store().driver.session() as session:
        for label in sorted(set(NODE_KEYS) - vocabulary_labels):
            result = session.run(f"MATCH (n:`{label}`) RETURN properties(n) AS p")
            count += _write_chunks(out, ("node", label), (r["p"] for r in result))
        # one relationship type at a time and no ORDER BY: a sort of every relationship outgrows the
        # server's transaction memory at 10,000 patients
        types = [r["t"] for r in session.run("CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t")]
        for rel in types:
            result = session.run(f"MATCH (a)-[r:`{rel}`]->(b) WHERE NOT (a:Anatomy OR a:Finding) "
                                 "RETURN labels(a)[0] AS sl, labels(b)[0] AS el, a[$keys[labels(a)[0]]] AS s, "
                                 "b[$keys[labels(b)[0]]] AS e, properties(r) AS p", keys=dict(NODE_KEYS))
            buffers: dict[tuple, list] = {}
            for r in result:
                rows = buffers.setdefault(("rel", rel, r["sl"], r["el"]), [])
                rows.append({"s": r["s"], "e": r["e"], "p": r["p"]})
                if len(rows) == PLAIN_BATCH:
                    count += _save(out, ("rel", rel, r["sl"], r["el"]), rows)
                    buffers[("rel", rel, r["sl"], r["el"])] = []
            count += sum(_save(out, group, rows) for group, rows in buffers.items() if rows)
    return count


def _write_chunks(out: Path, group: tuple, rows) -> int:
    n, chunk = 0, []
    for row in rows:
        chunk.append(row)
        if len(chunk) == PLAIN_BATCH:
            n += _save(out, group, chunk)
            chunk = []
    return n + (_save(out, group, chunk) if chunk else 0)


def _save(out: Path, group: tuple, chunk: list) -> int:
    index = len(list(out.glob("*.pkl")))
    with (out / f"{index:06d}.pkl").open("wb") as fh:
        pickle.dump((group, chunk), fh, protocol=pickle.HIGHEST_PROTOCOL)
    return len(chunk)


def plain_write(dump: Path) -> dict:
    """The plain-driver ceiling: the dumped chunks, nodes first, each written in its own write transaction
    by one ``UNWIND $rows`` statement (``CREATE`` on the label, relationships ``MATCH``-ed on the constrained
    keys of their ends), one session, into the benchmark's emptied graph with its schema. Returns the
    seconds of the writes (reading a chunk from disk included) and the elements in the graph after them."""
    from graph.store import shared_store
    from graph.store.statements import NODE_KEYS
    from graph.store.stats import label_counts
    from graph.vocabulary import vocabulary

    store = shared_store()
    store.clear()
    store.ensure_schema(vocabulary())
    chunks = sorted(dump.glob("*.pkl"))
    started = time.perf_counter()
    with store.driver.session() as session:
        for path in chunks:
            with path.open("rb") as fh:
                group, rows = pickle.load(fh)
            if group[0] == "node":
                query = f"UNWIND $rows AS r CREATE (n:`{group[1]}`) SET n = r"
            else:
                _, rel, start, end = group
                query = (f"UNWIND $rows AS r MATCH (a:`{start}` {{`{NODE_KEYS[start]}`: r.s}}) "
                         f"MATCH (b:`{end}` {{`{NODE_KEYS[end]}`: r.e}}) CREATE (a)-[x:`{rel}`]->(b) SET x = r.p")
            session.execute_write(lambda tx, q=query, rows=rows: tx.run(q, rows=rows).consume())
    seconds = time.perf_counter() - started
    nodes, rels = label_counts(store)
    return {"seconds": seconds, "elements": sum(nodes.values()) + sum(rels.values()), "rejections": 0,
            "stage_seconds": {}}


# --- the parent: inputs, measured children, the table ----------------------------------------------------

def split_latest(cohort: Path, out: Path, share: float) -> tuple[Path, Path, int]:
    """Hard-link the cohort's files into ``out/base`` and ``out/delta``: the latest ``share`` of its studies
    (by the metadata CSV's StudyDate, then study id) go to delta with their scene graphs and reports; both
    get the CSV. Returns (base, delta, studies in delta)."""
    import pandas as pd

    from graph.synth import METADATA_CSV, RADGRAPH_DIR, SCENE_GRAPH_DIR

    meta = pd.read_csv(cohort / METADATA_CSV, dtype=str)
    order = meta.drop_duplicates("study_id").sort_values(["StudyDate", "study_id"])
    studies = set(order["study_id"].iloc[len(order) - max(1, round(share * len(order))):])
    images = set(meta.loc[meta["study_id"].isin(studies), "dicom_id"])
    base, delta = out / "base", out / "delta"
    shutil.rmtree(out, ignore_errors=True)
    for path in (cohort / SCENE_GRAPH_DIR).rglob("*.json"):
        _link(path, cohort, delta if path.name.removesuffix("_SceneGraph.json") in images else base)
    for path in (cohort / RADGRAPH_DIR).rglob("*.json"):
        _link(path, cohort, delta if path.stem.removeprefix("s") in studies else base)
    for part in (base, delta):
        shutil.copy(cohort / METADATA_CSV, part / METADATA_CSV)
    return base, delta, len(studies)


def _link(path: Path, root: Path, to: Path) -> None:
    target = to / path.relative_to(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.link(path, target)


class Peaks:
    """Samples, every 0.2 s while a child runs, the summed PSS of its Python processes (client) and the
    RSS of the Java processes: the local server (by its pid file) and any the child starts (server)."""

    def __init__(self, proc, pid_file: Path):
        self.proc, self.pid_file = proc, pid_file
        self.client = self.server = 0.0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while self.proc.poll() is None:
            try:
                tree = [self.proc, *self.proc.children(recursive=True)]
                python = [p for p in tree if "java" not in p.name()]
                java = {p.pid: p for p in tree if "java" in p.name()}
                if self.pid_file.exists():
                    pid = int(self.pid_file.read_text().split()[0])
                    if psutil.pid_exists(pid):
                        java.setdefault(pid, psutil.Process(pid))
                self.client = max(self.client, sum(p.memory_full_info().pss for p in python) / 2**20)
                self.server = max(self.server, sum(p.memory_info().rss for p in java.values()) / 2**20)
            except (psutil.Error, ValueError, OSError):
                pass
            time.sleep(0.2)

    def join(self) -> None:
        self._thread.join()


def measured(name: str, mode: str, path: Path, pid_file: Path) -> tuple[Load, dict]:
    """Run one child load; its Load (and the child's JSON answer)."""
    import psutil

    proc = psutil.Popen([sys.executable, __file__, "--child", mode, str(path)], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    peaks = Peaks(proc, pid_file)
    try:
        out, err = proc.communicate()
    except BaseException:  # Ctrl-C or a kill of this process: the child and its workers go with it
        _kill_tree(proc)
        raise
    peaks.join()
    if proc.returncode:
        sys.exit(f"{name} failed:\n{err[-3000:]}")
    r = json.loads(out.strip().splitlines()[-1])
    load = Load(name, r["elements"], r["seconds"], peaks.client, peaks.server)
    stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stage_seconds"].items())
    print(f"{name}: {load.elements:,} elements in {load.seconds:.1f} s" + (f" (stages, s: {stages})" if stages else ""),
          flush=True)
    return load, r


def _kill_tree(proc) -> None:
    """SIGKILL a process and its descendants, tolerating any that end meanwhile."""
    import psutil

    try:
        tree = [*proc.children(recursive=True), proc]
    except psutil.Error:  # the child is ending on its own signal: kill what is left of it
        tree = [proc]
    for p in tree:
        try:
            p.kill()
        except psutil.Error:
            pass


def run_all(args: argparse.Namespace, server, settings) -> list[Load]:
    """Every load of the module docstring, in order, each on an emptied store; the rows of the table."""
    from graph.synth import write_cohort

    cohort = settings.home / f"cohort-{args.patients}"
    if not (cohort / "ground_truth.parquet").exists():
        write_cohort(cohort, patients=args.patients, seed=11)
    pid = settings.pid_file

    def empty(start: bool = True) -> None:
        server.stop()
        shutil.rmtree(settings.data_dir, ignore_errors=True)
        if start:
            server.start(fresh=True)  # the store was deleted on purpose

    if args.profile:
        subprocess.run([sys.executable, str(Path(__file__).parent / "files_profile.py"), str(cohort), "--cprofile"],
                       check=True)
    empty(start=False)
    bulk, r = measured("bulk (cxrkg ingest --bulk)", "bulk", cohort, pid)
    print(bulk_split(r["seconds"], r["stage_seconds"], r["files"], r["files_cpu"]) + f"; workers {r['workers']}")
    importer = Load("neo4j-admin import (ceiling)", bulk.elements, r["stage_seconds"]["import"], 0.0, bulk.server_mb)
    server.stop()  # as for the importer: Kuzu runs while Neo4j does not
    kuzu = kuzu_peer(r, pid)
    empty()
    fresh, _ = measured("transactional, fresh (cxrkg ingest)", "fresh", cohort, pid)
    dump = settings.home / "plain-dump"
    dumped = dump_elements(dump)
    empty()
    plain, _ = measured("plain driver (ceiling)", "plain", dump, pid)
    shutil.rmtree(dump, ignore_errors=True)
    if plain.elements != fresh.elements:
        print(f"note: the plain script made {plain.elements:,} elements, the flow {fresh.elements:,} "
              f"({dumped:,} dumped)")
    base, delta, studies = split_latest(cohort, settings.home / "split", args.increment_share)
    empty()
    measured("transactional, all but the latest studies", "fresh", base, pid)
    increment, _ = measured(f"transactional, incremental (latest {studies:,} studies)", "increment", delta, pid)
    print("named queries on the whole cohort, warm, 50 runs each:")
    for name, (p50, p95, rows) in query_latencies(cohort).items():
        print(f"  {name:<34} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   {rows:>5} rows", flush=True)
    return [bulk, importer, *([kuzu] if kuzu else []), fresh, plain, increment]


def run_txn(args: argparse.Namespace, server, settings) -> list[Load]:
    """``--txn N``: the fresh transactional load and the plain driver, N pairs in turn (module docstring); the
    rows of the table (each pair's plain-driver row named with the pair's number). The dumped elements are kept
    under the benchmark's home for the next ``--txn`` run of the same cohort (dumping 2,000 patients' graph
    takes minutes); a pair whose plain script makes another count of elements than the flow says so."""
    from graph.synth import write_cohort

    cohort = settings.home / f"cohort-{args.patients}"
    if not (cohort / "ground_truth.parquet").exists():
        write_cohort(cohort, patients=args.patients, seed=11)
    dump, loads = settings.home / f"plain-dump-{args.patients}", []

    def empty() -> None:
        server.stop()
        shutil.rmtree(settings.data_dir, ignore_errors=True)
        server.start(fresh=True)  # the store was deleted on purpose

    for n in range(1, args.txn + 1):
        load_avg = " / ".join(f"{x:.1f}" for x in os.getloadavg())
        empty()
        fresh, _ = measured(f"transactional, fresh (cxrkg ingest) #{n}", "fresh", cohort, settings.pid_file)
        if not dump.is_dir():
            dump_elements(dump.with_name(dump.name + ".part"))
            dump.with_name(dump.name + ".part").rename(dump)
        empty()
        plain, _ = measured(f"plain driver (ceiling) #{n}", "plain", dump, settings.pid_file)
        if plain.elements != fresh.elements:
            print(f"note: the plain script made {plain.elements:,} elements, the flow {fresh.elements:,} "
                  f"(dump {dump}: delete it if the graph a load makes has changed)")
        print(f"  pair {n}: {fresh.rate:,.0f} against {plain.rate:,.0f} elements/s = {fresh.rate / plain.rate:.2f}x "
              f"(load average before the pair {load_avg}, after {' / '.join(f'{x:.1f}' for x in os.getloadavg())};"
              f" {os.cpu_count()} CPUs)", flush=True)
        loads += [fresh, plain]
    return loads


def print_table(loads: list[Load], patients: int) -> None:
    """The one summary table: each load, and its rate against the plain-driver ceiling."""
    ceilings = [x.rate for x in loads if x.name.startswith("plain driver")]
    ceiling = ceilings[0]
    print(f"\nload benchmark, {patients:,} synthetic patients, {os.cpu_count()} CPUs")
    print(f"{'load':<58} {'elements':>11} {'s':>7} {'el/s':>9} {'client MB':>9} {'server MB':>9} {'x plain':>7}")
    for n, x in enumerate(loads):
        if n and x.name.startswith("transactional, fresh (cxrkg ingest) #"):  # --txn: each pair its own ceiling
            ceiling = next(y.rate for y in loads[n:] if y.name.startswith("plain driver"))
        client = f"{x.client_mb:,.0f}" if x.client_mb else "-"
        print(f"{x.name:<58} {x.elements:>11,} {x.seconds:>7.1f} {x.rate:>9,.0f} {client:>9} "
              f"{x.server_mb:>9,.0f} {x.rate / ceiling:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patients", type=int, default=2000)
    parser.add_argument("--increment-share", type=float, default=1 / 60,
                        help="the increment: this share of the studies, the latest by date (default: a month)")
    parser.add_argument("--profile", action="store_true", help="first profile the plan and files stages in one "
                        "process (benchmarks/files_profile.py --cprofile)")
    parser.add_argument("--txn", type=int, default=0, metavar="N", help="only the fresh transactional load and "
                        "the plain driver, N pairs in turn")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child[0], Path(args.child[1]))))
        return

    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a kill stops the children and the server too
    settings = local_server_settings()
    server = LocalNeo4jServer(settings)
    try:
        print_table((run_txn if args.txn else run_all)(args, server, settings), args.patients)
    finally:
        server.stop()  # the benchmark's own server, also on Ctrl-C


if __name__ == "__main__":
    main()
