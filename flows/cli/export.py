"""``cxrkg export snapshot --out DIR``, ``cxrkg export lunguage --out FILE.csv`` and ``cxrkg export pairs --out
FILE.csv``: the graph written out.

``cxrkg export --out DIR`` (the snapshot command before ``export`` became a group) still works for one
release, with a one-line notice of the new name.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from flows.cli.app import command_group
from flows.cli.common import console, err, existing, fail, store_or_fail

if TYPE_CHECKING:
    from graph.store import GraphStore

export_app = command_group("export", "Write the graph out: a training snapshot, Lunguage rows, or progression pairs in "
                                     "MS-CXR-T's columns.", no_args_is_help=False)

@export_app.callback(invoke_without_command=True)
def _old_snapshot_form(ctx: typer.Context,
                       out: Optional[Path] = typer.Option(None, "--out", hidden=True),
                       embeddings: Optional[Path] = typer.Option(None, "--embeddings", callback=existing, dir_okay=False,
                                                                 hidden=True)) -> None:
    # `cxrkg export --out DIR` named the snapshot before `export lunguage` joined it; kept one release
    if ctx.invoked_subcommand is not None:
        if out is not None or embeddings is not None:
            fail(f"give --out after the subcommand: `cxrkg export {ctx.invoked_subcommand} --out ...`")
        return
    if out is None:
        console.print(ctx.get_help())
        raise typer.Exit(0)
    err.print("notice: `cxrkg export --out DIR` is now `cxrkg export snapshot --out DIR`; the old form goes in the "
              "next release", highlight=False)
    snapshot(out, embeddings)


@export_app.command("snapshot")
def snapshot(out: Path = typer.Option(..., "--out", help="snapshot folder (parquet tables + manifest.json)"),
             embeddings: Optional[Path] = typer.Option(None, "--embeddings", callback=existing, dir_okay=False,
                                                       help="per (image, region) embeddings parquet to include")) -> None:
    """Export the graph to a versioned snapshot for training and forecasting (read transactions, streamed
    by patient)."""
    from gnn.export import export_snapshot

    manifest = export_snapshot(store_or_fail(), out, embeddings)
    console.print(f"snapshot {manifest.content_hash[:16]} -> {out} in {manifest.seconds:.1f} s: "
                  + ", ".join(f"{k} {v}" for k, v in manifest.rows.items()))


class Role(str, Enum):
    """What the export is for, in LUNGUAGESCORE's terms (graph.longitudinal.sequential_reports.ROLES)."""

    gold = "gold"
    prediction = "prediction"


@export_app.command("lunguage")
def lunguage(out: Path = typer.Option(..., "--out", dir_okay=False, help="the CSV to write"),
             role: Role = typer.Option(Role.gold, "--role", help="gold: the benchmark's columns (gt_entity_group, "
                                       "gt_temporal_group); prediction: the group columns as LUNGUAGESCORE reads "
                                       "a prediction (entity_group, temporal_group)")) -> None:
    """Every mention with a state as a Lunguage row (subject_id, study_id, sequence, ent, dx_status,
    dx_certainty, location, severity, onset, improved, worsened, no change, ..., gt_entity_group,
    gt_temporal_group, episode): Lunguage mentions keep their own groups; the others are grouped by region and
    finding, with their derived episodes. `cxrkg eval episodes` reads it (role gold), LUNGUAGESCORE as gold or
    prediction; a last column, cxrkg_export, marks it as the graph's own statements, which `cxrkg ingest`
    refuses as a source."""
    from graph.store import shared_store

    if not out.parent.is_dir():
        fail(f"cannot write {out}: folder {out.parent} does not exist")
    rows = export_lunguage(shared_store(), out, role.value)
    console.print(f"{rows:,} Lunguage rows written to {out} (role {role.value})", highlight=False)


def export_lunguage(store: GraphStore, out: Path, role: str = "gold") -> int:
    """Write the whole graph's sequential structured reports to ``out`` as a Lunguage CSV marked as an export
    (:func:`graph.longitudinal.sequential_reports.lunguage_rows` over the graph's mentions and derived
    anatomy-level episodes, in the columns of :func:`~graph.longitudinal.sequential_reports.export_table` for
    ``role``, then :data:`graph.formats.lunguage.EXPORT_COLUMN`).

    Returns:
        The number of rows written.

    Raises:
        OSError: ``out`` cannot be written.
        ValueError: an unknown role.
        graph.store.GraphUnavailable: the graph cannot be read.
    """
    import pandas as pd

    from graph.formats.lunguage import EXPORT_COLUMN, EXPORT_MARK
    from graph.longitudinal.sequential_reports import export_table, lunguage_rows
    from graph.store import read_statements as rs
    from graph.vocabulary import vocabulary

    categories = {f.name: f.category for f in vocabulary().findings.values()}
    rows = lunguage_rows(store.read(rs.LUNGUAGE_MENTIONS), store.read(rs.DERIVED_ANATOMY_EPISODES), categories)
    header, cells = export_table(rows, role)
    frame = pd.DataFrame(cells, columns=header)
    frame[EXPORT_COLUMN] = EXPORT_MARK
    frame.to_csv(out, index=False)
    return len(rows)


class PairClasses(str, Enum):
    """``--classes``: MS-CXR-T's three (improving, stable, worsening) or CheXTemporal's five."""

    three = "3"
    five = "5"


@export_app.command("pairs")
def pairs(out: Path = typer.Option(..., "--out", dir_okay=False, help="the CSV to write"),
          findings: Optional[str] = typer.Option(None, "--findings", help="comma-separated findings: MS-CXR-T's "
                                                 "(consolidation, edema, pleural_effusion, pneumonia, pneumothorax; "
                                                 "the default) or vocabulary Finding names"),
          classes: PairClasses = typer.Option(PairClasses.three, "--classes", help="3: improving, stable, "
                                              "worsening (MS-CXR-T); 5: new, worsened, stable, improved, resolved "
                                              "(CheXTemporal)"),
          stated_only: bool = typer.Option(False, "--stated-only", help="only the changes a source states: leave "
                                           "labels derived from presence out")) -> None:
    """Every consecutive study pair of a patient as a row in MS-CXR-T's columns (dicom_id, previous_dicom_id,
    study_id, previous_study_id, subject_id, <finding>_progression) with each label's source and basis
    (stated or derived) in columns of their own; pairs whose order or patient is in doubt are left out and
    counted. The image of a study is its first frontal image by image id, else its first image."""
    from graph.temporal.pairs import export_pairs, resolve_findings
    from graph.vocabulary import vocabulary

    if not out.parent.is_dir():
        fail(f"cannot write {out}: folder {out.parent} does not exist")
    names = None if findings is None else [n for n in findings.split(",") if n.strip()]
    chosen = resolve_findings(names, (f.name for f in vocabulary().findings.values()))
    summary = export_pairs(store_or_fail(), out, chosen, int(classes.value), stated_only)
    console.print(f"{out}: {summary.line()}", highlight=False)
