"""``cxrkg synth``, ``cxrkg ingest`` and ``cxrkg datasets iu|nih``: data in."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from flows.cli.app import app, command_group
from flows.cli.common import WORKERS_HELP, console, existing, fail, rejected_option, report_path, run_ingest
from graph.errors import ExitCode


@app.command()
def synth(patients: int = typer.Option(200, min=1, help="patients to generate"),
          seed: int = typer.Option(0, help="random seed; the same seed writes the same files"),
          out: Path = typer.Option(..., help="output folder"),
          malformed: int = typer.Option(0, min=0, help="extra malformed files to write (malformed/)"),
          embeddings: bool = typer.Option(False, help="also write per (image, region) embeddings"),
          sparse: bool = typer.Option(False, help="state every present finding and nothing else, as real "
                                                  "reports do (no absences, hedges or omissions)"),
          mean_studies: Optional[float] = typer.Option(None, min=1.01, max=7.99, help="studies per patient on "
                                                       "average (default ~4.8; MIMIC-CXR: 3.48)")) -> None:
    """Write a synthetic cohort in Chest ImaGenome and RadGraph formats, with its ground truth."""
    from graph.synth import write_cohort

    summary = write_cohort(out, patients=patients, seed=seed, malformed=malformed, embeddings=embeddings,
                           sparse=sparse, mean_studies=mean_studies)
    console.print(summary.line(), highlight=False)



@app.command()
def ingest(paths: list[Path] = typer.Argument(..., callback=existing, help="files or folders, searched recursively"),
           doc_mapping: Optional[Path] = typer.Option(None, callback=existing, dir_okay=False,
                                                      help="CSV of doc_key, patient_id, study_id and optionally "
                                                           "study_datetime"),
           rejected: Optional[Path] = rejected_option(),
           progress: bool = typer.Option(True, help="progress bar"),
           batch_files: int = typer.Option(500, min=1, help="files per load batch (one write transaction each)"),
           bulk: bool = typer.Option(False, help="first load into the empty local database through neo4j-admin "
                                                 "import (stops and restarts the local server)"),
           workers: Optional[int] = typer.Option(None, min=0, help=WORKERS_HELP),
           dask_address: Optional[str] = typer.Option(None, help="--bulk: write the import files on an existing "
                                                      "Dask scheduler (tcp://host:8786) that sees the same "
                                                      "paths"),
           also: Optional[list[str]] = typer.Option(None, help="--bulk: another input in the same import "
                                                    "(repeatable): PATH,PATH,... with =DOC_MAPPING.csv after "
                                                    "the last path when it has a doc mapping; inputs share "
                                                    "no patient")) -> None:
    """Load scene graphs, RadGraph files and metadata CSVs; exit code 6 when anything was rejected. With
    `--bulk`, the import files are written by `--workers` processes (default one per core) or on the Dask
    cluster at `--dask-address`."""
    if (workers is not None or dask_address or also) and not bulk:
        fail("--workers, --dask-address and --also choose what `cxrkg ingest --bulk` imports and where it writes "
             "its import files; add --bulk")
    engine = {"workers": workers, "dask_address": dask_address, "also": also_inputs(also or [])} if bulk else {}
    summary = run_ingest(paths, doc_mapping, report_path(rejected, "ingest"), progress and sys.stderr.isatty(), bulk,
                         batch_files, engine=engine)
    if not summary.ok:
        raise typer.Exit(ExitCode.REJECTED)



def also_inputs(texts: list[str]) -> list[tuple[list[str], str | None]]:
    """``--also`` values, ``PATH[,PATH...][=DOC_MAPPING.csv]`` (split at the last ``=``), as the bulk flow's
    ``also`` (paths, doc mapping); a path that does not exist ends the command (exit code 1, naming it)."""
    out: list[tuple[list[str], str | None]] = []
    for text in texts:
        paths, _, mapping = text.rpartition("=") if "=" in text else (text, "", "")
        named = [p for p in paths.split(",") if p]
        for path in [*named, mapping] if mapping else named:
            if not Path(path).exists():
                fail(f"--also {text}: {path} does not exist")
        if not named:
            fail(f"--also {text}: no input path")
        out.append((named, mapping or None))
    return out


datasets_app = command_group("datasets", "Public datasets cxrkg can fetch.")


@datasets_app.command("iu")
def datasets_iu(out: Path = typer.Option(..., help="folder for the torchxrayvision 1.5.7 wheel")) -> None:
    """Fetch the Indiana University chest X-ray reports (3,955, CC BY-NC-ND 4.0, Demner-Fushman et al.,
    JAMIA 2016) inside the torchxrayvision 1.5.7 wheel from the package registry, checked by sha256."""
    from graph.datasets.iu import IUReport, iter_reports
    from graph.datasets.wheel import fetch_wheel

    wheel = fetch_wheel(out)  # WheelUnavailable: one error line
    reports = sum(1 for r in iter_reports(wheel) if isinstance(r, IUReport))
    console.print(f"{wheel}: {reports} reports")


@datasets_app.command("nih")
def datasets_nih(out: Path = typer.Option(..., help="folder for the scene graphs, metadata.csv and README.md"),
                 cache: Optional[Path] = typer.Option(None, help="torchxrayvision wheel cache (default CXRKG_IU_CACHE)"),
                 patients: Optional[int] = typer.Option(None, min=1, help="only the N lowest patient ids")) -> None:
    """Convert NIH ChestX-ray14 (112,120 images, Wang et al., CVPR 2017) and Google's adjudicated labels
    (Majkowska et al., Radiology 2020) from the torchxrayvision 1.5.7 wheel into Chest ImaGenome-format scene
    graphs plus metadata.csv. Dates are synthetic; only their order is NIH's."""
    from graph.datasets.nih.convert import (
        ATTRIBUTION,
        SYNTHETIC_DATES_NOTE,
        convert_nih,
        locate_wheel,
    )

    summary = convert_nih(out, locate_wheel(cache=cache), patients)  # DatasetUnavailable: one error line
    table = Table(title=f"NIH ChestX-ray14 -> {summary.out}")
    table.add_column("item")
    table.add_column("count", justify="right")
    for name, value in (("images (= studies = scene graph files)", summary.images), ("patients", summary.patients),
                        ("patients with >= 2 studies", summary.longitudinal_patients), ("boxes", summary.boxes),
                        ("images with adjudicated labels", summary.adjudicated_images),
                        ("rejected rows", len(summary.rejections))):
        table.add_row(name, f"{value:,}")
    console.print(table)
    for r in summary.rejections[:10]:
        console.print(f"rejected: {r.file}: record {r.record}, field {r.field}: {r.reason}", markup=False,
                      soft_wrap=True)
    console.print(SYNTHETIC_DATES_NOTE, markup=False, soft_wrap=True)
    console.print(ATTRIBUTION, markup=False, soft_wrap=True)
