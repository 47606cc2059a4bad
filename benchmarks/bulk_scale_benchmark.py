"""The bulk first load at MIMIC-CXR scale (issue 18): `cxrkg ingest --bulk` on a 65,000-patient synthetic
cohort, as a user runs it; prints its summary, wall time, peak client memory per process, and how long
`cxrkg stats` takes to report the graph consistent.

Runs against a dedicated local Neo4j (CXRKG_HOME=.cxrkg/bench-bulk-scale, Bolt port 7705) whose store it
deletes first, and stops it at the end. Steps:

1. the cohort: `cxrkg synth --patients N --mean-studies 3.48` into the benchmark's home unless it is there
   already (65,000 patients: 5.2 GB, about 7 minutes; kept for the next run) or `--cohort DIR` names one;
2. `cxrkg db start --fresh`, then `cxrkg ingest --bulk COHORT --no-progress` under the memory sampler
   (bench_env.run_measured: PSS of the command and its Python children every 0.2 s): the command's summary
   (with its stage seconds), wall seconds, the peak summed PSS and each process's share at that peak;
3. `cxrkg stats --format csv`: seconds and the consistency checks that are not 0 (none is the target).

Targets (issue 18): under 5 minutes of wall time, under 2 GB of client memory, consistent.

Usage: python benchmarks/bulk_scale_benchmark.py [--patients 65000] [--mean-studies 3.48] [--cohort DIR]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import NEO4J_STAGES, run_measured, use_dedicated_server  # noqa: E402

use_dedicated_server("bench-bulk-scale", 7705, 7495)
os.environ.setdefault("COLUMNS", "250")  # the summary table's rows unwrapped, for the stage split below

CXRKG = [sys.executable, "-m", "flows.cli"]


def _cohort(args: argparse.Namespace, home: Path) -> Path:
    """Step 1: the named cohort, or the benchmark's own, synthesized once."""
    if args.cohort:
        return Path(args.cohort)
    cohort = home / f"cohort-{args.patients}-{args.mean_studies}"
    if not (cohort / "ground_truth.parquet").exists():  # written last: a cohort cut short is made again
        shutil.rmtree(cohort, ignore_errors=True)
        t = time.perf_counter()
        subprocess.run([*CXRKG, "synth", "--patients", str(args.patients), "--mean-studies", str(args.mean_studies),
                        "--out", str(cohort)], check=True)
        print(f"synth: {time.perf_counter() - t:.1f} s", flush=True)
    return cohort


def _bulk(cohort: Path) -> None:
    """Step 2: the bulk load on a fresh store, measured."""
    subprocess.run([*CXRKG, "db", "start", "--fresh"], check=True, stdout=subprocess.DEVNULL)
    shares: dict[str, list[float]] = {}
    wall, peak, out = run_measured([*CXRKG, "ingest", "--bulk", str(cohort), "--no-progress"], at_peak=shares)
    print(out.rstrip())
    stages = {k: float(v) for k, v in re.findall(r"(check|plan|files|import|start|schema) ([\d.]+)", _stage_line(out))}
    seen = re.search(r"files seen\s*\W\s*([\d,]+)", out)
    if stages and seen:
        neo4j = sum(stages.get(k, 0.0) for k in NEO4J_STAGES)
        print(f"  cxrkg's own stages {sum(stages.values()) - neo4j:.1f} s, Neo4j's (import, start, schema) {neo4j:.1f} s; "
              f"the command's stages {sum(stages.values()):.1f} s = {sum(stages.values()) / neo4j:.2f} x Neo4j's part "
              f"({seen.group(1)} files)")
    print(f"bulk load: {wall:.1f} s wall (target under 300 s), peak client PSS {peak:,.0f} MB (target under "
          "2,048 MB)", flush=True)
    print("  at the peak, MB: " + "; ".join(f"{role} {' / '.join(map(str, sizes))}" for role, sizes in shares.items()))


def _stage_line(out: str) -> str:
    """The summary table's "stages (s)" row."""
    return next((line for line in out.splitlines() if "stages (s)" in line), "")


def _stats() -> None:
    """Step 3: `cxrkg stats`, timed; the checks that failed."""
    t = time.perf_counter()
    out = subprocess.run([*CXRKG, "stats", "--format", "csv"], check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    failed = [f"{r['name']} {r['count']}" for r in rows if r["kind"] == "check" and r["count"] != "0"]
    elements = sum(int(r["count"]) for r in rows if r["kind"] in ("node", "relationship"))
    verdict = "consistent" if not failed else "NOT consistent: " + ", ".join(failed)
    print(f"cxrkg stats: {elements:,} elements, {verdict} ({sum(r['kind'] == 'check' for r in rows)} checks) in "
          f"{time.perf_counter() - t:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patients", type=int, default=65_000)
    parser.add_argument("--mean-studies", type=float, default=3.48, help="MIMIC-CXR: 227,835 / 65,379")
    parser.add_argument("--cohort", help="an existing cohort folder instead of the benchmark's own")
    args = parser.parse_args()

    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    settings = local_server_settings()
    server = LocalNeo4jServer(settings)
    server.stop()
    shutil.rmtree(settings.home / "data", ignore_errors=True)  # a first load needs an empty store
    try:
        _bulk(_cohort(args, settings.home))
        _stats()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
