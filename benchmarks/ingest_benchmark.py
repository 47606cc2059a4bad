"""Ingest and query benchmark (`make bench`): prints figures, asserts nothing.

Runs against a dedicated local Neo4j (CXRKG_HOME=.cxrkg/bench, Bolt port 7698) that it clears, so the
demo database is never touched. Steps:

1. write synthetic cohorts of 500 and 2,000 patients;
2. ingest each with the Prefect flow in a fresh subprocess on an empty graph: graph elements
   (nodes + relationships in the graph afterwards) per second and the process's peak RSS, so growth
   with input size is visible;
3. the naive way on the first 100 patients: one auto-committed MERGE statement per record;
4. every named query, 5 warm-up then 50 timed runs each, p50 / p95 in ms.

Usage: python benchmarks/ingest_benchmark.py [--patients 2000] [--small 500] [--naive-patients 100]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import run_child, timed_flow, use_dedicated_server  # noqa: E402

use_dedicated_server("bench", 7698, 7488)


def ingest_once(cohort: Path) -> dict:
    """Child process: clear the graph, run the flow on the cohort, report seconds, elements, peak RSS."""
    from flows.child_guard import start_guard
    from flows.ingest_flow import ingest_flow

    start_guard()  # its parse worker and Prefect's server end with it, also when the parent kills it

    seconds, summary, nodes, rels = timed_flow(lambda: ingest_flow([str(cohort)], rejected_report=None))
    return {"seconds": seconds, "elements": sum(nodes.values()) + sum(rels.values()), "files": summary.files_loaded,
            "rejections": len(summary.rejections), "stage_seconds": summary.stage_seconds,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "child_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


NAIVE_MENTION = """
MERGE (p:Patient {patient_id: $patient_id})
MERGE (s:Study {study_id: $study_id}) SET s.study_datetime = $when
MERGE (p)-[:HAS_STUDY]->(s)
MERGE (a:Anatomy {name: $anatomy}) MERGE (f:Finding {name: $finding})
MERGE (o:Observation {observation_id: $observation_id})
MERGE (s)-[:HAS_OBSERVATION]->(o) MERGE (o)-[:LOCATED_AT]->(a) MERGE (o)-[:OF_FINDING]->(f)
MERGE (m:Mention {mention_id: $mention_id}) SET m.polarity = $polarity, m.evidence = $evidence, m.file = $file
MERGE (o)-[:HAS_MENTION]->(m)
"""


def naive(cohort: Path, patients: int) -> dict:
    """One auto-committed MERGE per mention record over the first patients' files (same parsers)."""
    from graph.ingest import discover, parse_file
    from graph.records import observation_id
    from graph.store import shared_store
    from graph.store.stats import label_counts
    from graph.vocabulary import vocabulary

    store = shared_store()
    store.clear()
    store.ensure_schema(vocabulary())
    before = sum(sum(c.values()) for c in label_counts(store))
    files = discover([cohort / "scene_graphs", cohort / "radgraph"])
    started = time.perf_counter()
    seen_patients: set[str] = set()
    with store.driver.session() as session:
        for f in files:
            pf = parse_file(f, vocabulary(), None)
            if not pf.studies:
                continue
            pid = pf.studies[0].patient_id
            if pid not in seen_patients and len(seen_patients) >= patients:
                continue
            seen_patients.add(pid)
            when = {s.study_id: s.study_datetime for s in pf.studies}
            for m in pf.mentions:
                session.run(NAIVE_MENTION, patient_id=pid, study_id=m.study_id, when=when.get(m.study_id),
                            anatomy=m.anatomy, finding=m.finding,
                            observation_id=observation_id(m.study_id, m.anatomy, m.finding),
                            mention_id=m.mention_id, polarity=m.polarity, evidence=m.evidence, file=m.file).consume()
    seconds = time.perf_counter() - started
    after = sum(sum(c.values()) for c in label_counts(store))
    return {"seconds": seconds, "elements": after - before, "patients": len(seen_patients)}


def query_latencies(cohort: Path) -> dict[str, tuple[float, float, int]]:
    """Every named query, 5 warm-up then 50 timed runs: name -> (p50 ms, p95 ms, rows returned)."""
    import pandas as pd

    from graph.store import shared_store
    from graph.store.queries import catalogue

    store = shared_store()
    truth = pd.read_parquet(cohort / "ground_truth.parquet")
    # a patient whose pleural effusion worsened by the reports, so worsening_findings has rows to return
    stated = truth["stated_radgraph"].eq("worsened") | truth["stated_imagenome"].fillna("").str.contains("worsened")
    row = truth[truth["change"].eq("worsened") & truth["finding"].eq("pleural effusion") & stated].iloc[0]
    year = store.read("MATCH (s:Study {study_id: $s}) RETURN s.study_datetime.year AS y", s=str(row["study_id"]))[0]["y"]
    # new_finding_patients over one calendar year (the question as users ask it); the whole cohort's
    # dates (every onset, about 1,350 rows at 2,000 patients) is timed as a separate line.
    params = {"patient_id": str(row["patient_id"]), "finding": "pleural effusion", "start_date": f"{year}-01-01",
              "end_date": f"{year}-12-31", "current_study_id": str(row["study_id"]),
              "prior_study_id": str(row["prior_study_id"])}
    runs = [(q.name, q, params) for q in catalogue().values()]
    runs.append(("new_finding_patients (all dates)", catalogue()["new_finding_patients"],
                 {**params, "start_date": "1900-01-01", "end_date": "2299-12-31"}))
    return time_queries(store, runs)


def time_queries(store, runs: list[tuple[str, object, dict]]) -> dict[str, tuple[float, float, int]]:
    """(label, NamedQuery, parameter values) each: 5 warm-up then 50 timed runs -> (p50 ms, p95 ms, rows).
    Values the query does not declare are ignored; undeclared ones take their defaults."""
    from graph.store.queries import run_named

    out = {}
    for name, q, values in runs:
        bound = q.bind({p.name: values[p.name] for p in q.params if p.name in values})
        rows = len(run_named(store, q, bound))
        for _ in range(5):
            run_named(store, q, bound)
        times = []
        for _ in range(50):
            t = time.perf_counter()
            run_named(store, q, bound)
            times.append((time.perf_counter() - t) * 1000)
        out[name] = (statistics.median(times), statistics.quantiles(times, n=20)[18], rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patients", type=int, default=2000)
    parser.add_argument("--small", type=int, default=500)
    parser.add_argument("--naive-patients", type=int, default=100)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(ingest_once(Path(args.child))))
        return

    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    server = LocalNeo4jServer(local_server_settings())
    started_here = not server.status().running
    server.start()
    interrupted = False
    try:
        run_all(args, local_server_settings().home)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        # the benchmark's own server: stopped, also on Ctrl-C, and promptly then (its graph is the
        # benchmark's alone and cleared by every run, so a kill after 15 s loses nothing)
        if started_here:
            server.stop(timeout_s=15 if interrupted else 60)


def run_all(args: argparse.Namespace, home: Path) -> None:
    """Both loads, the query latencies and the naive way, printed as they finish."""
    from graph.synth import write_cohort

    runs = {}
    for n in sorted({args.small, args.patients}):
        cohort = home / f"cohort-{n}"
        if not (cohort / "ground_truth.parquet").exists():
            write_cohort(cohort, patients=n, seed=11)
        out = run_child([sys.executable, __file__, "--child", str(cohort)])
        runs[n] = json.loads(out.strip().splitlines()[-1])
        r = runs[n]
        print(f"ingest {n:>5} patients: {r['files']} files, {r['elements']:,} graph elements in {r['seconds']:.1f} s "
              f"= {r['elements'] / r['seconds']:,.0f} elements/s; peak RSS {r['peak_rss_mb']:.0f} MB "
              f"(largest child process, the parse worker or Prefect's test API: {r['child_rss_mb']:.0f} MB); "
              f"{r['rejections']} rejections", flush=True)
    big = home / f"cohort-{args.patients}"
    latencies = query_latencies(big)  # the graph now holds the big cohort (last child run)
    naive_run = naive(big, args.naive_patients)
    batched_rate = runs[args.patients]["elements"] / runs[args.patients]["seconds"]
    naive_rate = naive_run["elements"] / naive_run["seconds"]
    print(f"naive (one MERGE per record, {naive_run['patients']} patients): {naive_run['elements']:,} elements in "
          f"{naive_run['seconds']:.1f} s = {naive_rate:,.0f} elements/s; batched flow is {batched_rate / naive_rate:.1f}x faster")
    print("named queries, warm, 50 runs each:")
    for name, (p50, p95, rows) in latencies.items():
        print(f"  {name:<34} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   {rows:>5} rows")


if __name__ == "__main__":
    main()
