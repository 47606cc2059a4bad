"""Whether two checkouts of cxrkg make the same graph from the same input: each checkout loads each cohort
with each loader (the bulk flow, ``cxrkg ingest --bulk``; the transactional flow, ``cxrkg ingest``) into a
dedicated local Neo4j (CXRKG_HOME=.cxrkg/bench-same-graph, Bolt port 7702), and the graph's content hash
is printed per checkout, cohort and loader: SHA-256 of :func:`graph.store.content.graph_content`, one
sorted line per node (labels, properties) and per relationship (type, ends, properties), only
``SourceFile.loaded_at`` left out. The loads of one cohort and loader run back to back, the base's first.
Where two hashes differ, the first lines the graphs do not share are printed.

Usage: python benchmarks/same_graph.py --base DIR COHORT [COHORT ...] [--loaders bulk,transactional]

DIR is the other checkout, e.g. main's: ``git worktree add /tmp/cxrkg-main main`` (or ``git archive main |
tar -x -C DIR``); this checkout is the one the script lies in. Each load runs in a child process started in
its checkout, so each imports its own code.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_env import REPO, use_dedicated_server

use_dedicated_server("bench-same-graph", 7702, 7492)

CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from prefect.testing.utilities import prefect_test_harness
from graph.store import reset_shared_store, shared_store
from graph.store.content import graph_content
from graph.vocabulary import vocabulary

loader, cohort, out = sys.argv[2:5]
shared_store().clear()
with prefect_test_harness(server_startup_timeout=120):
    if loader == "bulk":
        from flows.bulk_flow import bulk_ingest_flow
        bulk_ingest_flow([cohort], rejected_report=None)
    else:
        from flows.ingest_flow import ingest_flow
        shared_store().ensure_schema(vocabulary())
        ingest_flow([cohort], rejected_report=None)
reset_shared_store()
with open(out, "w", encoding="utf-8") as f:
    f.write("\\n".join(graph_content(shared_store())))
"""


def content_of(tree: Path, loader: str, cohort: Path, out: Path) -> list[str]:
    """The graph content lines of ``cohort`` loaded by ``loader`` with the code of checkout ``tree``."""
    subprocess.run([sys.executable, "-c", CHILD, str(tree), loader, str(cohort), str(out)], cwd=tree, check=True,
                   stdout=subprocess.DEVNULL)
    return out.read_text(encoding="utf-8").split("\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="the other checkout (e.g. main's)")
    parser.add_argument("cohorts", type=Path, nargs="+")
    parser.add_argument("--loaders", default="bulk,transactional")
    args = parser.parse_args()
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    server = LocalNeo4jServer(local_server_settings())
    server.start()
    work = Path(tempfile.mkdtemp(prefix="same-graph-"))
    differ = 0
    try:
        for cohort in args.cohorts:
            for loader in args.loaders.split(","):
                base = content_of(args.base.resolve(), loader, cohort.resolve(), work / "base.txt")
                mine = content_of(REPO, loader, cohort.resolve(), work / "mine.txt")
                digests = [hashlib.sha256("\n".join(lines).encode()).hexdigest() for lines in (base, mine)]
                print(f"{cohort.name} {loader}: {len(base):,} nodes and relationships, base {digests[0]}; "
                      f"{len(mine):,}, this checkout {digests[1]}: {'same' if digests[0] == digests[1] else 'DIFFER'}",
                      flush=True)
                if digests[0] != digests[1]:
                    differ += 1
                    only_base, only_mine = sorted(set(base) - set(mine)), sorted(set(mine) - set(base))
                    print(f"  only in base ({len(only_base)}): {only_base[:3]}\n"
                          f"  only in this checkout ({len(only_mine)}): {only_mine[:3]}", flush=True)
    finally:
        server.stop()
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
