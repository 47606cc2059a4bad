"""How each part of the demo gets into the graph: into an empty local database, all of them in one bulk import
(:func:`first_load`); else (``NEO4J_URI`` names another server, or the graph holds data) each section loads its
own part through the transactional ingest flow (:func:`ingest_part`). Each section says which way its part
went (:func:`loaded_by`)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.console import print_summary_line

if TYPE_CHECKING:
    import threading

    from flows.demo.inputs import DemoInputs
    from flows.demo.part_times import PartTimes

TRANSACTIONAL = ("transactional ingest (Prefect flow), the fastest way for a part this small or a graph that "
                 "holds data")
BULK = "bulk import (neo4j-admin database import), the fastest way into an empty database"


def loaded_by(bulk: bool) -> str:
    """The line that says which way a part was loaded: the bulk import or the transactional ingest flow."""
    return f"loaded by: {BULK if bulk else TRANSACTIONAL}"


def sample_paths() -> tuple[Path, Path]:
    """The shipped RadGraph-XL sample (MIT, Stanford-AIMI) and its doc mapping CSV."""
    root = Path(str(resources.files("graph") / "samples" / "radgraph_xl"))
    return root / "expected_processed_annotations.json", root / "doc_mapping.csv"


@dataclass
class NihAhead:
    """The NIH part converted and bulk-loaded before the other parts (see :func:`first_load`)."""

    converted: Any  # graph.datasets.nih.convert.NIHSummary (kept from an earlier demo's conversion or made now)
    loaded: Any  # flows.ingest_flow.IngestSummary


@dataclass
class FirstLoad:
    """What :func:`first_load` bulk-imported: each part's own summary, None for a part it did not load."""

    nih: NihAhead | None
    cohort: Any  # flows.ingest_flow.IngestSummary (the cohort and the RadGraph-XL sample)
    iu: Any  # flows.ingest_flow.IngestSummary (the IU extraction's shards)


def first_load(cohort: Path, reuse: bool, fresh: bool, inputs: DemoInputs, times: PartTimes,
               prefect_api: threading.Thread) -> FirstLoad | None:
    """Every part into the empty local database in one bulk import (:func:`flows.bulk_flow.bulk_ingest_flow`
    with several inputs, each of its own doc mapping: one files stage, one ``neo4j-admin database import``,
    one start, one schema step), the NIH cohort (112,120 files, written by the workers) first, the cohort
    with the RadGraph-XL sample and the IU extraction in turn beside it.

    Args:
        cohort: the synthetic cohort's folder; the NIH and IU inputs are beside it.
        reuse: the cohort was written by an earlier run (no job makes it).
        fresh: the local home has no database yet (the import makes it and starts the server).
        inputs: the inputs being made (waited for here, each noted in ``times``).
        times: the demo's part times.
        prefect_api: the thread starting Prefect's API server, joined before the flow runs.

    Returns:
        Each part's summary; None (each section then loads its part transactionally, or says why it skips
        it) when NEO4J_URI names another server or the graph holds data. A part whose input cannot be made
        (the wheel cannot be fetched) is left out.
    """
    from flows.bulk_flow import BulkRefused, bulk_ingest_flow
    from graph.settings import neo4j_settings
    from graph.store import shared_store

    if neo4j_settings().external or not (fresh or not shared_store().holds_data()):
        return None
    if not reuse:
        times.beside("synthetic cohort", inputs.get("cohort"))
    nih = times.beside("NIH conversion", inputs.get("nih"))
    iu = times.beside("IU extraction", inputs.get("iu"))
    sample, mapping = sample_paths()
    parts: dict[str, tuple[list[str], str | None]] = {"cohort": ([str(cohort), str(sample)], str(mapping))}
    if not nih.skipped:
        parts = {"nih": ([str(cohort.parent / "nih")], None), **parts}
    if not iu.skipped and iu.value.documents:
        parts["iu"] = ([iu.value.radgraph_dir], iu.value.doc_mapping)
    (paths, doc_mapping), *also = parts.values()
    prefect_api.join()
    try:
        loaded = bulk_ingest_flow(paths, doc_mapping=doc_mapping, also=also,
                                  rejected_report=str(cohort.parent / "demo-rejected.json"))
    except BulkRefused:
        return None
    each = dict(zip(parts, loaded.inputs or [loaded], strict=True))
    return FirstLoad(NihAhead(nih.value, each["nih"]) if "nih" in each else None, each["cohort"], each.get("iu"))


def ingest_part(paths: list[Path], doc_mapping: Path | None, rejected: Path) -> None:
    """Load one part through the transactional ingest flow and print its summary line (then its rejections).

    Raises:
        graph.store.GraphUnavailable: Neo4j cannot be used (before the flow starts).
    """
    from flows.ingest_flow import ingest_flow
    from graph.store import shared_store

    shared_store()
    summary = ingest_flow([str(p) for p in paths], doc_mapping=str(doc_mapping) if doc_mapping else None,
                          rejected_report=str(rejected), progress=False)
    print_summary_line(summary)
