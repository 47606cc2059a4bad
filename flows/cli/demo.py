"""``cxrkg demo``: the whole path on one machine, as a runnable example (``make demo``).

The command only reads its options and runs the demo's engine, :func:`flows.demo.run.run_demo` (the
sections, their order and what each prints are in :mod:`flows.demo`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from flows.cli.app import app
from flows.cli.common import console


@app.command()
def demo(out: Optional[Path] = typer.Option(None, help="the synthetic cohort's folder; the NIH and IU inputs are "
                                                        "kept beside it (default: CXRKG_HOME/demo/cohort-N-seedS)"),
         patients: int = typer.Option(200, min=2, help="patients of the synthetic cohort"),
         seed: int = typer.Option(7, help="the synthetic cohort's random seed (the same seed writes the same "
                                          "cohort)")) -> None:
    """Load NIH ChestX-ray14, a synthetic cohort with the real RadGraph-XL sample and the IU reports'
    extractions into Neo4j (one bulk import into an empty local database, else the ingest flow), then
    print a section per part: the synthetic cohort against its ground truth and its reports scored against
    the graph beside copy-prior, IU, NIH with Medical-Diff-VQA questions, the graph statistics, and the
    seconds of each part."""
    from flows.demo.run import run_demo  # the engine's modules load when the demo runs, not with `cxrkg --help`

    run_demo(console, out, patients, seed)
