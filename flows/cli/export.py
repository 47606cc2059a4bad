"""``cxrkg export lunguage --out FILE.csv``: the graph's sequential structured reports as a Lunguage CSV."""

from __future__ import annotations

from pathlib import Path

import typer

from flows.cli.app import app
from flows.cli.common import console, fail

export_app = typer.Typer(no_args_is_help=True, help="Write the graph out in other formats.")
app.add_typer(export_app, name="export")


@export_app.command("lunguage")
def lunguage(out: Path = typer.Option(..., "--out", dir_okay=False, help="the CSV to write")) -> None:
    """Every mention with a state as a Lunguage row (subject_id, study_id, sequence, ent, dx_status,
    dx_certainty, location, severity, onset, improved, worsened, no change, ..., gt_entity_group,
    gt_temporal_group): Lunguage mentions keep their own groups; the others are grouped by region and
    finding, with their derived episodes. `cxrkg eval-episodes` and LUNGUAGESCORE read it."""
    from graph.sequential_reports import export_lunguage
    from graph.store import shared_store

    if not out.parent.is_dir():
        fail(f"cannot write {out}: folder {out.parent} does not exist")
    rows = export_lunguage(shared_store(), out)
    console.print(f"{rows:,} Lunguage rows written to {out}", highlight=False)
