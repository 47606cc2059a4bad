"""Benchmark: how long the quick commands take from the shell, beside their floors (issues 18 and 43).

First their start-up (issue 43: at most 1.5 times a bare ``python -c "import typer"``): ``cxrkg queries``,
``cxrkg query patient_studies``, ``cxrkg stats`` and ``cxrkg db status`` run against a home with no server on
closed ports, so each does all its importing and dispatch and then fails fast (exit 1, or 3 for ``db status``;
``queries`` needs no server and runs whole), next to the interpreter alone and ``python -c "import typer"``,
with each one's ratio to the latter. ``--startup-only`` stops there: no Java, no Neo4j needed.

Then ``cxrkg queries`` and ``cxrkg query patient_studies -p patient_id=P`` are timed as a user runs them, a new
process each time against a warm local server, next to floors on the same machine in the same run: the
Python interpreter alone (``python -c pass``), a plain script that sends the same Cypher to the server's
HTTP Query API with Python's standard library (the way the quick commands read the local server, so the
ceiling a command could reach) and a plain script that imports only the neo4j driver and runs it.

Each is run once to warm the file cache, then ``--runs`` times; printed: median wall ms, median CPU ms (user
plus system of the process, less sensitive to other load on the machine than wall time) and the median wall
as a ratio to the table's reference.

The graph is whatever the benchmark's home holds (``.cxrkg/bench-load``, left by
``benchmarks/load_benchmark.py``); with an empty graph, ``--patients N`` writes and loads a synthetic cohort
first. The server is started if it is not running and stopped again at the end (also on Ctrl-C).

Usage: python benchmarks/cli_benchmark.py [--runs 5] [--patients 0] [--startup-only]
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import use_dedicated_server  # noqa: E402

use_dedicated_server("bench-load", 7700, 7490)

BIN = Path(sys.executable).parent
PLAIN = """
import os, sys
from neo4j import GraphDatabase
auth = (os.environ["U"], os.environ["P"])
with GraphDatabase.driver(os.environ["URI"], auth=auth) as driver:
    records, _, _ = driver.execute_query(sys.argv[1], patient_id=sys.argv[2], database_=os.environ["DB"])
print(len(records))
"""
# the same read as one POST to the server's HTTP Query API, Python's standard library only
PLAIN_HTTP = """
import base64, json, os, sys, urllib.request
body = json.dumps({"statement": sys.argv[1], "parameters": {"patient_id": sys.argv[2]}, "accessMode": "Read"})
token = base64.b64encode((os.environ["U"] + ":" + os.environ["P"]).encode()).decode()
request = urllib.request.Request(os.environ["HTTP"] + "/db/" + os.environ["DB"] + "/query/v2", data=body.encode(),
                                 headers={"Authorization": "Basic " + token, "Content-Type": "application/json"})
with urllib.request.urlopen(request) as response:
    print(len(json.load(response)["data"]["values"]))
"""


def timed_run(cmd: list[str], env: dict[str, str], codes: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Run ``cmd`` to the end; (wall ms, CPU ms of the process and its children). Exits if it ends with a
    code not in ``codes``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in codes:
        sys.exit(f"{' '.join(cmd[:4])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def medians(cmd: list[str], env: dict[str, str], runs: int, codes: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """One warm-up run, then ``runs`` timed ones: (median wall ms, median CPU ms)."""
    timed_run(cmd, env, codes)
    samples = [timed_run(cmd, env, codes) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def print_table(title: str, rows: list[tuple[str, float, float]], reference: float, against: str) -> None:
    """The rows (name, wall ms, CPU ms) under ``title``, each wall time as a ratio to ``reference``."""
    print(title)
    print(f"{'command':<50}{'wall ms':>9}{'CPU ms':>9}{' ' + against:>16}")
    for name, wall, cpu in rows:
        print(f"{name:<50}{wall:>9.0f}{cpu:>9.0f}{wall / reference:>16.2f}")


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def startup(runs: int) -> None:
    """The quick commands' start-up beside ``python -c "import typer"``: against an empty home whose server
    ports are closed, each imports and dispatches as it would and then fails fast (``queries`` runs whole)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cxrkg-startup-") as home:
        env = {**os.environ, "CXRKG_HOME": home, "CXRKG_BOLT_PORT": str(closed_port()),
               "CXRKG_HTTP_PORT": str(closed_port())}
        cxrkg = str(BIN / "cxrkg")
        timed = [
            ("python -c pass (interpreter floor)", [sys.executable, "-c", "pass"], (0,)),
            ('python -c "import typer" (reference)', [sys.executable, "-c", "import typer"], (0,)),
            ("python -c: typer and rich's console and table", [sys.executable, "-c", "import typer, rich.console, "
                                                               "rich.table"], (0,)),  # what a table costs anyway
            ("cxrkg queries", [cxrkg, "queries"], (0,)),
            ("cxrkg query patient_studies (no server: exit 1)", [cxrkg, "query", "patient_studies", "-p",
                                                                 "patient_id=1"], (1,)),
            ("cxrkg stats (no server: exit 1)", [cxrkg, "stats"], (1,)),
            ("cxrkg db status (no server: exit 3)", [cxrkg, "db", "status"], (3,)),
        ]
        rows = [(name, *medians(cmd, env, runs, codes)) for name, cmd, codes in timed]
    print_table(f"quick commands' start-up, median of {runs} runs (load average {os.getloadavg()[0]:.1f}):",
                rows, rows[1][1], "x import typer")


def commands(patient: str) -> list[tuple[str, list[str]]]:
    """The timed commands and their floors, in print order."""
    from graph.store.queries import catalogue

    cypher = catalogue()["patient_studies"].cypher
    return [
        ("python -c pass (interpreter floor)", [sys.executable, "-c", "pass"]),
        ("plain HTTP script, patient_studies (ceiling)", [sys.executable, "-c", PLAIN_HTTP, cypher, patient]),
        ("plain driver script, patient_studies", [sys.executable, "-c", PLAIN, cypher, patient]),
        ("cxrkg queries", [str(BIN / "cxrkg"), "queries"]),
        ("cxrkg query patient_studies", [str(BIN / "cxrkg"), "query", "patient_studies", "-p",
                                         f"patient_id={patient}"]),
        ("cxrkg db status", [str(BIN / "cxrkg"), "db", "status"]),
    ]


def a_patient(patients: int) -> str:
    """A patient of the benchmark's graph; when it is empty, first writes and loads a synthetic cohort of
    ``patients`` with ``cxrkg synth`` and ``cxrkg ingest``."""
    from graph.store import shared_store

    query = "MATCH (p:Patient) RETURN p.patient_id AS id LIMIT 1"
    found = shared_store().read(query)
    if not found and patients:
        cohort = Path(os.environ["CXRKG_HOME"]) / f"cli-cohort-{patients}"
        for cmd in (["synth", "--patients", str(patients), "--out", str(cohort)], ["ingest", str(cohort)]):
            subprocess.run([str(BIN / "cxrkg"), *cmd], check=True, capture_output=True)
        found = shared_store().read(query)
    if not found:
        sys.exit("the benchmark's graph is empty: run benchmarks/load_benchmark.py first, or pass --patients N")
    return found[0]["id"]


def run(args: argparse.Namespace) -> None:
    """Time every command and print the table."""
    from graph.settings import local_server_settings, neo4j_settings
    from graph.store import shared_store

    patient = a_patient(args.patients)
    neo = neo4j_settings()
    env = {**os.environ, "URI": neo.uri, "U": neo.user, "P": neo.password, "DB": neo.database or "neo4j",
           "HTTP": local_server_settings().http_uri}
    rows = [(name, *medians(cmd, env, args.runs)) for name, cmd in commands(patient)]
    nodes = shared_store().read("MATCH (n) RETURN count(n) AS n")[0]["n"]
    print_table(f"quick commands, warm server, {nodes:,} nodes in the graph, median of {args.runs} runs "
                f"(load average {os.getloadavg()[0]:.1f}):", rows, rows[1][1], "x plain HTTP")


def main() -> None:
    """Parse the arguments, time the start-up, then (unless --startup-only) the commands on a warm server."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--patients", type=int, default=0, help="cohort to load when the graph is empty")
    parser.add_argument("--startup-only", action="store_true", help="time the start-up only (no server)")
    args = parser.parse_args()

    startup(args.runs)
    if args.startup_only:
        return
    print()

    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = LocalNeo4jServer(local_server_settings())
    started = not server.status().running
    if started:
        server.start()
    try:
        run(args)
    finally:
        if started:
            server.stop()


if __name__ == "__main__":
    main()
