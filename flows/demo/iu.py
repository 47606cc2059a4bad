"""The demo's section on real reports: the Indiana University chest X-ray reports (CC BY-NC-ND 4.0,
Demner-Fushman et al. 2016) extracted by the rules extractor, loaded, and their most frequent findings and
stated changes read back from the graph."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.console import counts_line
from flows.demo.loading import loaded_by

if TYPE_CHECKING:
    from rich.console import Console

    from flows.demo.inputs import Made


def iu_section(console: Console, out: Path, made: Made | None = None, loaded: Any = None) -> None:
    """Load the 3,955 IU reports' rules extraction (``made``: :func:`flows.demo.inputs.extract_iu_cached`'s
    outcome; None: extracted here) through the ingest flow, as ``cxrkg extract iu --ingest`` does, unless
    the bulk import loaded it (``loaded``: its summary), and print their most frequent present findings and
    stated changes; says why and skips when the IU wheel cannot be fetched or spaCy is missing."""
    from flows.demo.inputs import extract_iu_cached
    from flows.extract_flow import INGEST_BATCH_FILES
    from flows.ingest_flow import ingest_flow
    from graph.store import read_statements as rs
    from graph.store import shared_store

    console.rule("real reports: Indiana University chest X-rays (CC BY-NC-ND 4.0, Demner-Fushman et al. 2016)")
    made = made or extract_iu_cached(out)
    if made.skipped:
        console.print(f"skipped: {made.skipped}")
        return
    extraction = made.value
    if extraction.documents and loaded is None:
        ingest_flow([extraction.radgraph_dir], doc_mapping=extraction.doc_mapping, batch_files=INGEST_BATCH_FILES,
                    rejected_report=str(out / "rejected-ingest.json"))
    console.print(f"{extraction.documents:,} reports extracted, {len(extraction.rejections)} rejected "
                  f"({Path(extraction.rejected_report or '').name or 'none'}); each its own patient, "
                  "dates redacted", highlight=False)
    console.print(loaded_by(bool(loaded)), highlight=False)
    store = shared_store()
    console.print(counts_line("most frequent present findings (reports)", store.read(rs.IU_TOP_FINDINGS)[:6],
                              lambda r: r["finding"], "reports"), highlight=False)
    console.print(counts_line("most frequent stated changes (reports)", store.read(rs.IU_TOP_CHANGES)[:4],
                              lambda r: f"{r['finding']} {r['change']}", "reports"), highlight=False)
