"""The demo's synthetic cohort section: the cohort loaded (with the real RadGraph-XL sample), one patient's
worsening pleural effusions from the graph beside the ground truth, the cohort-wide precision and recall (by
the stated edges, then with a progression GNN's, :mod:`flows.demo.gnn`), and the cohort's reports scored
against the graph beside the copy-prior baseline (:func:`flows.demo.answers.baseline_lines`), then one patient's
cardiothoracic ratio over time from the anatomy boxes (:mod:`flows.demo.geometry`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.console import print_rows, print_summary_line
from flows.demo.loading import ingest_part, loaded_by, sample_paths

if TYPE_CHECKING:  # pandas and the driver load inside the sections: the quick commands never need them
    import threading

    import pandas as pd
    from rich.console import Console

    from flows.demo.gnn import CohortWorsenings
    from flows.demo.inputs import Made
    from flows.demo.part_times import PartTimes

FINDING = "pleural effusion"


def worsening_agreement(graph_rows: list[dict], truth: pd.DataFrame) -> tuple[set, set, set]:
    """(graph, truly worsened, truly worsened or new) (study_id, anatomy) pairs of one finding.

    Precision counts a graph worsening as right when the truth is worsened or new: Chest ImaGenome's
    comparison vocabulary has only improved / worsened / no change, so a finding that appears is
    "worsened" there. Recall is over the truly worsened pairs.
    """
    got = {(r["study_id"], r["anatomy"]) for r in graph_rows}
    worse = truth[truth["change"] == "worsened"]
    up = truth[truth["change"].isin(["worsened", "new"])]
    return got, set(zip(worse["study_id"], worse["anatomy"], strict=True)), set(zip(up["study_id"], up["anatomy"], strict=True))


def _truth(cohort: Path) -> pd.DataFrame:
    import pandas as pd

    truth = pd.read_parquet(cohort / "ground_truth.parquet")
    return truth[truth["finding"] == FINDING]


def cohort_load_section(console: Console, cohort: Path, written: Made | None, loaded: Any,
                        prefect_api: threading.Thread) -> None:
    """Say how the cohort came (``written``: its writer's outcome, :func:`flows.demo.inputs.write_cohort_line`;
    None: reused from an earlier run), then load it with the RadGraph-XL sample through the ingest flow unless
    the bulk import did (``loaded``: its summary), and say which way it went."""
    if written is None:
        console.print(f"reusing {cohort}")
    else:
        console.print(written.value, highlight=False)
    console.rule("ingest (Prefect flow)")
    if loaded:
        print_summary_line(loaded)
    else:
        prefect_api.join()
        sample, mapping = sample_paths()
        ingest_part([cohort, sample], mapping, cohort / "rejected.json")
    console.print(loaded_by(bool(loaded)), highlight=False)


def cohort_answers(console: Console, cohort: Path, times: PartTimes) -> None:
    """The cohort's answers, each a part of ``times``: the worsening query, the same with the GNN's edges, the
    report scoring and the geometry queries (:mod:`flows.demo.geometry`)."""
    with times.part("worsening query"):
        worsenings = worsening_section(console, cohort)
    with times.part("worsening GNN"):
        from flows.demo.gnn import worsening_lines

        for line in worsening_lines(cohort, worsenings, FINDING):
            console.print(line, highlight=False, markup=False)  # "cxrkg[gnn]" as written
    with times.part("report scoring"):
        from flows.demo.answers import baseline_lines
        from graph.store import shared_store

        console.print("the cohort's own reports scored against the graph, beside copy-prior (each study's prior "
                      "report as its report; `cxrkg eval reports --baseline`):")
        for line in baseline_lines(shared_store(), cohort):
            console.print(line, highlight=False)
    with times.part("geometry queries"):
        from flows.demo.geometry import geometry_section

        geometry_section(console, cohort)


def worsening_section(console: Console, cohort: Path) -> CohortWorsenings:
    """One patient's worsening pleural effusions beside the ground truth, and the cohort's agreement."""
    from flows.demo.answers import figure
    from flows.demo.gnn import CohortWorsenings, precision_recall
    from graph.store import shared_store

    truth = _truth(cohort)
    per_patient = _worsenings(shared_store(), sorted(truth.loc[truth["change"] == "worsened", "patient_id"].unique()))
    got_all: set[tuple[str, str]] = set()
    worse_all: set[tuple[str, str]] = set()
    up_all: set[tuple[str, str]] = set()
    exact = []
    for pid, rows in per_patient.items():
        got, worse, up = worsening_agreement(rows, truth[truth["patient_id"] == pid])
        got_all, worse_all, up_all = got_all | got, worse_all | worse, up_all | up
        if got == worse:
            exact.append((len(worse), pid))
    patient = max(exact)[1] if exact else max(per_patient, key=lambda p: len(per_patient[p]))

    console.rule(f"worsening pleural effusions of patient {patient}")
    t = truth[truth["patient_id"] == patient]
    said = {(r.study_id, r.anatomy): r.change for r in t.itertuples()}
    rows = [{**r, "truth": said.get((r["study_id"], r["anatomy"]), "-")} for r in per_patient[patient]]
    print_rows(rows, "table", ["study_id", "prior_study_id", "anatomy", "sources", "truth", "evidence"],
               title="graph (cypher/worsening_findings.cypher) beside the synthetic ground truth", wrap=False)
    precision, recall = precision_recall(got_all, worse_all, up_all)
    console.print(f"cohort, worsened {FINDING} per (study, anatomy): {len(got_all)} in the graph, {len(worse_all)} "
                  f"true; precision {figure(precision)}, recall {figure(recall)} (reports state only some changes, "
                  "~10% noise)", highlight=False)
    return CohortWorsenings(list(per_patient), got_all, worse_all, up_all)


def _worsenings(store, patients: list[str]) -> dict[str, list[dict]]:
    """Each patient's worsenings of the finding at anatomy level (the ground truth is per study and anatomy)."""
    from graph.store.queries import get_query, run_named

    worsening = get_query("worsening_findings")
    return {pid: run_named(store, worsening, worsening.bind({"patient_id": pid, "finding": FINDING,
                                                            "level": "anatomy"}))
            for pid in patients}
