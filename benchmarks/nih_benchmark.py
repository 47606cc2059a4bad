"""NIH ChestX-ray14 benchmark: the whole real cohort converted, loaded, checked and queried; prints figures.

Runs against a dedicated local Neo4j (CXRKG_HOME=.cxrkg/bench-nih, Bolt port 7699) whose store it deletes first. Steps:

1. `cxrkg datasets nih` on the full wheel (112,120 images of 30,805 patients): seconds;
2. the ingest flow on an empty graph in a fresh subprocess (what `cxrkg ingest` runs): seconds, elements
   (left out with --skip-transactional);
3. the bulk flow (what `cxrkg ingest --bulk` runs) on an empty store in a fresh subprocess: seconds of the
   flow and of the whole process, elements, peak memory of the Python processes, each stage's seconds and
   the machine's busy cores in it (flows.cpu.busy_cores); the independent check
   and the queries then run on this graph;
4. the independent check (graph.checks.nih.loaded: plain pandas over the NIH tables against the graph's
   study-level counts and new_finding_patients answers): cells and patient sets compared, mismatches; then
   the episodes (graph.checks.nih.episodes: every episode's first and last study and closing, episodes
   per finding, recurrent_findings' patients): compared, mismatches;
5. named queries on the NIH graph, after one untimed pass of 5 runs over all of them, 5 warm-up then 50
   timed runs each, p50 / p95 in ms, and the server's CPU time per run (it does not grow with the load of a
   shared machine as wall time does).

Usage: python benchmarks/nih_benchmark.py [--patients N] [--skip-transactional]   (default: all patients)
       python benchmarks/nih_benchmark.py --queries-only [--repeat N]   (step 5 again, N times, on the graph an
                                     earlier run left, after creating the current schema's indexes)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import REPO, bulk_split, run_measured, timed_flow, use_dedicated_server  # noqa: E402

use_dedicated_server("bench-nih", 7699, 7489)
from ingest_benchmark import time_queries  # noqa: E402  (same timing as `make bench`)


def latencies(store, patient: str, server_pid: int | None = None) -> dict[str, tuple[float, float, int, float]]:
    """Named queries on NIH data: name -> (p50 ms, p95 ms, rows, server CPU ms per run). The server's CPU
    time (all its threads, over the 56 runs of time_queries) does not grow with the machine's load as wall
    time does; NaN without ``server_pid``."""
    from graph.store.queries import catalogue, run_named

    q = catalogue()
    studies = [r["study_id"] for r in run_named(store, q["patient_studies"], q["patient_studies"].bind({"patient_id": patient}))]
    base = {"patient_id": patient, "finding": "pleural effusion", "start_date": "2001-01-01", "end_date": "2001-12-31",
            "current_study_id": studies[-1], "prior_study_id": studies[0]}
    runs = [(name, query, base) for name, query in q.items()]
    runs += [("new_finding_patients (all dates)", q["new_finding_patients"], {**base, "start_date": "1900-01-01",
                                                                                "end_date": "2299-12-31"}),
             ("new_finding_patients (anatomy, all dates)", q["new_finding_patients"],
              {**base, "start_date": "1900-01-01", "end_date": "2299-12-31", "level": "anatomy"}),
             ("finding_timeline (anatomy)", q["finding_timeline"], {**base, "level": "anatomy"}),
             ("recurrent_findings (all dates)", q["recurrent_findings"], {**base, "start_date": "1900-01-01",
                                                                          "end_date": "2299-12-31"}),
             ("recurrent_findings (anatomy, all dates)", q["recurrent_findings"],
              {**base, "start_date": "1900-01-01", "end_date": "2299-12-31", "level": "anatomy"}),
             ("episode_durations (anatomy)", q["episode_durations"], {**base, "level": "anatomy"}),
             ("finding_episodes (anatomy)", q["finding_episodes"], {**base, "level": "anatomy"})]
    import psutil

    server = psutil.Process(server_pid) if server_pid else None
    # One untimed pass over every query first: the server's JIT then compiles the operators the queries share
    # before any is timed (without it, the first episode query timed paid for them: episode_durations p95 24 ms
    # as the first, 16 ms at level anatomy right after, 2026-11-27)
    for _, query, values in runs:
        bound = query.bind({p.name: values[p.name] for p in query.params if p.name in values})
        for _ in range(5):
            run_named(store, query, bound)
    out = {}
    for run in runs:
        before = sum(server.cpu_times()[:2]) if server else math.nan
        p50, p95, rows = time_queries(store, [run])[run[0]]
        after = sum(server.cpu_times()[:2]) if server else math.nan
        out[run[0]] = (p50, p95, rows, (after - before) * 1000 / 56)  # 1 + 5 warm-up + 50 timed runs
    return out


def _print_latencies(store, server) -> None:
    """Step 5's lines, with the load average before and after (the machine may be shared)."""
    print("named queries on the NIH graph, warm, 50 runs each (dates are synthetic, order kept); "
          f"load average {os.getloadavg()[0]:.1f}:", flush=True)
    for name, (p50, p95, rows, cpu) in latencies(store, "13", server.status().pid).items():
        print(f"  {name:<42} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   server CPU {cpu:6.2f} ms   {rows:>6} rows",
              flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}", flush=True)


def bulk_once(cohort: Path) -> dict:
    """Child process: the bulk flow on the cohort (the store was emptied by the parent)."""
    from flows.bulk_flow import bulk_ingest_flow

    seconds, summary, nodes, rels = timed_flow(lambda: bulk_ingest_flow([str(cohort)], rejected_report=None),
                                               clear=False)
    return {"seconds": seconds, "elements": sum(nodes.values()) + sum(rels.values()), "files": summary.files_loaded,
            "rejections": len(summary.rejections), "stage_seconds": summary.stage_seconds,
            "files_cpu": summary.files_cpu_seconds, "workers": f"{summary.workers} ({summary.engine})",
            "stage_cores": summary.stage_cores}


def _print_load(title: str, r: dict, wall: float, rss: float, extra: str = "") -> None:
    """One load's line (elements, rates, process wall time and Python peak memory) and its stage times."""
    print(f"{title}: {r['files']:,} files, {r['elements']:,} graph elements in {r['seconds']:.1f} s "
          f"({r['elements'] / r['seconds']:,.0f} elements/s); process {wall:.1f} s, Python peak {rss:,.0f} MB; "
          f"{r['rejections']} rejections{extra}", flush=True)
    print("  stages (s): " + ", ".join(f"{k} {v:.1f}" for k, v in r["stage_seconds"].items()), flush=True)
    if r.get("stage_cores"):  # the bulk load's: idle cores are what overlapping stages could use
        print(f"  cores busy (the machine's, of {os.cpu_count()}): "
              + ", ".join(f"{k} {v:.1f}" for k, v in r["stage_cores"].items()), flush=True)


def _convert(cohort: Path, patients: int | None) -> float:
    """Step 1: `cxrkg datasets nih` into a fresh folder, no server running; returns its seconds."""
    from graph.datasets.nih.convert import convert_nih

    shutil.rmtree(cohort, ignore_errors=True)  # a fresh folder, as a first conversion writes
    t = time.perf_counter()
    summary = convert_nih(cohort, limit_patients=patients)
    convert_s = time.perf_counter() - t
    print(f"convert: {summary.images:,} images of {summary.patients:,} patients in {convert_s:.1f} s", flush=True)
    return convert_s


def _transactional_load(server, cohort: Path) -> None:
    """Step 2: the ingest flow on an empty graph, in a child process (ingest_benchmark.py --child)."""
    server.start(fresh=True)  # main() deleted the store on purpose
    wall, rss, out = run_measured([sys.executable, str(REPO / "benchmarks" / "ingest_benchmark.py"),
                                   "--child", str(cohort)])
    _print_load("transactional ingest", json.loads(out.strip().splitlines()[-1]), wall, rss)


def _bulk_load(settings, server, cohort: Path, convert_s: float) -> None:
    """Step 3: the bulk flow on an emptied store, in a child process (this script with --bulk-child)."""
    server.stop()
    shutil.rmtree(settings.home / "data", ignore_errors=True)
    wall, rss, out = run_measured([sys.executable, __file__, "--bulk-child", str(cohort)])
    r = json.loads(out.strip().splitlines()[-1])
    _print_load("bulk ingest", r, wall, rss, f"; convert + ingest {convert_s + r['seconds']:.1f} s (target < 90 s)")
    print(bulk_split(r["seconds"], r["stage_seconds"], r["files"], r["files_cpu"]) + f"; workers {r['workers']}",
          flush=True)


def _check_and_query(server, patients: int | None) -> None:
    """Steps 4 and 5: the independent check, then the named queries' latencies, on the bulk-loaded graph."""
    from graph.checks.nih.loaded import check_nih
    from graph.checks.nih.reference import load_tables
    from graph.store import shared_store

    server.start()  # running already (the bulk flow starts it); a no-op then
    store = shared_store()
    t = time.perf_counter()
    report = check_nih(store, load_tables(limit_patients=patients))
    print(f"independent check: {report.count_cells:,} count cells and {report.patient_sets} patient sets compared "
          f"in {time.perf_counter() - t:.1f} s; {len(report.mismatches)} mismatches", flush=True)
    for line in report.mismatches[:10]:
        print("  " + line)
    from graph.checks.nih.episodes import check_episodes

    t = time.perf_counter()
    episodes = check_episodes(store, load_tables(limit_patients=patients))
    print(f"episodes (graph.checks.nih.episodes): {episodes.episodes:,} episodes, {episodes.findings} per-finding "
          f"counts and {episodes.recurrent_sets} recurrent patient sets compared in {time.perf_counter() - t:.1f} s; "
          f"{len(episodes.mismatches)} mismatches", flush=True)
    for line in episodes.mismatches[:10]:
        print("  " + line)
    _print_latencies(store, server)


def _queries_only(server, repeat: int) -> None:
    """Step 5 alone, ``repeat`` times on the same warm server, on the graph an earlier run of this script left
    in its home (then stops the server)."""
    from graph.store import shared_store
    from graph.vocabulary import vocabulary

    server.start()
    try:
        store = shared_store()
        store.ensure_schema(vocabulary())  # the indexes of the current schema, on a graph an older cxrkg loaded
        for _ in range(repeat):
            _print_latencies(store, server)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patients", type=int, default=None, help="only the N lowest patient ids")
    parser.add_argument("--skip-transactional", action="store_true", help="time the bulk load only")
    parser.add_argument("--queries-only", action="store_true", help="time the named queries on the graph an "
                                                                     "earlier run left (no conversion, no load)")
    parser.add_argument("--repeat", type=int, default=1, help="with --queries-only: time the queries this many "
                                                                 "times on the same warm server")
    parser.add_argument("--bulk-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bulk_child:
        print(json.dumps(bulk_once(Path(args.bulk_child))))
        return

    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    settings = local_server_settings()
    server = LocalNeo4jServer(settings)
    if args.queries_only:
        _queries_only(server, args.repeat)
        return
    # The home is the benchmark's own: start from an empty store rather than deleting millions of
    # relationships left by an earlier run through Cypher (minutes).
    server.stop()
    shutil.rmtree(settings.home / "data", ignore_errors=True)
    try:
        # what a user runs: the conversion needs no server (and none competes with it for the cores)
        cohort = local_server_settings().home / f"nih-{args.patients or 'all'}"
        convert_s = _convert(cohort, args.patients)
        if not args.skip_transactional:
            _transactional_load(server, cohort)
        _bulk_load(settings, server, cohort, convert_s)
        _check_and_query(server, args.patients)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
