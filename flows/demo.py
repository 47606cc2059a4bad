"""``cxrkg demo``: the whole path on one machine, as a runnable example.

Starts the local Neo4j when no external one is configured, writes a synthetic cohort, ingests it with
the real RadGraph-XL sample, and prints one patient's worsening pleural effusions from the graph next to
the synthetic ground truth, with the cohort-wide agreement, then the graph statistics.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

FINDING = "pleural effusion"


def sample_paths() -> tuple[Path, Path]:
    """The shipped RadGraph-XL sample (MIT, Stanford-AIMI) and its doc mapping CSV."""
    root = Path(str(resources.files("graph") / "samples" / "radgraph_xl"))
    return root / "expected_processed_annotations.json", root / "doc_mapping.csv"


def worsening_agreement(graph_rows: list[dict], truth: pd.DataFrame) -> tuple[set, set]:
    """(graph keys, truth keys) of worsened (study_id, anatomy) pairs, for precision / recall."""
    got = {(r["study_id"], r["anatomy"]) for r in graph_rows}
    want = set(zip(truth["study_id"], truth["anatomy"]))
    return got, want


def _truth_worsened(cohort: Path) -> pd.DataFrame:
    truth = pd.read_parquet(cohort / "ground_truth.parquet")
    return truth[(truth["finding"] == FINDING) & (truth["change"] == "worsened")]


def run_demo(console: Console, out: Path | None, patients: int, seed: int) -> None:
    from flows.cli import _print_rows, run_ingest
    from graph.config import local_server_settings, neo4j_settings
    from graph.queries import get_query, run_named
    from graph.server import LocalNeo4jServer
    from graph.stats import graph_stats
    from graph.store import shared_store
    from graph.synth import write_cohort

    if not neo4j_settings().external:
        console.rule("local Neo4j")
        server = LocalNeo4jServer(local_server_settings())
        server.start()
        console.print(f"running at {server.settings.bolt_uri}, data in {server.settings.data_dir}")

    cohort = out or local_server_settings().home / "demo" / f"cohort-{patients}-seed{seed}"
    console.rule(f"synthetic cohort: {patients} patients, seed {seed}")
    if not (cohort / "ground_truth.parquet").exists():
        console.print(write_cohort(cohort, patients=patients, seed=seed))
    else:
        console.print(f"reusing {cohort}")

    console.rule("ingest (Prefect flow)")
    sample, mapping = sample_paths()
    run_ingest([cohort, sample], mapping, Path(cohort) / "rejected.json", progress=False)

    truth = _truth_worsened(cohort)
    store = shared_store()
    worsening = get_query("worsening_findings")
    per_patient = {pid: run_named(store, worsening, {"patient_id": pid, "finding": FINDING})
                   for pid in sorted(truth["patient_id"].unique())}
    all_got, all_want = set(), set()
    exact = []
    for pid, rows in per_patient.items():
        got, want = worsening_agreement(rows, truth[truth["patient_id"] == pid])
        all_got |= got
        all_want |= want
        if got == want:
            exact.append((len(want), pid))
    patient = max(exact)[1] if exact else max(per_patient, key=lambda p: len(per_patient[p]))

    console.rule(f"worsening pleural effusions of patient {patient}")
    _print_rows(per_patient[patient], "table", list(worsening.columns), title="graph (cypher/worsening_findings.cypher)")
    t = truth[truth["patient_id"] == patient][["study_id", "prior_study_id", "anatomy", "finding", "change"]]
    _print_rows(t.to_dict("records"), "table", title="synthetic ground truth")
    hits = len(all_got & all_want)
    table = Table(title=f"cohort agreement, worsened {FINDING} (study, anatomy) pairs", show_header=False)
    table.add_row("in the graph", str(len(all_got)))
    table.add_row("in the ground truth", str(len(all_want)))
    table.add_row("precision", f"{hits / len(all_got):.3f}" if all_got else "n/a")
    table.add_row("recall", f"{hits / len(all_want):.3f}" if all_want else "n/a")
    table.add_row("patients answered exactly", f"{len(exact)} of {len(per_patient)}")
    console.print(table)
    console.print("Recall is below 1 by design: the synthetic reports state only some changes, with label noise.")

    console.rule("graph statistics")
    stats = graph_stats(store)
    rows = [{"label or type": k, "count": v} for k, v in {**stats["nodes"], **stats["relationships"]}.items()]
    _print_rows(rows, "table", title=f"{stats['total_nodes']} nodes, {stats['total_relationships']} relationships")
    if stats["orphans"]:
        console.print(f"orphans: {stats['orphans']}")
