"""``cxrkg demo``'s run: the whole path on one machine, its sections in order (``make demo``).

Three inputs are made side by side in worker processes (:mod:`flows.demo.inputs`): a synthetic cohort with its
ground truth, NIH ChestX-ray14 converted to scene graphs, and the IU reports' rules extraction; they are kept
under ``CXRKG_HOME/demo`` and reused by a later run while what made them is unchanged. Into an empty local
database, the NIH cohort, the synthetic cohort with the real RadGraph-XL sample and the IU extraction go in
one bulk import (``neo4j-admin database import``), which also makes the database and starts the server; when
``NEO4J_URI`` names another server or the graph already holds data, each part is loaded through the
transactional ingest flow instead, and each section says which way its part was loaded
(:mod:`flows.demo.loading`).

Then a section per part: the synthetic cohort (:mod:`flows.demo.cohort`), the IU reports
(:mod:`flows.demo.iu`), NIH (:mod:`flows.demo.nih`, then one study's CXRTrek staged questions,
:func:`flows.demo.answers.cxrtrek_section`), and the graph statistics. The last line gives the seconds (and CPU
seconds) of each part (:mod:`flows.demo.part_times`). A local server the demo started is stopped at the end.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from flows.console import library_log
from flows.demo.cohort import cohort_answers, cohort_load_section
from flows.demo.iu import iu_section
from flows.demo.loading import first_load
from flows.demo.nih import nih_section
from flows.demo.part_times import PartTimes

if TYPE_CHECKING:
    from rich.console import Console


def run_demo(console: Console, out: Path | None, patients: int, seed: int) -> None:
    """The demo, start to end; a local server it had to start is stopped at the end (and on Ctrl-C).

    Into a local home with no database yet, the server is not started first: the NIH bulk import makes the
    database and starts it (one start instead of a start, a stop and a start). A second Ctrl-C or SIGTERM
    ends the demo at once (:func:`interrupts`). The last line says where the seconds went.

    Args:
        console: where the sections print (tables print on :data:`flows.console.console`).
        out: the synthetic cohort's folder (the NIH and IU inputs are kept beside it); None:
            ``CXRKG_HOME/demo/cohort-PATIENTS-seedSEED``.
        patients: patients of the synthetic cohort.
        seed: the synthetic cohort's random seed.
    """
    from flows.demo.inputs import DemoInputs, start_prefect_api
    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings, neo4j_settings

    times = PartTimes()
    server, fresh = None, False
    if not neo4j_settings().external:
        console.rule("local Neo4j")
        server = LocalNeo4jServer(local_server_settings())
        if server.status().running:
            server = None  # the user's running server: left running
        elif (server.settings.data_dir / "databases" / (neo4j_settings().database or "neo4j")).exists():
            with times.part("Neo4j start"):
                server.start()
        else:
            fresh = True  # nothing to look at: the NIH bulk import makes the database and starts the server
    inputs = DemoInputs()  # forked before any thread or connection of this process
    try:
        with interrupts(server):
            _run_sections(console, out, patients, seed, _Run(inputs, start_prefect_api(), server, fresh, times))
    finally:
        inputs.close()
        if server is not None and server.status().running:  # started by the demo: stopped, also on Ctrl-C
            with times.part("Neo4j stop"):
                server.stop()
            console.print("Neo4j stopped (the demo started it); `cxrkg db start` brings the graph back to explore")
    console.print(times.line(), highlight=False)


@contextmanager
def interrupts(server) -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM: the first interrupts the demo (``KeyboardInterrupt``: the server it
    started is stopped on the way out, as the inputs' workers); a second one, while that clean-up waits
    (on Prefect's API server, already stopped by the same Ctrl-C, or on Neo4j), asks the server to stop
    and ends the process at once with code 130. Prefect's own SIGTERM handler, installed during a flow
    run, hands the signal on to this one. The child guard (:mod:`flows.child_guard`) ends the command's
    other children (Prefect's server, the workers) once it is gone."""
    import signal

    received: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        received.append(signum)
        if len(received) == 1:
            raise KeyboardInterrupt
        try:  # the server the demo started (or was starting) closes its stores and exits by itself
            os.kill(int(server.settings.pid_file.read_text()), signal.SIGTERM)
        except (AttributeError, OSError, ValueError):  # none, or already gone
            pass
        os._exit(130)

    try:
        before = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: the default behaviour
        before = {}
    try:
        yield
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


@dataclass
class _Run:
    """What the sections share: the inputs being made, the thread starting Prefect's API server (joined
    before the first flow run), the server the demo started (or will), whether the database is new (no
    database yet: the NIH cohort is bulk-imported without a look), the timer."""

    inputs: Any  # flows.demo.inputs.DemoInputs
    prefect_api: Any  # threading.Thread
    server: Any  # graph.runtime.server.LocalNeo4jServer, or None
    fresh: bool
    times: PartTimes


def _run_sections(console: Console, out: Path | None, patients: int, seed: int, run: _Run) -> None:
    from flows.demo.inputs import convert_nih_cached, extract_iu_cached, write_cohort_line
    from graph.settings import local_server_settings, neo4j_settings

    cohort = Path(out or local_server_settings().home / "demo" / f"cohort-{patients}-seed{seed}")
    reuse = (cohort / "ground_truth.parquet").exists()
    if not reuse:
        run.inputs.start("cohort", write_cohort_line, cohort, patients, seed)
    run.inputs.start("nih", convert_nih_cached, cohort.parent / "nih")
    run.inputs.start("iu", extract_iu_cached, cohort.parent / "iu-extract")
    with run.times.part("inputs and bulk load (NIH, cohort, IU)"):
        first = first_load(cohort, reuse, run.fresh, run.inputs, run.times, run.prefect_api)
    nih = first.nih if first else None
    if run.server is not None and not run.server.status().running:  # no bulk load started it
        with run.times.part("Neo4j start"):
            run.server.start()
    if not neo4j_settings().external:
        console.print(f"running at {local_server_settings().bolt_uri}, data in {local_server_settings().data_dir}")
    console.print(f"library log (Prefect, warnings): {library_log()}", highlight=False)

    console.rule(f"synthetic cohort: {patients} patients, seed {seed}")
    with run.times.part("synthetic cohort ingest"):
        written = None if reuse else run.times.beside("synthetic cohort", run.inputs.get("cohort"))
        cohort_load_section(console, cohort, written, first.cohort if first else None, run.prefect_api)
    cohort_answers(console, cohort, run.times)

    with run.times.part("IU (load, queries)"):
        iu_section(console, cohort.parent / "iu-extract", run.times.beside("IU extraction", run.inputs.get("iu")),
                   first.iu if first else None)
    with run.times.part("NIH answers"):
        from flows.demo.answers import cxrtrek_section

        patient = nih_section(console, cohort.parent / "nih", nih,
                              None if nih else run.times.beside("NIH conversion", run.inputs.get("nih")))
        cxrtrek_section(console, patient, cohort.parent / "nih")

    with run.times.part("statistics"):
        _statistics_section(console)


def _statistics_section(console: Console) -> None:
    """The graph's node and relationship counts in one line, and its orphans if any."""
    from graph.store import shared_store
    from graph.store.stats import graph_stats

    console.rule("graph statistics")
    stats = graph_stats(shared_store())
    nodes, rels = stats["nodes"], stats["relationships"]
    console.print(f"{stats['total_nodes']:,} nodes, {stats['total_relationships']:,} relationships: "
                  + ", ".join(f"{n:,} {what}" for what, n in (
                      ("patients", nodes.get("Patient", 0)), ("studies", nodes.get("Study", 0)),
                      ("observations", nodes.get("Observation", 0)), ("mentions", nodes.get("Mention", 0)),
                      ("progression edges", rels.get("PROGRESSION", 0)))) + " (`cxrkg stats` for all)",
                  highlight=False)
    if stats["orphans"]:
        console.print(f"orphans: {stats['orphans']}")

