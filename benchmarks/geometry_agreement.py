"""The geometry's cardiomegaly (and its other decisions) beside the reports' statements, against the planted truth.

Issue 54, done-when 2: on the demo's synthetic cohort (`cxrkg synth --patients 200 --seed 7`, as `cxrkg demo`
writes it), per study, the geometry's decision (GeometryObservation) and the reports' stated finding
(Observation, polarity present; and present or uncertain) against geometry_truth.parquet, with precision,
recall and 95 % intervals (bootstrap over patients), beside always yes and a guess at the prevalence, and the
geometry against the reports (graph.checks.geometry_agreement).

Runs against its own local Neo4j (CXRKG_HOME=.cxrkg/bench-measurements, Bolt port 7711, as
benchmarks/measurements_check.py; CXRKG_HOME / CXRKG_BOLT_PORT / CXRKG_HTTP_PORT set by the caller win). The
cohort is written under CXRKG_HOME unless --cohort names one; with --load (or when it was just written) it is
bulk-loaded into an emptied store, otherwise the graph already there is read.

Usage: python benchmarks/geometry_agreement.py [--cohort FOLDER] [--load] [--patients 200] [--seed 7]
       [--all] [--draws 2000] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import cxrkg, stop_server, use_dedicated_server  # noqa: E402
from graph.terms import BOOTSTRAP_DRAWS  # noqa: E402

use_dedicated_server("bench-measurements", 7711, 7501)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cohort", type=Path, default=None)
    parser.add_argument("--load", action="store_true", help="bulk-load the cohort into an emptied store first")
    parser.add_argument("--patients", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--all", action="store_true", help="every geometry finding, not only cardiomegaly")
    parser.add_argument("--draws", type=int, default=BOOTSTRAP_DRAWS, help="bootstrap draws")
    parser.add_argument("--keep", action="store_true", help="leave the server running at the end")
    args = parser.parse_args()
    from graph.checks.geometry_agreement import CARDIOMEGALY, FINDINGS, agreement, table
    from graph.store import shared_store

    home = Path(os.environ["CXRKG_HOME"])
    cohort = args.cohort or home / f"cohort-{args.patients}-seed{args.seed}"
    load = args.load
    if not (cohort / "geometry_truth.parquet").exists():
        cxrkg("synth", "--patients", str(args.patients), "--seed", str(args.seed), "--out", str(cohort))
        load = True
    try:
        if load:
            cxrkg("db", "stop")
            shutil.rmtree(home / "data", ignore_errors=True)
            print(f"bulk ingest of {cohort}: {cxrkg('ingest', '--bulk', str(cohort))[0]:.1f} s", flush=True)
        cxrkg("db", "start")
        findings = tuple(FINDINGS) if args.all else (CARDIOMEGALY,)
        rows = agreement(cohort, shared_store(), findings, draws=args.draws)
    finally:
        if not args.keep:
            stop_server()
    print(table(rows))


if __name__ == "__main__":
    main()
