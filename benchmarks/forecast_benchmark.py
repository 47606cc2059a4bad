"""Next-study forecasting on the whole NIH ChestX-ray14 cohort, one command: convert, bulk load, export,
forecast table, every forecaster (the baselines and the graph forecaster) scored on development (val) and held-out (test) patients; prints the table
and the seconds of each stage.

Runs against a dedicated local Neo4j (CXRKG_HOME=.cxrkg/bench-forecast, Bolt port 7701) whose store it deletes
first, and stops it at the end (also on Ctrl-C or a kill).

Usage: python benchmarks/forecast_benchmark.py [--patients N] [--bootstrap N] [--out report.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import REPO, use_dedicated_server  # noqa: E402
from graph.terms import BOOTSTRAP_DRAWS  # noqa: E402

use_dedicated_server("bench-forecast", 7701, 7491)


def _stage(name: str, seconds: dict[str, float], run):
    started = time.perf_counter()
    result = run()
    seconds[name] = time.perf_counter() - started
    print(f"{name}: {seconds[name]:.1f} s", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patients", type=int, default=None, help="only the N lowest patient ids")
    parser.add_argument("--bootstrap", type=int, default=BOOTSTRAP_DRAWS, help="bootstrap draws (default 2,000)")
    parser.add_argument("--out", type=Path, default=None, help="also write the full report as JSON")
    args = parser.parse_args()

    from graph.datasets.nih.convert import convert_nih
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    settings = local_server_settings()
    server = LocalNeo4jServer(settings)
    server.stop()
    shutil.rmtree(settings.data_dir, ignore_errors=True)
    cohort, snapshot = settings.home / f"nih-{args.patients or 'all'}", settings.home / "snapshot"
    seconds: dict[str, float] = {}
    try:
        shutil.rmtree(cohort, ignore_errors=True)
        _stage("convert", seconds, lambda: convert_nih(cohort, limit_patients=args.patients))
        _stage("bulk load", seconds, lambda: subprocess.run(
            [sys.executable, "-m", "flows.cli", "ingest", str(cohort), "--bulk", "--no-progress"], cwd=REPO,
            check=True, stdout=subprocess.DEVNULL))
        evaluate(args, snapshot, seconds)
    finally:
        server.stop()


def evaluate(args: argparse.Namespace, snapshot: Path, seconds: dict[str, float]) -> None:
    """Export, forecast table, the forecasters; prints the stages, the table and the total."""
    from gnn.export import export_snapshot
    from gnn.forecast.baselines import BASELINES
    from gnn.forecast.model import GRAPH_FORECASTER, gnn_forecaster
    from gnn.forecast.report import evaluate_forecasters, table_rows
    from gnn.forecast.rows import forecast_table
    from graph.store import shared_store

    _stage("export", seconds, lambda: export_snapshot(shared_store(), snapshot))
    table = _stage("forecast table", seconds, lambda: forecast_table(snapshot))
    report = _stage("fit and score (bootstrap {})".format(args.bootstrap), seconds,
                    lambda: evaluate_forecasters(table, {**BASELINES, GRAPH_FORECASTER: gnn_forecaster(log=print)},
                                                 bootstrap=args.bootstrap))
    if args.out:
        args.out.write_text(json.dumps(report.as_dict(), indent=2, default=float))
    print(f"\n{len(table.findings)} findings; rows " + ", ".join(
        f"{k} {v:,} ({report.patients[k]:,} patients)" for k, v in report.rows.items()))
    print("targets (test): " + ", ".join(f"{k} {v:,}" for k, v in report.targets["test"].items()))
    print(f"{'model':<32} {'split':<5} {'onset AUROC':<24} {'resolution AUROC':<24} {'macro-F1 (4 targets)':<24}")
    for r in table_rows(report):
        print(f"{r['model']:<32} {r['split']:<5} {r['onset_auroc']:<24} {r['resolution_auroc']:<24} {r['macro_f1']:<24}")
    print("fitting and scoring seconds per model: " + ", ".join(f"{k} {v:.1f}" for k, v in report.seconds.items()))
    print(f"export + table + fit and score: {sum(v for k, v in seconds.items() if k not in ('convert', 'bulk load')):.1f} s"
          " (target < 15 min with the GNN)")


if __name__ == "__main__":
    main()
